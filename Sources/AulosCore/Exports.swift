// The render ABI (time stamps, buffer lists, render flags, callback signatures) is part of AulosCore's
// public vocabulary; re-export it so users of AulosCore need not import the C module themselves.
@_exported import CAulosRender

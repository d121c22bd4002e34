extension StringProtocol {
    /// At most `length` characters, with "…" when there were more: hostile input echoed in a one-line error
    /// stays one short line.
    public func clipped(_ length: Int) -> String { count > length ? prefix(length) + "…" : String(self) }
}

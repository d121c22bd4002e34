/// Where a part or a control mapping was read from (`stage.yaml:12`), so an error found only when the rig
/// is built — a SoundFont that is not there, a control aimed at no part — still names the file and line a
/// person must edit. Not part of what a rig is: two rigs that say the same are equal wherever they were
/// read from, and a rig made in code has the location `.none`.
///
/// Threads: a value.
public struct SourceLocation: Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int

    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    /// Not read from a file.
    public static let none = SourceLocation(file: "", line: 0)

    public var description: String { file.isEmpty ? "(not from a file)" : "\(file):\(line)" }

    /// "stage.yaml:12: " before a message, or nothing for a rig made in code.
    var prefix: String { file.isEmpty ? "" : "\(self): " }

    public static func == (_: SourceLocation, _: SourceLocation) -> Bool { true }
}

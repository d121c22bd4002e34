/// Rigs recalled by MIDI: program changes (with bank select) on the control channel switch between them,
/// like a synth's patch memory. A set file lists rig files by program number (docs/rigs.md); a plain rig
/// file is a set of one. All of a set's rigs are loaded up front, so a switch only reroutes MIDI: notes
/// still held keep sounding on the rig that started them, and nothing is built while the audio runs.
///
/// Threads: control side.
public struct RigSet: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        /// Bank select (CC 0 · 128 + CC 32) and program number that recall this rig.
        public var bank: Int
        public var program: Int
        public var rig: Rig
        /// The rig file as the set names it (relative to the set's folder, or absolute); nil for a plain
        /// rig file, which is its own set.
        public var file: String?
    }

    public var name: String
    /// 1…16: program changes and bank selects on this channel switch rigs and are not played.
    public var controlChannel: Int?
    public var entries: [Entry]
    /// The web panel and OSC for live play: the set file's, or a plain rig file's own.
    public var servers = LiveServers()

    public init(_ rig: Rig) {
        name = rig.name
        servers = rig.servers
        entries = [Entry(bank: 0, program: 0, rig: rig)]
    }

    public init(name: String, controlChannel: Int?, entries: [Entry]) {
        self.name = name
        self.controlChannel = controlChannel
        self.entries = entries
    }

    public var rigs: [Rig] { entries.map(\.rig) }

    /// The entry a bank and program recall, if any.
    public func index(bank: Int, program: Int) -> Int? {
        entries.firstIndex { $0.bank == bank && $0.program == program }
    }
}

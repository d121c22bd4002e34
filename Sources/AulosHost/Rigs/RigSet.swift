import AulosCore
import Yams

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
    }

    public var name: String
    /// 1…16: program changes and bank selects on this channel switch rigs and are not played.
    public var controlChannel: Int?
    public var entries: [Entry]
    /// Read from a set file (with `rigs:`), not a rig file taken as a set of one.
    public var isSetFile = false

    public init(_ rig: Rig) {
        name = rig.name
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

    /// Reads a set file, or a rig file as a set of one. Errors name the file, line and key (a listed
    /// rig's own errors name that rig's file).
    public static func load(_ path: String) throws(AudioUnitError) -> RigSet {
        guard let bytes = ScriptedRender.readFile(path), let text = String(validating: bytes, as: UTF8.self) else {
            throw AudioUnitError(.invalidFile, "\(path): cannot read the rig file")
        }
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch { return RigSet(try Rig(yaml: text, file: path)) }
        guard let mapping = root?.mapping, mapping["rigs"] != nil else { return RigSet(try Rig(yaml: text, file: path)) }
        let reader = RigReader(file: path)
        let keys = try reader.keys(mapping, allowed: ["name", "control-channel", "rigs"], at: "")
        let name = try keys["name"].map { node throws(AudioUnitError) in try reader.string(node, "name") } ?? path
        let channel = try keys["control-channel"].map { node throws(AudioUnitError) in Int(try reader.number(node, "control-channel", in: 1...16)) }
        guard let list = keys["rigs"]?.sequence, !list.isEmpty else {
            throw reader.error(keys["rigs"]!, "rigs", "must be a list of {program, rig}")
        }
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        var entries: [Entry] = []
        for (index, item) in list.enumerated() {
            let at = "rigs[\(index)]"
            guard let itemMapping = item.mapping else { throw reader.error(item, at, "must be a mapping with program and rig") }
            let itemKeys = try reader.keys(itemMapping, allowed: ["bank", "program", "rig"], at: at + ".")
            guard let programNode = itemKeys["program"] else { throw reader.error(item, at, "missing 'program' (0…127)") }
            guard let rigNode = itemKeys["rig"] else { throw reader.error(item, at, "missing 'rig' (a rig file, relative to this one)") }
            let program = Int(try reader.number(programNode, at + ".program", in: 0...127))
            let bank = try itemKeys["bank"].map { node throws(AudioUnitError) in Int(try reader.number(node, at + ".bank", in: 0...16383)) } ?? 0
            let file = try reader.string(rigNode, at + ".rig")
            let rig: Rig
            do {
                rig = try Rig.load(resolve(file, in: folder))
            } catch {
                // A set file fails as a rig (no 'parts'); say what it is rather than which key is wrong.
                if (try? RigSet.load(resolve(file, in: folder)))?.isSetFile == true {
                    throw reader.error(rigNode, at + ".rig", "'\(file)' is itself a set; a set lists rig files")
                }
                throw error
            }
            guard !entries.contains(where: { $0.bank == bank && $0.program == program }) else {
                throw reader.error(programNode, at + ".program", "bank \(bank) program \(program) is already taken")
            }
            entries.append(Entry(bank: bank, program: program, rig: rig))
        }
        let totalParts = entries.reduce(0) { $0 + $1.rig.parts.count }
        guard totalParts <= PlaybackRig.maximumParts else {
            throw reader.error(keys["rigs"]!, "rigs", "\(totalParts) parts in all; a set holds at most \(PlaybackRig.maximumParts)")
        }
        var set = RigSet(name: name, controlChannel: channel, entries: entries)
        set.isSetFile = true
        return set
    }

    static func resolve(_ file: String, in folder: String) -> String {
        file.hasPrefix("/") ? file : folder + "/" + file
    }
}

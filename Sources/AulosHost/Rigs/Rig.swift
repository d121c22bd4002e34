import AulosCore
import AulosUnits
import Yams

#if canImport(Glibc)
import Glibc
#endif

/// A rig: the whole playing setup as a file a person can read and edit (YAML, documented in docs/rigs.md).
/// Instruments ("parts") with their MIDI channels and sounds, each on a mixer bus with volume and pan (and
/// optionally its own EQ), then the output volume and a master EQ.
///
/// Threads: control side.
public struct Rig: Equatable, Sendable {
    public struct Part: Equatable, Sendable {
        public var name: String
        public var instrument: InstrumentChoice
        /// MIDI channels 1…16 whose events this part plays.
        public var channels: [Int]
        /// Synth preset (name or number).
        public var preset: String?
        /// Program: for the synth a preset number, for the sampler sent to the part's channels at the start.
        public var program: Int?
        /// Sampler SoundFont path; nil uses the bundled font.
        public var soundFont: String?
        public var volume: Float = 1
        public var pan: Float = 0
        public var enabled = true
        /// An iPod-style EQ preset for this part alone.
        public var eq: String?
        /// The notes this part plays (a split or a layer's range); others pass it by.
        public var keys: ClosedRange<Int> = 0...127
        /// Semitones added to every note this part plays.
        public var transpose = 0
        public var velocity = VelocityCurve.linear

        public init(name: String, instrument: InstrumentChoice, channels: [Int]) {
            self.name = name
            self.instrument = instrument
            self.channels = channels
        }
    }

    public var name: String
    public var sampleRate = 48_000.0
    public var slice: UInt32 = 256
    public var volume: Float = 1
    /// Master iPod-style EQ preset.
    public var eq: String?
    public var parts: [Part]
    /// Controllers routed to unit parameters while this rig plays.
    public var controls: [ControlMapping] = []

    public init(name: String, parts: [Part]) {
        self.name = name
        self.parts = parts
    }

    // MARK: Reading

    /// Reads a rig file. Every error names the file, the line and the key.
    public static func load(_ path: String) throws(AudioUnitError) -> Rig {
        guard let bytes = ScriptedRender.readFile(path), let text = String(validating: bytes, as: UTF8.self) else {
            throw AudioUnitError(.invalidFile, "\(path): cannot read the rig file")
        }
        return try Rig(yaml: text, file: path)
    }

    public init(yaml text: String, file: String = "rig") throws(AudioUnitError) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw AudioUnitError(.invalidFile, "\(file): \(Self.describe(error))")
        } catch {
            throw AudioUnitError(.invalidFile, "\(file): \(error)")
        }
        guard let root, let mapping = root.mapping else {
            throw AudioUnitError(.invalidFile, "\(file):1: a rig is a mapping with at least 'parts'")
        }
        let reader = RigReader(file: file)
        let keys = try reader.keys(mapping, allowed: ["name", "sample-rate", "slice", "output", "parts", "controls"], at: "")
        self.name = try keys["name"].map { node throws(AudioUnitError) in try reader.string(node, "name") } ?? file
        if let node = keys["sample-rate"] { sampleRate = try reader.number(node, "sample-rate", in: 8000...192_000) }
        if let node = keys["slice"] { slice = UInt32(try reader.number(node, "slice", in: 1...4096)) }
        if let output = keys["output"] {
            guard let outputMapping = output.mapping else { throw reader.error(output, "output", "must be a mapping (volume, eq)") }
            let outputKeys = try reader.keys(outputMapping, allowed: ["volume", "eq"], at: "output.")
            if let node = outputKeys["volume"] { volume = Float(try reader.number(node, "output.volume", in: 0...2)) }
            if let node = outputKeys["eq"] { eq = try reader.eqPreset(node, "output.eq") }
        }
        guard let partsNode = keys["parts"] else {
            throw AudioUnitError(.invalidFile, "\(file):\((root.mark?.line ?? 1)): missing 'parts'")
        }
        guard let sequence = partsNode.sequence, !sequence.isEmpty else {
            throw reader.error(partsNode, "parts", "must be a list of at least one part")
        }
        var parts: [Part] = []
        for (index, node) in sequence.enumerated() {
            let at = "parts[\(index)]"
            guard let partMapping = node.mapping else { throw reader.error(node, at, "must be a mapping") }
            let partKeys = try reader.keys(partMapping, allowed: ["name", "instrument", "channels", "preset", "program", "soundfont",
                                                                  "volume", "pan", "enabled", "eq", "keys", "transpose", "velocity"],
                                           at: at + ".")
            guard let instrumentNode = partKeys["instrument"] else { throw reader.error(node, at, "missing 'instrument' (synth or sampler)") }
            let instrumentName = try reader.string(instrumentNode, at + ".instrument")
            guard let instrument = InstrumentChoice(rawValue: instrumentName) else {
                throw reader.error(instrumentNode, at + ".instrument", "unknown instrument '\(instrumentName)' (synth, sampler)")
            }
            var channels = Array(1...16)
            if let channelsNode = partKeys["channels"] {
                let list = channelsNode.sequence.map(Array.init) ?? [channelsNode]
                channels = []
                for item in list {
                    channels.append(Int(try reader.number(item, at + ".channels", in: 1...16)))
                }
            }
            var part = Part(name: try partKeys["name"].map { n throws(AudioUnitError) in try reader.string(n, at + ".name") } ?? "\(instrumentName) \(index + 1)",
                            instrument: instrument, channels: channels)
            if let n = partKeys["preset"] { part.preset = try reader.string(n, at + ".preset") }
            if let n = partKeys["program"] { part.program = Int(try reader.number(n, at + ".program", in: 0...127)) }
            if let n = partKeys["soundfont"] { part.soundFont = try reader.string(n, at + ".soundfont") }
            if let n = partKeys["volume"] { part.volume = Float(try reader.number(n, at + ".volume", in: 0...2)) }
            if let n = partKeys["pan"] { part.pan = Float(try reader.number(n, at + ".pan", in: -1...1)) }
            if let n = partKeys["enabled"] {
                guard let flag = n.bool else { throw reader.error(n, at + ".enabled", "must be true or false") }
                part.enabled = flag
            }
            if let n = partKeys["eq"] { part.eq = try reader.eqPreset(n, at + ".eq") }
            if let n = partKeys["keys"] { part.keys = try reader.keyRange(n, at + ".keys") }
            if let n = partKeys["transpose"] { part.transpose = Int(try reader.number(n, at + ".transpose", in: -48...48)) }
            if let n = partKeys["velocity"] { part.velocity = try reader.velocityCurve(n, at + ".velocity") }
            if part.instrument == .synth, part.soundFont != nil {
                throw reader.error(partKeys["soundfont"]!, at + ".soundfont", "goes with the sampler, not the synth")
            }
            if part.instrument == .sampler, part.preset != nil {
                throw reader.error(partKeys["preset"]!, at + ".preset", "names a synth preset; use 'program' with the sampler")
            }
            parts.append(part)
        }
        self.parts = parts
        if let n = keys["controls"] { controls = try reader.controls(n) }
        let names = parts.map { $0.name.lowercased() }
        if let duplicate = names.enumerated().first(where: { names.firstIndex(of: $0.element) != $0.offset }) {
            throw reader.error(sequence[duplicate.offset], "parts[\(duplicate.offset)].name",
                               "'\(parts[duplicate.offset].name)' is used twice (controls and `aulos set` name parts)")
        }
    }

    static func describe(_ error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _):
            return "\(mark.line): \(problem)"
        default:
            return "\(error)".split(separator: "\n").first.map(String.init) ?? "invalid YAML"
        }
    }

    // MARK: Writing

    /// A YAML double-quoted scalar (see `String.escapedForDoubleQuotes`).
    static func quoted(_ text: String) -> String { "\"" + text.escapedForDoubleQuotes + "\"" }

    /// The rig as YAML, in a fixed key order (so load → save → load is identical).
    public func yaml() -> String {
        let quote = Self.quoted
        func number(_ value: Float) -> String { value == value.rounded() && abs(value) < 1e6 ? String(Int(value)) : String(value) }
        var lines = ["# Aulos rig (docs/rigs.md)", "name: \(quote(name))", "sample-rate: \(Int(sampleRate))", "slice: \(slice)", "output:",
                     "  volume: \(number(volume))"]
        if let eq { lines.append("  eq: \(quote(eq))") }
        lines.append("parts:")
        for part in parts {
            lines.append("  - name: \(quote(part.name))")
            lines.append("    instrument: \(part.instrument.rawValue)")
            lines.append("    channels: [\(part.channels.map(String.init).joined(separator: ", "))]")
            if let preset = part.preset { lines.append("    preset: \(quote(preset))") }
            if let program = part.program { lines.append("    program: \(program)") }
            if let soundFont = part.soundFont { lines.append("    soundfont: \(quote(soundFont))") }
            lines.append("    volume: \(number(part.volume))")
            lines.append("    pan: \(number(part.pan))")
            if !part.enabled { lines.append("    enabled: false") }
            if let eq = part.eq { lines.append("    eq: \(quote(eq))") }
            if part.keys != 0...127 { lines.append("    keys: [\(part.keys.lowerBound), \(part.keys.upperBound)]") }
            if part.transpose != 0 { lines.append("    transpose: \(part.transpose)") }
            if part.velocity != .linear { lines.append("    velocity: \(part.velocity.yamlValue)") }
        }
        if !controls.isEmpty {
            lines.append("controls:")
            lines += controls.flatMap(\.yamlLines)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Reads typed values from YAML nodes, turning every problem into `file:line: key: what`.
struct RigReader {
    let file: String

    func error(_ node: Node, _ key: String, _ what: String) -> AudioUnitError {
        AudioUnitError(.invalidFile, "\(file):\(node.mark?.line ?? 0): \(key): \(what)")
    }

    func keys(_ mapping: Node.Mapping, allowed: [String], at prefix: String) throws(AudioUnitError) -> [String: Node] {
        var result: [String: Node] = [:]
        for (keyNode, value) in mapping {
            guard let key = keyNode.string else { throw error(keyNode, prefix, "keys must be text") }
            guard allowed.contains(key) else {
                throw error(keyNode, prefix + key, "unknown key (expected one of \(allowed.joined(separator: ", ")))")
            }
            guard result[key] == nil else { throw error(keyNode, prefix + key, "appears twice") }
            result[key] = value
        }
        return result
    }

    func string(_ node: Node, _ key: String) throws(AudioUnitError) -> String {
        guard let text = node.string, node.scalar != nil else { throw error(node, key, "must be text") }
        return text
    }

    func number(_ node: Node, _ key: String, in range: ClosedRange<Double>) throws(AudioUnitError) -> Double {
        guard let text = node.scalar?.string, let value = Double(text) else { throw error(node, key, "must be a number") }
        guard range.contains(value) else {
            throw error(node, key, "\(text) is outside \(range.lowerBound.clean)…\(range.upperBound.clean)")
        }
        return value
    }

    func eqPreset(_ node: Node, _ key: String) throws(AudioUnitError) -> String {
        let name = try string(node, key)
        guard IPodEQCurves.index(of: name) != nil else {
            throw error(node, key, "unknown EQ preset '\(name)' (see aulos presets)")
        }
        return name
    }
}

extension BinaryFloatingPoint where Self: LosslessStringConvertible {
    /// A whole number without ".0", anything else as Swift prints it (for messages).
    var clean: String { self == rounded() && abs(self) < 1e9 ? String(Int(self)) : String(self) }
}

extension String {
    func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

/// The factory rigs: `rigs/*.yaml` in the first preset directory that has them (same search path as the
/// synth presets).
public enum RigLibrary {
    public struct Entry: Sendable {
        public var path: String
        public var name: String
        public var parts: Int
        /// More than one: a set file (rigs recalled by program change).
        public var rigs: Int
    }

    public static var factory: [Entry] {
        for directory in SynthPresetLibrary.searchPaths {
            let folder = directory + "/rigs"
            guard let handle = opendir(folder) else { continue }
            var names: [String] = []
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".yaml") { names.append(name) }
            }
            closedir(handle)
            guard !names.isEmpty else { continue }
            return names.sorted().compactMap { name in
                guard let set = try? RigSet.load(folder + "/" + name) else { return nil }
                return Entry(path: folder + "/" + name, name: set.name, parts: set.entries.reduce(0) { $0 + $1.rig.parts.count },
                             rigs: set.entries.count)
            }
        }
        return []
    }
}

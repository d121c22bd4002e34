import AulosCore
import AulosMIDI
import AulosUnits
import Foundation
import Yams

// Reading rig and rig-set files (YAML, docs/rigs.md). Every error names the file, the line and the key.

/// The most a rig or rig-set file may hold: a rig is a page of text; anything larger is not one.
public let rigFileLimit = 1 << 20

/// A rig or set file's text, within `rigFileLimit`; the error names the file.
public func readRigFile(_ path: String) throws(RigError) -> String {
    do {
        return try FileContents.text(path, limit: rigFileLimit)
    } catch {
        throw RigError("\(path): cannot read the rig file: \(error.reason)")
    }
}

extension Rig {
    /// Reads a rig file. Every error names the file, the line and the key.
    public static func load(_ path: String) throws(RigError) -> Rig {
        let text = try readRigFile(path)
        return try Rig(yaml: text, file: path)
    }

    public init(yaml text: String, file: String = "rig") throws(RigError) {
        try self.init(root: try composeRigYAML(text, file: file), file: file)
    }

    init(root: Node?, file: String) throws(RigError) {
        guard let root, let mapping = root.mapping else {
            throw RigError("\(file):1: a rig is a mapping with at least 'parts'")
        }
        let reader = RigReader(file: file)
        let keys = try reader.keys(
            mapping,
            allowed: [
                "name", "sample-rate", "slice", "driver", "output", "parts", "controls", "returns", "dry", "tuning",
                "keymap", "tempo", "snapshots", "snapshot-channel",
            ] + RigReader.serverKeys,
            at: "")
        self.name = try keys["name"].map { node throws(RigError) in try reader.string(node, "name") } ?? file
        if let node = keys["sample-rate"] {
            sampleRate = Double(try reader.integer(node, "sample-rate", in: 8000...192_000))
        }
        if let node = keys["slice"] { slice = UInt32(try reader.integer(node, "slice", in: 1...4096)) }
        if let node = keys["tempo"] { tempo = try reader.number(node, "tempo", in: 20...400) }
        if let node = keys["driver"] {
            let name = try reader.string(node, "driver")
            guard ["alsa", "jack"].contains(name) else {
                throw reader.error(
                    node, "driver", "must be alsa or jack, not '\(name.clipped(40))'")
            }
            driver = name
        }
        servers = try reader.servers(keys)
        if let node = keys["dry"] {
            guard let flag = node.bool else { throw reader.error(node, "dry", "must be true or false") }
            dry = flag
        }
        if let node = keys["tuning"] { tuning = try reader.string(node, "tuning") }
        if let node = keys["keymap"] {
            guard tuning != nil else { throw reader.error(node, "keymap", "goes with a tuning: (a .scl file)") }
            keymap = try reader.string(node, "keymap")
        }
        if let output = keys["output"] {
            guard let outputMapping = output.mapping else {
                throw reader.error(output, "output", "must be a mapping (volume, eq, effects, gain, limiter)")
            }
            let outputKeys = try reader.keys(
                outputMapping, allowed: ["volume", "eq", "effects", "gain", "limiter"], at: "output.")
            if let node = outputKeys["volume"] { volume = Float(try reader.number(node, "output.volume", in: 0...2)) }
            if let node = outputKeys["gain"] { gain = Float(try reader.number(node, "output.gain", in: -40...24)) }
            if let node = outputKeys["limiter"] {
                let text = node.scalar?.string.lowercased()
                guard let flag = node.bool ?? (text == "on" ? true : text == "off" ? false : nil) else {
                    throw reader.error(node, "output.limiter", "must be on or off")
                }
                limiter = flag
            }
            if let node = outputKeys["eq"] { eq = try reader.eqPreset(node, "output.eq") }
            if let node = outputKeys["effects"] { masterEffects = try reader.effects(node, "output.effects") }
        }
        guard let partsNode = keys["parts"] else {
            throw RigError("\(file):\((root.mark?.line ?? 1)): missing 'parts'")
        }
        guard let sequence = partsNode.sequence, !sequence.isEmpty else {
            throw reader.error(partsNode, "parts", "must be a list of at least one part")
        }
        guard sequence.count <= PlaybackRig.maximumParts else {
            throw reader.error(
                partsNode, "parts", "\(sequence.count) parts; a rig holds at most \(PlaybackRig.maximumParts)")
        }
        var parts: [Part] = []
        for (index, node) in sequence.enumerated() {
            let at = "parts[\(index)]"
            guard let partMapping = node.mapping else { throw reader.error(node, at, "must be a mapping") }
            let partKeys = try reader.keys(
                partMapping,
                allowed: [
                    "name", "instrument", "channels", "preset", "program", "bank", "soundfont",
                    "volume", "pan", "enabled", "eq", "keys", "transpose", "velocity", "sends", "parameters",
                    "programs", "properties", "state", "effects", "midi-effects", "tuning", "keymap", "polyphony",
                    "drum-channels",
                    "mpe",
                    "wavetable", "wavetable-cycle",
                ],
                at: at + ".")
            guard let instrumentNode = partKeys["instrument"] else {
                throw reader.error(node, at, "missing 'instrument' (synth, sampler, sfz:PATH or lv2:URI)")
            }
            let instrumentName = try reader.string(instrumentNode, at + ".instrument")
            guard let (instrument, plugin) = InstrumentChoice.parse(instrumentName) else {
                throw reader.error(
                    instrumentNode, at + ".instrument",
                    "unknown instrument '\(instrumentName)' (synth, sampler, sfz:PATH to an .sfz file, or lv2:URI as "
                        + "aulos units --lv2 lists)")
            }
            var channels = Array(1...16)
            if let channelsNode = partKeys["channels"] {
                let list = channelsNode.sequence.map(Array.init) ?? [channelsNode]
                channels = []
                for item in list {
                    channels.append(try reader.integer(item, at + ".channels", in: 1...16))
                }
            }
            var part = Part(
                name: try partKeys["name"].map { n throws(RigError) in try reader.string(n, at + ".name") }
                    ?? "\(instrument.rawValue) \(index + 1)",
                instrument: instrument, channels: channels)
            if instrument == .sfz, let path = plugin {
                // Like a rig set's rig files: relative to the folder of the rig file that names it. A file named
                // without a folder is in the current one, where the path already points: kept as written, so a rig
                // written back reads back the same (a "./" added at each reading did not).
                if let slash = reader.file.lastIndex(of: "/") {
                    part.library = RigSet.resolve(path, in: String(reader.file[..<slash]))
                } else {
                    part.library = path
                }
            } else {
                part.plugin = plugin
            }
            if let n = partKeys["preset"] { part.preset = try reader.string(n, at + ".preset") }
            if let n = partKeys["program"] { part.program = try reader.integer(n, at + ".program", in: 0...127) }
            if let n = partKeys["bank"] {
                guard instrument == .sampler else {
                    throw reader.error(
                        n, at + ".bank", "goes with a sampler part (a synth part chooses with preset: or program:)")
                }
                guard part.program != nil else {
                    throw reader.error(n, at + ".bank", "needs a program: (bank: 8 with program: 28 plays bank 8's 28)")
                }
                part.bank = try reader.integer(n, at + ".bank", in: 0...127)
            }
            if let n = partKeys["soundfont"] { part.soundFont = try reader.string(n, at + ".soundfont") }
            if let n = partKeys["volume"] { part.volume = Float(try reader.number(n, at + ".volume", in: 0...2)) }
            if let n = partKeys["pan"] { part.pan = Float(try reader.number(n, at + ".pan", in: -1...1)) }
            if let n = partKeys["enabled"] {
                guard let flag = n.bool else { throw reader.error(n, at + ".enabled", "must be true or false") }
                part.enabled = flag
            }
            if let n = partKeys["eq"] { part.eq = try reader.eqPreset(n, at + ".eq") }
            if let n = partKeys["keys"] { part.keys = try reader.keyRange(n, at + ".keys") }
            if let n = partKeys["transpose"] {
                part.transpose = try reader.integer(n, at + ".transpose", in: -48...48)
            }
            if let n = partKeys["velocity"] { part.velocity = try reader.velocityCurve(n, at + ".velocity") }
            if let n = partKeys["sends"] {
                guard let sendMapping = n.mapping else {
                    throw reader.error(n, at + ".sends", "must be a mapping of return names to levels 0…1")
                }
                for (key, value) in sendMapping {
                    let name = try reader.string(key, at + ".sends")
                    part.sends[name] = Float(try reader.number(value, at + ".sends.\(name)", in: 0...1))
                }
            }
            // What only an LV2 part takes, and what it does not.
            if part.instrument != .lv2,
                let key = ["properties", "state"].first(where: { partKeys[$0] != nil })
            {
                throw reader.error(partKeys[key]!, at + ".\(key)", "goes with an LV2 part (lv2:URI)")
            }
            if part.instrument == .lv2,
                let key = ["polyphony", "tuning", "keymap"].first(where: { partKeys[$0] != nil })
            {
                let what = key == "polyphony" ? "sets its own voices" : "keeps its own tuning"
                throw reader.error(
                    partKeys[key]!, at + ".\(key)", "goes with the synth or the sampler (an LV2 plugin \(what))")
            }
            if let n = partKeys["parameters"] {
                guard let mapping = n.mapping else {
                    throw reader.error(n, at + ".parameters", "must be a mapping of parameter names to numbers")
                }
                for (key, value) in mapping {
                    let name = try reader.string(key, at + ".parameters")
                    part.parameters[name] = Float(try reader.number(value, at + ".parameters.\(name)", in: -1e9...1e9))
                }
            }
            if let n = partKeys["programs"] { part.programs = try reader.programs(n, at + ".programs", of: part) }
            if let n = partKeys["effects"] { part.effects = try reader.effects(n, at + ".effects") }
            if let n = partKeys["midi-effects"] {
                part.midiEffects = try reader.effects(n, at + ".midi-effects", midi: true)
            }
            if let n = partKeys["polyphony"] {
                // The synth and SFZ voice tables take 1…4096; FluidSynth wants at least 16.
                let range = part.instrument == .sampler ? 16...4096 : 1...4096
                part.polyphony = try reader.integer(n, at + ".polyphony", in: range)
            }
            // What only a synth part takes.
            if part.instrument != .synth,
                let key = ["drum-channels", "mpe", "wavetable", "wavetable-cycle"].first(where: { partKeys[$0] != nil })
            {
                let hint = key == "drum-channels" ? " (the sampler's SoundFont has its own drums)" : ""
                throw reader.error(partKeys[key]!, at + ".\(key)", "goes with a synth part" + hint)
            }
            if let n = partKeys["drum-channels"] {
                let list = n.sequence.map(Array.init) ?? [n]
                var drums: [Int] = []
                for item in list { drums.append(try reader.integer(item, at + ".drum-channels", in: 1...16)) }
                part.drumChannels = drums
            }
            if let n = partKeys["wavetable"] { part.wavetable = try reader.string(n, at + ".wavetable") }
            if let n = partKeys["wavetable-cycle"] {
                let cycle = try reader.integer(n, at + ".wavetable-cycle", in: 16...4096)
                guard cycle & (cycle - 1) == 0 else {
                    throw reader.error(n, at + ".wavetable-cycle", "\(cycle) is not a power of two")
                }
                part.wavetableCycle = cycle
            }
            if let n = partKeys["mpe"] {
                switch MPELayout.parse(try reader.string(n, at + ".mpe")) {
                case .success(let layout): part.mpe = layout
                case .failure(let problem): throw reader.error(n, at + ".mpe", problem.message)
                }
            }
            if let n = partKeys["tuning"] { part.tuning = try reader.string(n, at + ".tuning") }
            if let n = partKeys["keymap"] { part.keymap = try reader.string(n, at + ".keymap") }
            if part.keymap != nil && part.tuning == nil {
                throw reader.error(partKeys["keymap"]!, at + ".keymap", "goes with a tuning: (a .scl file)")
            }
            if let n = partKeys["properties"] {
                guard let mapping = n.mapping else {
                    throw reader.error(n, at + ".properties", "must be a mapping of property names to values")
                }
                for (key, value) in mapping {
                    let name = try reader.string(key, at + ".properties")
                    guard let text = value.scalar?.string else {
                        throw reader.error(value, at + ".properties.\(name)", "must be text or a number")
                    }
                    part.properties[name] = text
                }
            }
            if let n = partKeys["state"] { part.state = try reader.string(n, at + ".state") }
            if part.instrument == .synth, part.soundFont != nil {
                throw reader.error(partKeys["soundfont"]!, at + ".soundfont", "goes with the sampler, not the synth")
            }
            part.source = reader.location(node)
            if part.instrument == .sampler, part.preset != nil {
                throw reader.error(
                    partKeys["preset"]!, at + ".preset", "names a synth preset; use 'program' with the sampler")
            }
            parts.append(part)
        }
        self.parts = parts
        if let n = keys["controls"] { controls = try reader.controls(n) }
        if let n = keys["snapshots"] { snapshots = try reader.snapshots(n, parts: parts) }
        if let n = keys["snapshot-channel"] { snapshotChannel = try reader.integer(n, "snapshot-channel", in: 1...16) }
        if let n = keys["returns"] { returns = try reader.returns(n) }
        // Every send names a return of this rig.
        for (index, part) in parts.enumerated() {
            for name in part.sends.keys.sorted() where !returns.contains(where: { $0.name == name }) {
                let known = returns.map(\.name)
                throw reader.error(
                    sequence[index], "parts[\(index)].sends",
                    "no return '\(name)' (this rig has \(known.isEmpty ? "no returns" : known.joined(separator: ", ")))"
                )
            }
        }
        let names = parts.map { $0.name.lowercased() }
        if let duplicate = names.enumerated().first(where: { names.firstIndex(of: $0.element) != $0.offset }) {
            throw reader.error(
                sequence[duplicate.offset], "parts[\(duplicate.offset)].name",
                "'\(parts[duplicate.offset].name)' is used twice (controls and `aulos set` name parts)")
        }
    }

    /// `FILE:LINE: problem`, as every rig error reads, for YAML's own errors too.
    static func describe(_ error: YamlError, file: String) -> String {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return "\(file):\(mark.line): \(problem)"
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")
            return "\(file):\(context.mark.line): \(keys) appear\(duplicates.count == 1 ? "s" : "") twice"
        case .reader(let problem, _, _, _):
            return "\(file):1: \(problem) (a rig file is UTF-8 text)"
        default:
            return "\(file):1: " + ("\(error)".split(separator: "\n").first.map(String.init) ?? "invalid YAML")
        }
    }
}

extension RigSet {
    /// Reads a set file, or a rig file as a set of one. Errors name the file, line and key (a listed
    /// rig's own errors name that rig's file). `confined` (a set that came over the network): every rig it
    /// lists must be a file in the set's own folder, checked before it is read — `rig: /etc/shadow` in an
    /// uploaded set returned the shadow file's first line in its error.
    public static func load(_ path: String, confined: Bool = false) throws(RigError) -> RigSet {
        let root = try composeRigYAML(try readRigFile(path), file: path)
        guard let mapping = root?.mapping, mapping["rigs"] != nil else {
            return RigSet(try Rig(root: root, file: path))
        }
        let reader = RigReader(file: path)
        let keys = try reader.keys(
            mapping, allowed: ["name", "control-channel", "rigs"] + RigReader.serverKeys, at: "")
        let name = try keys["name"].map { node throws(RigError) in try reader.string(node, "name") } ?? path
        let channel = try keys["control-channel"].map { node throws(RigError) in
            try reader.integer(node, "control-channel", in: 1...16)
        }
        guard let list = keys["rigs"]?.sequence, !list.isEmpty else {
            throw reader.error(keys["rigs"]!, "rigs", "must be a list of {program, rig}")
        }
        let folder = FileContents.folder(of: path)
        var entries: [Entry] = []
        for (index, item) in list.enumerated() {
            let at = "rigs[\(index)]"
            guard let itemMapping = item.mapping else {
                throw reader.error(item, at, "must be a mapping with program and rig")
            }
            let itemKeys = try reader.keys(itemMapping, allowed: ["bank", "program", "rig"], at: at + ".")
            guard let programNode = itemKeys["program"] else {
                throw reader.error(item, at, "missing 'program' (0…127)")
            }
            guard let rigNode = itemKeys["rig"] else {
                throw reader.error(item, at, "missing 'rig' (a rig file, relative to this one)")
            }
            let program = try reader.integer(programNode, at + ".program", in: 0...127)
            let bank =
                try itemKeys["bank"].map { node throws(RigError) in
                    try reader.integer(node, at + ".bank", in: 0...16383)
                } ?? 0
            let file = try reader.string(rigNode, at + ".rig")
            if confined && (file.contains("/") || file.hasPrefix(".")) {
                throw reader.error(
                    rigNode, at + ".rig", "a set sent over the network lists rig files in its own folder, by name")
            }
            // Sets do not nest, so a set is never read as a rig: that is what makes a cycle of any length
            // (a set listing itself, or sets listing each other) an error here rather than a recursion.
            let listed = resolve(file, in: folder)
            if FileContents.isSameFile(listed, path) {
                throw reader.error(rigNode, at + ".rig", "'\(file)' is this set itself; a set lists rig files")
            }
            let listedRoot = try composeRigYAML(try readRigFile(listed), file: listed)
            if listedRoot?.mapping?["rigs"] != nil {
                throw reader.error(
                    rigNode, at + ".rig", "'\(file)' is itself a set; a set lists rig files, not other sets")
            }
            let rig = try Rig(root: listedRoot, file: listed)
            if let channel, rig.snapshotChannel == channel {
                throw reader.error(
                    rigNode, at + ".rig",
                    "'\(file)' recalls snapshots on channel \(channel), this set's control channel; give it another "
                        + "'snapshot-channel'")
            }
            guard !entries.contains(where: { $0.bank == bank && $0.program == program }) else {
                throw reader.error(programNode, at + ".program", "bank \(bank) program \(program) is already taken")
            }
            entries.append(Entry(bank: bank, program: program, rig: rig, file: file))
        }
        let totalParts = entries.reduce(0) { $0 + $1.rig.parts.count }
        guard totalParts <= PlaybackRig.maximumParts else {
            throw reader.error(
                keys["rigs"]!, "rigs", "\(totalParts) parts in all; a set holds at most \(PlaybackRig.maximumParts)")
        }
        var set = RigSet(name: name, controlChannel: channel, entries: entries)
        set.servers = try reader.servers(keys)
        return set
    }

    static func resolve(_ file: String, in folder: String) -> String {
        file.hasPrefix("/") ? file : folder + "/" + file
    }

}

/// The YAML tree of a rig or set file, or a `file:line: problem` error.
func composeRigYAML(_ text: String, file: String) throws(RigError) -> Node? {
    do {
        // A byte-order mark (some Windows editors write one) is not YAML content.
        return try Yams.compose(yaml: text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text)
    } catch let error as YamlError {
        throw RigError(Rig.describe(error, file: file))
    } catch {
        throw RigError("\(file): \(error)")
    }
}

/// Reads typed values from YAML nodes, turning every problem into `file:line: key: what`.
struct RigReader {
    let file: String

    func location(_ node: Node) -> SourceLocation { SourceLocation(file: file, line: node.mark?.line ?? 0) }

    func error(_ node: Node, _ key: String, _ what: String) -> RigError {
        RigError("\(file):\(node.mark?.line ?? 0): \(key): \(what)")
    }

    func keys(_ mapping: Node.Mapping, allowed: [String], at prefix: String) throws(RigError) -> [String: Node] {
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

    func string(_ node: Node, _ key: String) throws(RigError) -> String {
        guard let text = node.string, node.scalar != nil else { throw error(node, key, "must be text") }
        return text
    }

    func number(_ node: Node, _ key: String, in range: ClosedRange<Double>) throws(RigError) -> Double {
        guard let text = node.scalar?.string, let value = Double(text) else {
            throw error(node, key, "must be a number")
        }
        guard range.contains(value) else {
            throw error(node, key, "\(text) is outside \(range.lowerBound.clean)…\(range.upperBound.clean)")
        }
        return value
    }

    /// A whole number in `range` (`channels: [1.5]` is an error, not channel 1).
    func integer(_ node: Node, _ key: String, in range: ClosedRange<Int>) throws(RigError) -> Int {
        let value = try number(node, key, in: Double(range.lowerBound)...Double(range.upperBound))
        guard value == value.rounded() else {
            throw error(node, key, "\(node.scalar?.string ?? "") is not a whole number")
        }
        return Int(value)
    }

    func eqPreset(_ node: Node, _ key: String) throws(RigError) -> String {
        let name = try string(node, key)
        guard IPodEQUnit.curveIndex(name) != nil else {
            throw error(node, key, "unknown EQ preset '\(name)' (see aulos presets)")
        }
        return name
    }
}

extension RigReader {
    /// `soft`, `hard`, `linear`, a fixed velocity 1…127, or `{curve: 0.6, min: 20, max: 127}`.
    func velocityCurve(_ node: Node, _ key: String) throws(RigError) -> VelocityCurve {
        if let mapping = node.mapping {
            let keys = try keys(mapping, allowed: ["curve", "min", "max"], at: key + ".")
            var curve = VelocityCurve()
            if let n = keys["curve"] { curve.exponent = try number(n, key + ".curve", in: 0.1...10) }
            if let n = keys["min"] { curve.low = try integer(n, key + ".min", in: 1...127) }
            if let n = keys["max"] { curve.high = try integer(n, key + ".max", in: 1...127) }
            guard curve.low <= curve.high else { throw error(node, key, "min \(curve.low) is above max \(curve.high)") }
            return curve
        }
        guard let text = node.scalar?.string else {
            throw error(node, key, "must be soft, hard, linear, a velocity or {curve, min, max}")
        }
        if let fixed = Int(text) {
            guard (1...127).contains(fixed) else { throw error(node, key, "a fixed velocity is 1…127, not \(fixed)") }
            return VelocityCurve(fixed: fixed)
        }
        guard let named = VelocityCurve.named.first(where: { $0.0 == text.lowercased() }) else {
            throw error(
                node, key, "unknown curve '\(text)' (soft, hard, linear, a velocity 1…127, or {curve, min, max})")
        }
        return named.1
    }

    /// `C2-B4`, `36-71` or `[36, 71]`: the lowest and highest note a part plays.
    func keyRange(_ node: Node, _ key: String) throws(RigError) -> ClosedRange<Int> {
        var notes: [Int] = []
        if let sequence = node.sequence, sequence.count == 2 {
            for item in sequence {
                let text = try string(item, key)
                do { notes.append(Int(try Score.parseNote(text))) } catch { throw self.error(item, key, error.message) }
            }
        } else {
            // Split at the dash between the two notes; with a negative octave (C-1-G2) try each dash.
            let text = try string(node, key)
            for dash in text.indices where text[dash] == "-" && dash != text.startIndex {
                if let low = try? Score.parseNote(text[..<dash].trimmingCharacters(in: .whitespaces)),
                    let high = try? Score.parseNote(
                        text[text.index(after: dash)...].trimmingCharacters(in: .whitespaces))
                {
                    notes = [Int(low), Int(high)]
                    break
                }
            }
            guard notes.count == 2 else {
                throw error(node, key, "'\(text)' must be LOW-HIGH notes, like C2-B4 or 36-71")
            }
        }
        guard notes[0] <= notes[1] else {
            throw error(node, key, "the low note \(notes[0]) is above the high note \(notes[1])")
        }
        return notes[0]...notes[1]
    }

    /// `returns:` — a list of {name, effects}.
    func returns(_ node: Node) throws(RigError) -> [ReturnBus] {
        guard let sequence = node.sequence else { throw error(node, "returns", "must be a list of {name, effects}") }
        var result: [ReturnBus] = []
        for (index, item) in sequence.enumerated() {
            let at = "returns[\(index)]"
            guard let mapping = item.mapping else { throw error(item, at, "must be a mapping (name, effects)") }
            let fields = try keys(mapping, allowed: ["name", "effects", "level", "cc"], at: at + ".")
            guard let nameNode = fields["name"] else { throw error(item, at, "missing 'name'") }
            let name = try string(nameNode, at + ".name")
            if result.contains(where: { $0.name == name }) {
                throw error(nameNode, at + ".name", "'\(name)' is used twice")
            }
            var bus = ReturnBus(
                name: name,
                effects: try fields["effects"].map { n throws(RigError) in
                    try effects(n, at + ".effects")
                } ?? [])
            if let n = fields["level"] { bus.level = Float(try number(n, at + ".level", in: 0...2)) }
            if let n = fields["cc"] {
                let controller = try integer(n, at + ".cc", in: 0...127)
                guard ReturnBus.sendControllers.contains(UInt8(controller)) else {
                    throw error(n, at + ".cc", "must be 91 (reverb send) or 93 (chorus send), not \(controller)")
                }
                if let other = result.first(where: { $0.controller == UInt8(controller) }) {
                    throw error(n, at + ".cc", "return '\(other.name)' already follows CC \(controller)")
                }
                bus.controller = UInt8(controller)
            }
            bus.source = location(item)
            result.append(bus)
        }
        return result
    }

    /// An effect chain: a list of {unit, preset, parameters}, each checked against the unit it names (with
    /// `midi`, a part's MIDI effects: LV2 plugins with MIDI in and out).
    func effects(_ node: Node, _ key: String, midi: Bool = false) throws(RigError) -> [EffectSpec] {
        guard let sequence = node.sequence else {
            throw error(
                node, key, "must be a list of effects ({unit: reverb|chorus|delay|lv2:URI, preset, parameters})")
        }
        // A chain is a handful of effects; a rig of a thousand delays took gigabytes to build.
        guard sequence.count <= Rig.maximumEffectsPerChain else {
            throw error(node, key, "\(sequence.count) effects; a chain holds at most \(Rig.maximumEffectsPerChain)")
        }
        var chain: [EffectSpec] = []
        for (index, item) in sequence.enumerated() {
            let at = "\(key)[\(index)]"
            guard let mapping = item.mapping else {
                throw error(item, at, "must be a mapping (unit, preset, parameters)")
            }
            let fields = try keys(mapping, allowed: ["unit", "preset", "parameters"], at: at + ".")
            guard let unitNode = fields["unit"] else {
                throw error(item, at, "missing 'unit' (reverb, chorus, delay or lv2:URI)")
            }
            let unitName = try string(unitNode, at + ".unit")
            guard let kind = EffectKind(name: unitName) else {
                throw error(
                    unitNode, at + ".unit",
                    "unknown effect '\(unitName)' (\(EffectKind.builtIn.map(\.name).joined(separator: ", ")), "
                        + "or lv2:URI as aulos units --lv2 lists)")
            }
            var spec = EffectSpec(kind: kind)
            if let n = fields["preset"] { spec.preset = try string(n, at + ".preset") }
            if let n = fields["parameters"] {
                guard let parameters = n.mapping else {
                    throw error(n, at + ".parameters", "must be a mapping of parameter names to numbers")
                }
                for (nameNode, valueNode) in parameters {
                    let name = try string(nameNode, at + ".parameters")
                    spec.parameters.append(
                        (name, Float(try number(valueNode, at + ".parameters.\(name)", in: -1e9...1e9))))
                }
            }
            spec.source = location(item)
            // Checked here, against a unit of the kind, so a wrong preset, name or value names the line.
            do {
                try spec.apply(to: midi ? try kind.makeMIDIEffect() : try kind.makeUnit())
            } catch let problem {
                throw error(item, at, problem.message)
            }
            chain.append(spec)
        }
        return chain
    }

    /// A part's `programs:`: channel → program, or [bank, program], on channels the part plays. What a part
    /// starts on (`atStart`) is not an LV2 part's (it starts on its preset:) nor a synth's first channel (its
    /// preset:); a snapshot may send any channel the part plays.
    func programs(_ node: Node, _ at: String, of part: Rig.Part, atStart: Bool = true) throws(RigError)
        -> [Int: Rig.Program]
    {
        guard let mapping = node.mapping else {
            throw error(node, at, "must be a mapping of channels to programs ({2: 25, 10: [128, 0]})")
        }
        if atStart && part.instrument == .lv2 {
            throw error(node, at, "goes with the synth or the sampler (an LV2 part chooses with preset:)")
        }
        var programs: [Int: Rig.Program] = [:]
        for (key, value) in mapping {
            let channel = try integer(key, at, in: 1...16)
            guard part.channels.contains(channel) else {
                let channels = part.channels.map(String.init).joined(separator: ", ")
                throw error(key, at, "channel \(channel) is not one the part plays (\(channels))")
            }
            if atStart && part.instrument == .synth && channel == part.channels.min() {
                throw error(key, at, "channel \(channel) is the synth part's first: it plays the part's preset:")
            }
            if let pair = value.sequence.map(Array.init) {
                guard pair.count == 2 else {
                    throw error(value, "\(at).\(channel)", "must be PROGRAM or [BANK, PROGRAM]")
                }
                programs[channel] = Rig.Program(
                    bank: try integer(pair[0], "\(at).\(channel)", in: 0...16383),
                    program: try integer(pair[1], "\(at).\(channel)", in: 0...127))
            } else {
                programs[channel] = Rig.Program(bank: 0, program: try integer(value, "\(at).\(channel)", in: 0...127))
            }
        }
        return programs
    }

    /// `snapshots:`: a list of {name, program, values: {TARGET: number or EQ name}, programs: {PART:
    /// {CHANNEL: …}}}. Targets are checked when the rig is built (as controls are); parts, channels and the
    /// recalling programs (each answering one snapshot) here.
    func snapshots(_ node: Node, parts: [Rig.Part]) throws(RigError) -> [Rig.Snapshot] {
        guard let sequence = node.sequence else {
            throw error(node, "snapshots", "must be a list of {name, values, programs}")
        }
        var snapshots: [Rig.Snapshot] = []
        for (index, item) in sequence.enumerated() {
            let at = "snapshots[\(index)]"
            guard let mapping = item.mapping else {
                throw error(item, at, "must be a mapping (name, values, programs)")
            }
            let fields = try keys(mapping, allowed: ["name", "program", "values", "programs"], at: at + ".")
            guard let nameNode = fields["name"] else { throw error(item, at, "missing 'name'") }
            var snapshot = Rig.Snapshot(name: try string(nameNode, at + ".name"))
            guard !snapshots.contains(where: { $0.name == snapshot.name }) else {
                throw error(nameNode, at + ".name", "'\(snapshot.name.clipped(40))' names an earlier snapshot too")
            }
            if let n = fields["program"] {
                let program = try integer(n, at + ".program", in: 0...127)
                snapshot.program = program
            }
            let program = snapshot.program ?? index
            if let earlier = snapshots.indices.first(where: { (snapshots[$0].program ?? $0) == program }) {
                throw error(
                    fields["program"] ?? nameNode, at + ".program",
                    "program \(program) recalls snapshot '\(snapshots[earlier].name.clipped(40))' already "
                        + "(a snapshot without 'program' answers its position, from 0)")
            }
            if let n = fields["values"] {
                guard let values = n.mapping else {
                    throw error(n, at + ".values", "must be a mapping of targets (PART.PARAMETER) to values")
                }
                for (key, value) in values {
                    let target = try string(key, at + ".values")
                    snapshot.values.append((target, try string(value, at + ".values.\(target)")))
                }
            }
            if let n = fields["programs"] {
                guard let byPart = n.mapping else {
                    throw error(n, at + ".programs", "must be a mapping of part names to {CHANNEL: PROGRAM}")
                }
                for (key, value) in byPart {
                    let name = try string(key, at + ".programs")
                    guard let part = parts.first(where: { $0.name == name }) else {
                        throw error(key, at + ".programs", "no part '\(name.clipped(40))' in this rig")
                    }
                    snapshot.programs[name] = try programs(value, at + ".programs.\(name)", of: part, atStart: false)
                }
            }
            snapshot.source = location(item)
            snapshots.append(snapshot)
        }
        return snapshots
    }

    func controls(_ node: Node) throws(RigError) -> [ControlMapping] {
        guard let sequence = node.sequence else { throw error(node, "controls", "must be a list of {cc, target}") }
        var mappings: [ControlMapping] = []
        for (index, item) in sequence.enumerated() {
            let at = "controls[\(index)]"
            guard let mapping = item.mapping else { throw error(item, at, "must be a mapping with cc and target") }
            let keys = try keys(mapping, allowed: ["cc", "channel", "target", "min", "max"], at: at + ".")
            guard let ccNode = keys["cc"] else { throw error(item, at, "missing 'cc' (0…127)") }
            guard let targetNode = keys["target"] else {
                throw error(item, at, "missing 'target' (PART.PARAMETER, output.volume, output.eq)")
            }
            let target = try string(targetNode, at + ".target")
            guard target.contains(".") else {
                throw error(targetNode, at + ".target", "'\(target)' is not UNIT.PARAMETER")
            }
            var control = ControlMapping(controller: try integer(ccNode, at + ".cc", in: 0...127), target: target)
            control.source = location(item)
            if let n = keys["channel"] { control.channel = try integer(n, at + ".channel", in: 1...16) }
            if let n = keys["min"] { control.minimum = Float(try number(n, at + ".min", in: -1e6...1e6)) }
            if let n = keys["max"] { control.maximum = Float(try number(n, at + ".max", in: -1e6...1e6)) }
            mappings.append(control)
        }
        return mappings
    }
}

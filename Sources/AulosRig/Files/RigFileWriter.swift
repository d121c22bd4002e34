import AulosCore
import Yams

// Writing rig files: the inverse of RigFileReader, in a fixed key order, every text value quoted safely, so
// load → save → load gives the same rig.

extension Rig {
    /// A YAML double-quoted scalar (see `String.escapedForDoubleQuotes`).
    static func quoted(_ text: String) -> String { "\"" + text.escapedForDoubleQuotes + "\"" }

    /// A part's `state:`: a literal block, so Turtle keeps its lines and quotes as they are — when YAML
    /// gives that block back exactly (one final newline, no carriage returns or other line breaks, no
    /// leading space on its first line); otherwise one double-quoted line.
    static func stateLines(_ state: String) -> [String] {
        let body = state.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map { $0.isEmpty ? "" : "      " + $0 }
        let block = ["    state: |"] + body
        let probe = "state: |\n" + body.map { $0.dropFirst(min(4, $0.count)) }.joined(separator: "\n") + "\n"
        if state.hasSuffix("\n"), let node = try? Yams.compose(yaml: probe), node["state"]?.string == state {
            return block
        }
        return ["    state: \(quoted(state))"]
    }

    /// Programs by channel as a flow mapping's inside: `2: 25, 10: [128, 8]`.
    static func programsText(_ programs: [Int: Program]) -> String {
        programs.sorted { $0.key < $1.key }.map { channel, chosen in
            "\(channel): " + (chosen.bank == 0 ? "\(chosen.program)" : "[\(chosen.bank), \(chosen.program)]")
        }.joined(separator: ", ")
    }

    /// The rig as YAML, in a fixed key order (so load → save → load is identical).
    public func yaml() -> String {
        let quote = Self.quoted
        var lines = [
            "# Aulos rig (docs/rigs.md)", "name: \(quote(name))", "sample-rate: \(Int(sampleRate))", "slice: \(slice)",
        ]
        if let tempo { lines.append("tempo: \(tempo.clean)") }
        if let driver { lines.append("driver: \(driver)") }
        lines += servers.yamlLines
        if dry { lines.append("dry: true") }
        if let tuning { lines.append("tuning: \(quote(tuning))") }
        if let keymap { lines.append("keymap: \(quote(keymap))") }
        lines += ["output:", "  volume: \(volume.clean)"]
        if let eq { lines.append("  eq: \(quote(eq))") }
        if gain != 0 { lines.append("  gain: \(gain.clean)") }
        if !limiter { lines.append("  limiter: off") }
        if !masterEffects.isEmpty {
            lines.append("  effects:")
            lines += masterEffects.flatMap { $0.yamlLines(indent: "    ") }
        }
        if !returns.isEmpty {
            lines.append("returns:")
            for bus in returns {
                lines.append("  - name: \(quote(bus.name))")
                if bus.level != 1 { lines.append("    level: \(bus.level.clean)") }
                if let controller = bus.controller { lines.append("    cc: \(controller)") }
                if !bus.effects.isEmpty {
                    lines.append("    effects:")
                    lines += bus.effects.flatMap { $0.yamlLines(indent: "      ") }
                }
            }
        }
        lines.append("parts:")
        for part in parts {
            lines.append("  - name: \(quote(part.name))")
            lines.append(
                "    instrument: "
                    + (part.instrument == .lv2
                        ? quote("lv2:" + (part.plugin ?? ""))
                        : part.instrument == .sfz ? quote("sfz:" + (part.library ?? "")) : part.instrument.rawValue))
            lines.append("    channels: [\(part.channels.map(String.init).joined(separator: ", "))]")
            if let preset = part.preset { lines.append("    preset: \(quote(preset))") }
            if let program = part.program { lines.append("    program: \(program)") }
            if let bank = part.bank { lines.append("    bank: \(bank)") }
            if let soundFont = part.soundFont { lines.append("    soundfont: \(quote(soundFont))") }
            lines.append("    volume: \(part.volume.clean)")
            lines.append("    pan: \(part.pan.clean)")
            if !part.enabled { lines.append("    enabled: false") }
            if let eq = part.eq { lines.append("    eq: \(quote(eq))") }
            if part.keys != 0...127 { lines.append("    keys: [\(part.keys.lowerBound), \(part.keys.upperBound)]") }
            if part.transpose != 0 { lines.append("    transpose: \(part.transpose)") }
            if part.velocity != .linear { lines.append("    velocity: \(part.velocity.yamlValue)") }
            if !part.sends.isEmpty {
                let sends = part.sends.sorted { $0.key < $1.key }.map { "\(quote($0.key)): \($0.value.clean)" }
                lines.append("    sends: {\(sends.joined(separator: ", "))}")
            }
            if let polyphony = part.polyphony { lines.append("    polyphony: \(polyphony)") }
            if let mpe = part.mpe { lines.append("    mpe: \(quote(mpe.text))") }
            if let wavetable = part.wavetable { lines.append("    wavetable: \(quote(wavetable))") }
            if let cycle = part.wavetableCycle { lines.append("    wavetable-cycle: \(cycle)") }
            if let drums = part.drumChannels {
                lines.append("    drum-channels: [\(drums.map(String.init).joined(separator: ", "))]")
            }
            if let tuning = part.tuning { lines.append("    tuning: \(quote(tuning))") }
            if let keymap = part.keymap { lines.append("    keymap: \(quote(keymap))") }
            if !part.midiEffects.isEmpty {
                lines.append("    midi-effects:")
                lines += part.midiEffects.flatMap { $0.yamlLines(indent: "      ") }
            }
            if !part.effects.isEmpty {
                lines.append("    effects:")
                lines += part.effects.flatMap { $0.yamlLines(indent: "      ") }
            }
            if !part.parameters.isEmpty {
                lines.append("    parameters:")
                lines += part.parameters.sorted { $0.key < $1.key }.map { "      \(quote($0.key)): \($0.value.clean)" }
            }
            if !part.programs.isEmpty { lines.append("    programs: {\(Self.programsText(part.programs))}") }
            if !part.properties.isEmpty {
                lines.append("    properties:")
                lines += part.properties.sorted { $0.key < $1.key }.map { "      \(quote($0.key)): \(quote($0.value))" }
            }
            if let state = part.state { lines += Self.stateLines(state) }
        }
        if !controls.isEmpty {
            lines.append("controls:")
            lines += controls.flatMap(\.yamlLines)
        }
        if let snapshotChannel { lines.append("snapshot-channel: \(snapshotChannel)") }
        if !snapshots.isEmpty {
            lines.append("snapshots:")
            for snapshot in snapshots {
                lines.append("  - name: \(quote(snapshot.name))")
                if let program = snapshot.program { lines.append("    program: \(program)") }
                if !snapshot.values.isEmpty {
                    lines.append("    values:")
                    lines += snapshot.values.map { "      \(quote($0.target)): \(quote($0.value))" }
                }
                if !snapshot.programs.isEmpty {
                    lines.append("    programs:")
                    for (part, programs) in snapshot.programs.sorted(by: { $0.key < $1.key }) {
                        lines.append("      \(quote(part)): {\(Self.programsText(programs))}")
                    }
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension VelocityCurve {
    /// The rig-file spelling: a name, a fixed number, or {curve, min, max}.
    var yamlValue: String {
        if let fixed { return String(fixed) }
        if let name = Self.named.first(where: { $0.1 == self })?.0 { return name }
        return "{curve: \(exponent), min: \(low), max: \(high)}"
    }
}

extension ControlMapping {
    var yamlLines: [String] {
        var lines = ["  - cc: \(controller)"]
        if let channel { lines.append("    channel: \(channel)") }
        lines.append("    target: \(Rig.quoted(target))")
        if let minimum { lines.append("    min: \(minimum)") }
        if let maximum { lines.append("    max: \(maximum)") }
        return lines
    }
}

extension EffectSpec {
    /// The effect as a list item at `indent`: unit, preset, then parameters in the order given.
    func yamlLines(indent: String) -> [String] {
        var lines = ["\(indent)- unit: \(Rig.quoted(kind.name))"]
        if let preset { lines.append("\(indent)  preset: \(Rig.quoted(preset))") }
        if !parameters.isEmpty {
            lines.append("\(indent)  parameters:")
            lines += parameters.map { "\(indent)    \(Rig.quoted($0.name)): \($0.value.clean)" }
        }
        return lines
    }
}

extension RigSet {
    /// The set as a set file listing `rigFiles` (one per entry, as the set file names them), in a fixed key
    /// order; a set of one plain rig (no file, no control channel) is that rig's own file.
    public func yaml(listing rigFiles: [String]) -> String {
        if entries.count == 1 && entries[0].file == nil && controlChannel == nil { return entries[0].rig.yaml() }
        var lines = ["# Aulos rig set (docs/rigs.md)", "name: \(Rig.quoted(name))"]
        if let controlChannel { lines.append("control-channel: \(controlChannel)") }
        lines += servers.yamlLines
        lines.append("rigs:")
        for (entry, file) in zip(entries, rigFiles) {
            lines.append("  - program: \(entry.program)")
            if entry.bank != 0 { lines.append("    bank: \(entry.bank)") }
            lines.append("    rig: \(Rig.quoted(file))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether the set is a plain rig (its file is the rig's own).
    public var isPlainRig: Bool { entries.count == 1 && entries[0].file == nil && controlChannel == nil }
}

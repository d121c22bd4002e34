import AulosCore
import AulosUnits

extension PlaybackRig {
    /// The rig's buses as a person reads them, after `aulos graph`'s node listing: each part's mixer bus
    /// and its sends, each return with its effects and level, the master chain.
    ///
    ///     Parts:
    ///       sampler: bus 0, channels 1-16, volume 1, pan 0; sends: reverb 1 × CC 91, chorus 1 × CC 93
    ///     Returns:
    ///       reverb (send 1, follows CC 91): reverb 'FluidSynth' → master input 1, level 1
    ///     Master: mix → output volume 1 → output
    public var routingDescription: String {
        var lines = ["Parts:"]
        for loaded in parts {
            let channels =
                loaded.part.channels == Array(1...16)
                ? "1-16" : loaded.part.channels.map(String.init).joined(separator: ",")
            var line =
                "  \(loaded.part.name): bus \(loaded.bus), channels \(channels), volume \(loaded.part.volume.clean), "
                + "pan \(loaded.part.pan.clean)"
            let sends = returns.enumerated().compactMap { index, entry -> String? in
                let level =
                    (try? mixer.getParameter(
                        MultichannelMixerUnit.Parameter.sendLevel(index), scope: .input, element: loaded.bus)) ?? 0
                guard level > 0 else { return nil }
                return "\(entry.bus.name) \(level.clean)" + (entry.bus.controller.map { " × CC \($0)" } ?? "")
            }
            if !loaded.part.effects.isEmpty {
                line += "; effects: " + loaded.part.effects.map(\.summary).joined(separator: " → ")
            }
            if !sends.isEmpty { line += "; sends: " + sends.joined(separator: ", ") }
            lines.append(line)
        }
        if !returns.isEmpty {
            lines.append("Returns:")
            for (index, entry) in returns.enumerated() {
                let follows = entry.bus.controller.map { ", follows CC \($0)" } ?? ""
                let chain = entry.bus.effects.map(\.summary)
                lines.append(
                    "  \(entry.bus.name) (send \(index + 1)\(follows)): "
                        + (chain.isEmpty ? "no effects" : chain.joined(separator: " → "))
                        + " → master input \(index + 1), level \(entry.bus.level.clean)")
            }
        }
        var master = [returns.isEmpty ? "mix" : "mix + returns", "output volume \(rig.volume.clean)"]
        if masterEQInFlow, let eq = rig.eq { master.append("EQ \(eq)") }
        master += rig.masterEffects.map(\.summary)
        lines.append("Master: " + master.joined(separator: " → ") + " → output")
        return lines.joined(separator: "\n")
    }
}

extension EffectSpec {
    /// "reverb 'Hall' decay-time 2.5": the unit, its preset and parameters as the rig file names them.
    public var summary: String {
        ([kind.name] + (preset.map { ["'\($0)'"] } ?? []) + parameters.map { "\($0.name) \($0.value.clean)" })
            .joined(separator: " ")
    }
}

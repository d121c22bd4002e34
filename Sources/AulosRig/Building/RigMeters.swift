import AulosCore
import AulosUnits

extension PlaybackRig {
    /// One level meter of a playing rig, in dBFS (−120 for silence), the louder channel.
    public struct Meter: Equatable, Sendable {
        /// `part NAME` (`part NAME (RIG)` where two rigs of a set have a part NAME), `send NAME`, `return NAME`
        /// or `master`.
        public var name: String
        /// Peak (decaying over 1.5 s) and mean-square average (over 300 ms), after the fader.
        public var peak: Float
        public var average: Float
    }

    /// Turns the mixers' metering on (a live session's status shows the levels; offline renders leave it
    /// off). Control thread.
    public func startMetering() throws(AudioUnitError) {
        try mixer.set(.meteringMode, UInt32(1))
        if outputMixer !== mixer { try outputMixer.set(.meteringMode, UInt32(1)) }
        if outputMeter == nil, let grant = session?.grant {
            let meter = OutputMeter(sampleRate: rig.sampleRate, sample: grant.format)
            try graph.addRenderNotify(meter.renderNotify)
            outputMeter = meter
        }
    }

    /// Every part's level after its fader, each send as it leaves for its return, each return as it comes
    /// back from its effects, and the master as it leaves for the device. Readable at any time (the render
    /// thread publishes them as atomics); all −120 until `startMetering`.
    public var meters: [Meter] {
        func meter(_ name: String, _ unit: MultichannelMixerUnit, _ scope: Scope, _ element: Element) -> Meter? {
            guard let levels = try? unit.levels(scope: scope, element: element) else { return nil }
            return Meter(
                name: name, peak: levels.postPeak.max() ?? -120, average: levels.postAverage.max() ?? -120)
        }
        // A part's name with its rig's where another rig of the set has a part of that name: two "part Bass"
        // rows could not be told apart.
        let names = parts.map(\.part.name)
        var result = parts.compactMap { loaded in
            let shared = names.filter { $0 == loaded.part.name }.count > 1
            let rigName = set.entries[loaded.rigIndex].rig.name
            let name = shared ? "part \(loaded.part.name) (\(rigName))" : "part \(loaded.part.name)"
            return meter(name, mixer, .input, loaded.bus)
        }
        for (index, entry) in returns.enumerated() {
            result += [
                meter("send \(entry.bus.name)", mixer, .output, Element(1 + index)),
                meter("return \(entry.bus.name)", outputMixer, .input, Element(1 + index)),
            ].compactMap { $0 }
        }
        // The master as it leaves for the device (after the master EQ and effects), once metering runs.
        if let levels = outputMeter?.levels {
            result.append(Meter(name: "master", peak: levels.peak, average: levels.average))
        } else if let master = meter("master", outputMixer, .output, 0) {
            result.append(master)
        }
        return result
    }
}

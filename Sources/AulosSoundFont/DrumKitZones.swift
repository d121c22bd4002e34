/// How the drum kit's samples become the GM kit preset (bank 128, program 0): one zone per key.
///
/// Threads: control side, generation time.
extension AulosGMSoundFont {
    /// Renders the drum kit's samples; returns each key's sample index.
    static func makeKit(_ builder: inout FontBuilder) -> [UInt8: Int] {
        var samples: [UInt8: Int] = [:]
        for drum in DrumKit.drums {
            samples[drum.key] = builder.sample(
                drum.name, frames: DrumKit.render(drum), rate: drum.sampleRate, rootKey: drum.key)
        }
        return samples
    }

    /// The kit: one zone per key, ringing to the sample's end whatever the note-off (an 8 s release: 12 dB/s,
    /// slower than any drum's own decay; a choke in FluidSynth is a 0.89 s release, so it still cuts), darker
    /// when played softly, each drum at its level and in its choke group.
    static func drumInstrument(_ samples: [UInt8: Int]) -> SoundFontWriter.Instrument {
        let zones = DrumKit.drums.map { drum in
            var generators: [(Generator, Int16)] = [
                (.attackVolEnv, timecents(0.001)), (.releaseVolEnv, timecents(8)),
                (.initialFilterFc, absoluteCents(16_000)), (.overridingRootKey, Int16(drum.key)),
                (.initialAttenuation, Int16((-10 * drum.gain).rounded()) + drumAttenuation),
            ]
            if drum.chokeGroup != 0 { generators.append((.exclusiveClass, drum.chokeGroup)) }
            return SoundFontWriter.Zone(
                keyRange: drum.key...drum.key, sample: samples[drum.key]!, generators: generators,
                modulators: velocityToFilter)
        }
        return .init(name: "Standard Kit", zones: zones)
    }

    /// The whole kit's level against the melodic programs (centibels).
    static let drumAttenuation: Int16 = 0
}

import AulosDSP

/// The SF2 shaping vocabulary the bundled font is written in: envelopes for decaying and sustaining
/// instruments, filters and filter envelopes, vibrato, tremolo and the velocity-to-cutoff modulator, in the
/// units SF2 generators take (timecents, absolute cents, centibels).
///
/// Threads: control side, generation time.
extension AulosGMSoundFont {
    /// Seconds → SF2 timecents.
    static func timecents(_ seconds: Double) -> Int16 {
        Int16(max(-12_000, min(8000, (1200 * FastMath.log2(seconds)).rounded())))
    }

    /// Hz → SF2 absolute cents (filter cutoffs, LFO rates).
    static func absoluteCents(_ hertz: Double) -> Int16 { Int16((1200 * FastMath.log2(hertz / 8.176)).rounded()) }

    /// A decaying instrument (struck or plucked): quick attack, then the volume envelope falls 96 dB over
    /// `decay` seconds at middle C (longer below, shorter above: `keyScale` timecents per key) whether the key
    /// is held or not, so it dies away under the sustain pedal as the real instrument does.
    static func decaying(_ decay: Double, release: Double, keyScale: Int16 = 15) -> [(Generator, Int16)] {
        [
            (.attackVolEnv, timecents(0.001)), (.decayVolEnv, timecents(decay)), (.sustainVolEnv, 1000),
            (.releaseVolEnv, timecents(release)), (.keynumToVolEnvDecay, keyScale),
        ]
    }

    /// A sustaining instrument (blown, bowed, electric): holds while the key is held.
    static func sustaining(attack: Double, release: Double) -> [(Generator, Int16)] {
        [(.attackVolEnv, timecents(attack)), (.releaseVolEnv, timecents(release))]
    }

    /// A low-pass at `hertz` with `resonance` centibels of peak.
    static func filter(_ hertz: Double, resonance: Int16 = 0) -> [(Generator, Int16)] {
        [(.initialFilterFc, absoluteCents(hertz)), (.initialFilterQ, resonance)]
    }

    /// A filter envelope: the cutoff starts `cents` higher and falls over `decay` to `sustain` (0…1 of it).
    static func filterEnvelope(_ cents: Int16, attack: Double = 0.001, decay: Double, sustain: Double)
        -> [(Generator, Int16)]
    {
        [
            (.modEnvToFilterFc, cents), (.attackModEnv, timecents(attack)), (.decayModEnv, timecents(decay)),
            (.sustainModEnv, Int16(1000 * (1 - sustain))),
        ]
    }

    /// Vibrato: `cents` deep at `hertz`, after `delay` seconds.
    static func vibrato(_ cents: Int16, hertz: Double = 5.5, delay: Double = 0.3) -> [(Generator, Int16)] {
        [(.vibLfoToPitch, cents), (.freqVibLFO, absoluteCents(hertz)), (.delayVibLFO, timecents(delay))]
    }

    /// Tremolo (volume LFO): `centibels` deep at `hertz`.
    static func tremolo(_ centibels: Int16, hertz: Double) -> [(Generator, Int16)] {
        [(.modLfoToVolume, centibels), (.freqModLFO, absoluteCents(hertz)), (.delayModLFO, timecents(0.001))]
    }

    /// Softer notes darker, over the whole velocity range (pianos, plucked, drums).
    static var velocityToFilter: [SoundFontWriter.Modulator] {
        [SoundFontWriter.Modulator.velocityToFilterCutoff(cents: 2400)]
    }
}

import AulosDSP

/// What each melodic sample of the bundled font is made of: one `Tone` recipe per sound, as a function of
/// the root key it is rendered at (brightness, decay and body resonances change across the keyboard as they
/// do on the real instrument). Decaying instruments (pianos, guitars, basses, mallets, plucked strings) get a
/// recorded decay whose partials fade at their own rates, then a short loop that the SF2 volume envelope
/// keeps fading (`AulosGMSoundFont` sets it); sustaining ones get a short attack and a loop that holds.
///
/// Threads: control side, generation time.
enum MelodicTones {
    // MARK: Spectra

    /// Harmonics 1…count, each given its level and decay by `shape(k)`.
    static func harmonics(_ count: Int, _ shape: (Double) -> (Double, Double)) -> [Partial] {
        (1...count).map { k in
            let (amplitude, decay) = shape(Double(k))
            return Partial(ratio: Double(k), amplitude: amplitude, decay: decay)
        }
    }

    /// |sin(π k p)|: the comb a string plucked or struck at fraction `p` of its length puts on its harmonics.
    static func pluckPosition(_ k: Double, _ position: Double) -> Double {
        abs(FastMath.sine(k * position / 2))
    }

    /// A resonance curve: `floor` plus peaks (centre Hz, gain, bandwidth Hz), for vocal and body formants.
    static func formants(_ hertz: Double, _ peaks: [(Double, Double, Double)], floor: Double = 0.05) -> Double {
        var gain = floor
        for (centre, level, width) in peaks {
            let x = (hertz - centre) / width
            gain += level / (1 + x * x)
        }
        return gain
    }

    /// k^−power, the spectral slope.
    static func slope(_ k: Double, _ power: Double) -> Double { FastMath.exp2(-power * FastMath.log2(k)) }

    /// Seconds scaled for pitch: lower notes ring longer (×2 per two octaves down from middle C).
    static func keyScaled(_ seconds: Double, _ note: Int) -> Double {
        seconds * FastMath.exp2(Double(60 - note) / 24)
    }

    static func hz(_ note: Int) -> Double { FastMath.frequency(ofNote: Double(note)) }

    // MARK: Pianos and keyboards

    /// Acoustic grand: stretched partials (string stiffness), hammer comb at 1/8, higher partials fading
    /// faster, a hammer knock. `hard`: the loud layer, brighter, with more knock.
    static func grandPiano(_ note: Int, hard: Bool) -> Tone {
        let stiffness = 0.00008 * FastMath.exp2(Double(note - 60) / 18)
        let partials = (1...40).map { index -> Partial in
            let k = Double(index)
            let ratio = k * FastMath.squareRoot(1 + stiffness * k * k)
            let tilt = slope(k, hard ? 0.9 : 1.5) * (0.25 + pluckPosition(k, 0.12))
            return Partial(
                ratio: ratio, amplitude: tilt, decay: keyScaled(1.6, note) / (1 + 0.18 * (k - 1)))
        }
        return Tone(
            partials: partials, recorded: note < 50 ? 0.8 : 0.6, loop: 0.2,
            noise: [NoiseBand(level: hard ? 0.25 : 0.08, low: 200, high: hard ? 5000 : 2000, decay: 0.012)],
            stereoSpread: 0.35)
    }

    /// Electric piano 1 (tine and pickup): a strong fundamental and a bell-like tine partial that dies fast.
    static func tinePiano(_ note: Int) -> Tone {
        Tone(
            partials: [
                Partial(ratio: 1, amplitude: 1, decay: keyScaled(2.2, note)),
                Partial(ratio: 2, amplitude: 0.35, decay: keyScaled(1.0, note)),
                Partial(ratio: 3, amplitude: 0.12, decay: keyScaled(0.5, note)),
                Partial(ratio: 4, amplitude: 0.05, decay: 0.3),
                Partial(ratio: 7.1, amplitude: 0.18, decay: 0.07),
                Partial(ratio: 14.3, amplitude: 0.06, decay: 0.03),
            ], recorded: 0.5, loop: 0.15)
    }

    /// Electric piano 2 (FM-style): sine body and inharmonic metallic sidebands.
    static func fmPiano(_ note: Int) -> Tone {
        Tone(
            partials: [
                Partial(ratio: 1, amplitude: 1, decay: keyScaled(2.5, note)),
                Partial(ratio: 2, amplitude: 0.2, decay: keyScaled(1.2, note)),
                Partial(ratio: 3, amplitude: 0.08, decay: 0.6),
                Partial(ratio: 11, amplitude: 0.25, decay: 0.12),
                Partial(ratio: 13, amplitude: 0.12, decay: 0.09),
                Partial(ratio: 19, amplitude: 0.06, decay: 0.05),
            ], recorded: 0.5, loop: 0.15)
    }

    /// Harpsichord: a quill plucks close to the nut: bright, long high partials.
    static func harpsichord(_ note: Int) -> Tone {
        Tone(
            partials: harmonics(36) { k in
                (slope(k, 0.6) * (0.15 + pluckPosition(k, 0.11)), keyScaled(2.4, note) / (1 + 0.06 * (k - 1)))
            }, recorded: 0.5, loop: 0.15,
            noise: [NoiseBand(level: 0.06, low: 1500, high: 8000, decay: 0.008)])
    }

    /// Clavinet: struck near the pickup end: nasal, thin, quick.
    static func clavinet(_ note: Int) -> Tone {
        Tone(
            partials: harmonics(30) { k in
                (slope(k, 0.6) * (0.3 + pluckPosition(k, 0.08)), keyScaled(2.5, note) / (1 + 0.08 * (k - 1)))
            }, recorded: 0.5, loop: 0.1, drive: 1.3)
    }

    // MARK: Chromatic percussion

    /// A struck bar, bell or tine: inharmonic modes (ratio, level, decay), a mallet knock, optional loop.
    static func struck(_ modes: [(Double, Double, Double)], knock: Double, recorded: Double, looped: Bool) -> Tone {
        Tone(
            partials: modes.map { Partial(ratio: $0.0, amplitude: $0.1, decay: $0.2) }, recorded: recorded,
            loop: looped ? 0.1 : nil,
            noise: knock > 0 ? [NoiseBand(level: knock, low: 800, high: 8000, decay: 0.004)] : [])
    }

    static func celesta(_ note: Int) -> Tone {
        struck(
            [(1, 1, 1.2), (2, 0.12, 0.5), (3.95, 0.08, 0.2), (6.1, 0.03, 0.08)], knock: 0.08, recorded: 0.5,
            looped: true)
    }
    static func glockenspiel(_ note: Int) -> Tone {
        struck(
            [(1, 1, 2), (2.76, 0.5, 0.8), (5.40, 0.3, 0.4), (8.93, 0.2, 0.2)], knock: 0.1, recorded: 0.5, looped: true)
    }
    static func musicBox(_ note: Int) -> Tone {
        struck(
            [(1, 1, 1.4), (3.0, 0.08, 0.4), (5.8, 0.2, 0.15), (11.7, 0.08, 0.05)], knock: 0.2, recorded: 0.5,
            looped: true)
    }
    static func vibraphone(_ note: Int) -> Tone {
        struck([(1, 1, 3), (4, 0.3, 0.9), (10, 0.08, 0.25)], knock: 0.06, recorded: 0.5, looped: true)
    }
    static func marimba(_ note: Int) -> Tone {
        struck(
            [(1, 1, keyScaled(0.6, note)), (3.93, 0.3, 0.12), (9.2, 0.08, 0.04)], knock: 0.05, recorded: 0.7,
            looped: false)
    }
    static func xylophone(_ note: Int) -> Tone {
        struck(
            [(1, 1, 0.35), (3.0, 0.5, 0.15), (6.0, 0.2, 0.07), (9.9, 0.1, 0.03)], knock: 0.15, recorded: 0.6,
            looped: false)
    }
    static func tubularBell(_ note: Int) -> Tone {
        struck(
            [
                (0.5, 0.2, 2), (1, 1, 4), (2.0, 0.5, 3), (3.01, 0.45, 2), (4.16, 0.3, 1), (5.43, 0.2, 0.7),
                (6.79, 0.1, 0.4),
            ],
            knock: 0.1, recorded: 0.8, looped: true)
    }
    /// Timpani: a kettle-loaded membrane whose modes fall near harmonic ratios, so it has a pitch.
    static func timpani(_ note: Int) -> Tone {
        struck(
            [(1, 1, 3), (1.5, 0.6, 2), (1.99, 0.4, 1.5), (2.44, 0.25, 1), (2.89, 0.15, 0.7)], knock: 0.1,
            recorded: 0.8, looped: true)
    }
    static func steelDrum(_ note: Int) -> Tone {
        struck(
            [(1, 1, 1.2), (2.0, 0.6, 0.6), (3.0, 0.25, 0.3), (3.95, 0.15, 0.15)], knock: 0.05, recorded: 0.5,
            looped: true)
    }
    static func kalimba(_ note: Int) -> Tone {
        struck([(1, 1, 0.9), (6.3, 0.12, 0.06), (11.5, 0.04, 0.03)], knock: 0.1, recorded: 0.5, looped: true)
    }

    // MARK: Organs and free reeds

    /// Drawbar organ: the nine footages (16′ 8′ 5⅓′ 4′ 2⅔′ 2′ 1⅗′ 1⅓′ 1′)
    /// as partial ratios, with key click. `percussion`: the decaying third-harmonic percussion;
    /// `drive`: a rock organ's overdriven amp.
    static func drawbar(_ note: Int, percussion: Bool = false, drive: Double = 0) -> Tone {
        let bars: [(Double, Double)] = [
            (0.5, 0.7), (1, 1), (1.5, 0.6), (2, 0.7), (3, 0.3), (4, 0.35), (5, 0.1), (6, 0.15), (8, 0.2),
        ]
        var partials = bars.map { Partial(ratio: $0.0, amplitude: $0.1, attack: 0.003) }
        if percussion { partials.append(Partial(ratio: 3, amplitude: 1.2, decay: 0.25)) }
        return Tone(
            partials: partials, recorded: percussion ? 0.6 : 0.1, loop: 0.1,
            noise: [NoiseBand(level: 0.08, low: 1000, high: 6000, decay: 0.004)], drive: drive, stereoSpread: 0.1)
    }

    /// Church organ: a principal chorus (8′ 4′ 2⅔′ 2′ and a mixture) with a breathy chiff on the attack.
    static func pipeOrgan(_ note: Int) -> Tone {
        let levels: [Double] = [
            1, 0.7, 0.45, 0.55, 0.2, 0.35, 0.1, 0.3, 0.08, 0.12, 0.05, 0.15, 0.04, 0.05, 0.03, 0.08,
        ]
        return Tone(
            partials: levels.enumerated().map {
                Partial(ratio: Double($0.offset + 1), amplitude: $0.element, attack: 0.02 + 0.004 * Double($0.offset))
            }, recorded: 0.15, loop: 0.1,
            noise: [NoiseBand(level: 0.1, low: 800, high: 5000, decay: 0.03)], stereoSpread: 0.4)
    }

    /// A free reed (accordion, reed organ, harmonica): a bright buzzy spectrum through a reed-chamber formant.
    static func freeReed(_ note: Int, formant: Double, power: Double, breath: Double) -> Tone {
        let f0 = hz(note)
        return Tone(
            partials: harmonics(30) { k in
                (slope(k, power) * formants(k * f0, [(formant, 1, formant * 0.8)], floor: 0.15), .infinity)
            }.map { Partial(ratio: $0.ratio, amplitude: $0.amplitude, attack: 0.015) }, recorded: 0.08, loop: 0.1,
            noise: breath > 0 ? [NoiseBand(level: breath, low: 1000, high: 5000)] : [])
    }

    // MARK: Guitars and plucked strings

    /// A plucked string: harmonics with a pluck-position comb and a spectral slope, higher ones fading
    /// faster, a short pluck noise. `drive`: the amp's overdrive (electric guitars).
    static func plucked(
        _ note: Int, position: Double, power: Double, ring: Double, damping: Double, count: Int = 36,
        pick: Double = 0.05, drive: Double = 0, recorded: Double = 0.5, looped: Bool = true
    ) -> Tone {
        Tone(
            partials: harmonics(count) { k in
                (slope(k, power) * (0.05 + pluckPosition(k, position)), keyScaled(ring, note) / (1 + damping * (k - 1)))
            }, recorded: recorded, loop: looped ? 0.15 : nil,
            noise: pick > 0 ? [NoiseBand(level: pick, low: 1000, high: 7000, decay: 0.006)] : [], drive: drive)
    }

    static func nylonGuitar(_ note: Int) -> Tone { plucked(note, position: 0.14, power: 1.2, ring: 2.0, damping: 0.25) }
    static func steelGuitar(_ note: Int) -> Tone {
        plucked(note, position: 0.12, power: 0.8, ring: 2.5, damping: 0.1, pick: 0.1)
    }
    static func electricGuitar(_ note: Int) -> Tone {
        plucked(note, position: 0.22, power: 0.9, ring: 3.0, damping: 0.15, pick: 0.04)
    }
    static func overdrivenGuitar(_ note: Int) -> Tone {
        plucked(note, position: 0.22, power: 0.8, ring: 6, damping: 0.05, count: 24, pick: 0.02, drive: 2.2)
    }
    static func distortionGuitar(_ note: Int) -> Tone {
        var tone = plucked(note, position: 0.2, power: 0.7, ring: 8, damping: 0.04, count: 24, pick: 0.02, drive: 6)
        // A second, slightly detuned string (a double-tracked part): the distortion's intermodulation.
        tone.voices = [(0, 1), (7, 0.7)]
        tone.loop = 0.5
        return tone
    }
    static func guitarHarmonics(_ note: Int) -> Tone {
        Tone(
            partials: [
                Partial(ratio: 1, amplitude: 1, decay: keyScaled(3, note)),
                Partial(ratio: 2, amplitude: 0.08, decay: 1), Partial(ratio: 3, amplitude: 0.05, decay: 0.5),
            ], recorded: 0.6, loop: 0.1, noise: [NoiseBand(level: 0.05, low: 1000, high: 6000, decay: 0.005)])
    }
    static func harp(_ note: Int) -> Tone {
        plucked(note, position: 0.3, power: 1.5, ring: 3.0, damping: 0.15, pick: 0.01)
    }
    static func pizzicato(_ note: Int) -> Tone {
        plucked(note, position: 0.2, power: 1.2, ring: 0.45, damping: 0.25, pick: 0.02, recorded: 0.7, looped: false)
    }
    static func banjo(_ note: Int) -> Tone {
        plucked(note, position: 0.08, power: 0.6, ring: 1.5, damping: 0.05, pick: 0.15)
    }
    static func koto(_ note: Int) -> Tone {
        plucked(note, position: 0.18, power: 1.0, ring: 1.8, damping: 0.2, pick: 0.08)
    }
    /// Sitar: the bridge (jawari) keeps high partials ringing and buzzing: they decay slower than the low ones.
    static func sitar(_ note: Int) -> Tone {
        Tone(
            partials: harmonics(40) { k in
                (slope(k, 0.5) * (0.2 + pluckPosition(k, 0.1)), keyScaled(1.8, note) * (0.6 + 0.03 * k))
            }, recorded: 0.6, loop: 0.15, noise: [NoiseBand(level: 0.08, low: 2000, high: 8000, decay: 0.01)])
    }

    // MARK: Basses

    static func uprightBass(_ note: Int) -> Tone {
        var tone = plucked(note, position: 0.25, power: 1.4, ring: 1.4, damping: 0.3, count: 24, pick: 0)
        tone.noise = [NoiseBand(level: 0.15, low: 60, high: 600, decay: 0.02)]
        return tone
    }
    static func fingerBass(_ note: Int) -> Tone {
        plucked(note, position: 0.2, power: 1.0, ring: 2.2, damping: 0.15, count: 30, pick: 0.01)
    }
    /// Slap: the thumb bounces the string off the frets: bright, with a pop, quick high decay.
    static func slapBass(_ note: Int) -> Tone {
        plucked(note, position: 0.1, power: 0.6, ring: 3, damping: 0.12, count: 40, pick: 0.12, drive: 1.5)
    }
    /// Analogue synth bass: a saw (or a square-ish pulse) for the SF2 filter envelope to sweep.
    static func synthBass(_ note: Int, pulse: Bool) -> Tone {
        Tone(
            partials: harmonics(40) { k in (pulse && Int(k) % 2 == 0 ? 0.15 / k : 1 / k, .infinity) }, recorded: 0.02,
            loop: 0.05, stereoSpread: 0)
    }

    // MARK: Strings, voices, ensembles

    /// A bowed string: a saw-like Helmholtz motion through body resonances (main air and wood modes, the
    /// bridge hill near 2.5 kHz), higher partials speaking a little later, some bow noise.
    static func bowedString(_ note: Int, voices: [(cents: Double, gain: Double)] = [(0, 1)], loop: Double = 0.2) -> Tone
    {
        let f0 = hz(note)
        let body: [(Double, Double, Double)] = [(280, 0.8, 60), (450, 0.6, 80), (1000, 0.4, 300), (2500, 0.9, 700)]
        let count = min(40, Int(8000 / f0))
        let partials = (1...max(4, count)).map { index -> Partial in
            let k = Double(index)
            return Partial(
                ratio: k, amplitude: (1 / k) * formants(k * f0, body, floor: 0.25), attack: 0.04 + 0.004 * k)
        }
        return Tone(
            partials: partials, recorded: 0.2, loop: loop, voices: voices,
            noise: [NoiseBand(level: 0.015, low: 2000, high: 7000)])
    }

    static func stringEnsemble(_ note: Int) -> Tone {
        bowedString(note, voices: [(-9, 0.8), (0, 1), (7, 0.8), (15, 0.5)], loop: 0.8)
    }

    /// A sung vowel: a glottal spectrum (−12 dB per octave above the second harmonic) through three formants.
    /// `ensemble`: several detuned singers.
    static func voice(_ note: Int, vowel: [(Double, Double, Double)], ensemble: Bool) -> Tone {
        let f0 = hz(note)
        let count = min(40, Int(6000 / f0))
        let partials = (1...max(3, count)).map { index -> Partial in
            let k = Double(index)
            return Partial(ratio: k, amplitude: slope(k, 1.2) * formants(k * f0, vowel, floor: 0.02), attack: 0.08)
        }
        return Tone(
            partials: partials, recorded: 0.25, loop: ensemble ? 0.8 : 0.3,
            voices: ensemble ? [(-10, 0.8), (0, 1), (9, 0.8), (17, 0.5)] : [(0, 1)],
            noise: [NoiseBand(level: 0.01, low: 2000, high: 6000)])
    }
    static let vowelAh: [(Double, Double, Double)] = [(750, 1, 90), (1150, 0.5, 110), (2800, 0.2, 150)]
    static let vowelOo: [(Double, Double, Double)] = [(320, 1, 60), (800, 0.4, 80), (2300, 0.05, 120)]

    /// Orchestra hit: root, fifth and octave of a brassy chord struck and cut short.
    static func orchestraHit(_ note: Int) -> Tone {
        var partials: [Partial] = []
        for (interval, level) in [(1.0, 1.0), (1.5, 0.7), (2.0, 0.6), (0.5, 0.5)] {
            for k in 1...12 {
                partials.append(Partial(ratio: interval * Double(k), amplitude: level / Double(k), decay: 0.6))
            }
        }
        return Tone(
            partials: partials, recorded: 0.9, loop: nil,
            noise: [NoiseBand(level: 0.15, low: 200, high: 6000, decay: 0.05)], drive: 1.5, randomPhases: true)
    }

    // MARK: Brass, reeds, pipes

    /// Brass: a lip-buzz spectrum, rich and rising with brightness, higher partials entering later (the
    /// "blat"); `power` sets the tilt (trumpet bright, horn mellow).
    static func brass(_ note: Int, power: Double, formant: Double) -> Tone {
        let f0 = hz(note)
        let count = min(36, max(6, Int(9000 / f0)))
        return Tone(
            partials: (1...count).map { index in
                let k = Double(index)
                return Partial(
                    ratio: k, amplitude: slope(k, power) * formants(k * f0, [(formant, 1, formant)], floor: 0.3),
                    attack: 0.015 + 0.006 * k)
            }, recorded: 0.25, loop: 0.15, noise: [NoiseBand(level: 0.04, low: 500, high: 3000, decay: 0.03)])
    }

    /// Single and double reeds: `formantsAt` are the bore's resonances; `oddOnly` the clarinet's closed pipe.
    static func reed(
        _ note: Int, peaks: [(Double, Double, Double)], power: Double, oddOnly: Bool = false, breath: Double
    )
        -> Tone
    {
        let f0 = hz(note)
        let count = min(32, max(5, Int(8000 / f0)))
        return Tone(
            partials: (1...count).map { index in
                let k = Double(index)
                let odd = oddOnly && index % 2 == 0 ? 0.08 : 1
                return Partial(
                    ratio: k, amplitude: odd * slope(k, power) * formants(k * f0, peaks, floor: 0.2),
                    attack: 0.02 + 0.003 * k)
            }, recorded: 0.15, loop: 0.15, noise: [NoiseBand(level: breath, low: 1500, high: 6000)])
    }

    /// Flutes and pipes: a nearly pure tone, steady breath, and a chiff on the attack.
    static func pipe(_ note: Int, breath: Double, second: Double) -> Tone {
        Tone(
            partials: [
                Partial(ratio: 1, amplitude: 1, attack: 0.03), Partial(ratio: 2, amplitude: second, attack: 0.02),
                Partial(ratio: 3, amplitude: 0.06, attack: 0.02), Partial(ratio: 4, amplitude: 0.02, attack: 0.02),
            ], recorded: 0.15, loop: 0.15,
            noise: [
                NoiseBand(level: breath, low: 800, high: 6000),
                NoiseBand(level: 0.15, low: 1000, high: 6000, decay: 0.02),
            ])
    }

    // MARK: Synth leads and pads

    static func square(_ note: Int) -> Tone {
        Tone(
            partials: harmonics(40) { k in (Int(k) % 2 == 1 ? 1 / k : 0, .infinity) }.filter { $0.amplitude > 0 },
            recorded: 0.02, loop: 0.05, stereoSpread: 0)
    }
    static func saw(_ note: Int) -> Tone {
        Tone(partials: harmonics(48) { k in (1 / k, .infinity) }, recorded: 0.02, loop: 0.05, stereoSpread: 0)
    }
    /// A detuned saw ensemble (synth strings, polysynth, brightness).
    static func sawEnsemble(_ note: Int) -> Tone {
        Tone(
            partials: harmonics(32) { k in (1 / k, .infinity) }, recorded: 0.05, loop: 0.8,
            voices: [(-12, 0.8), (0, 1), (11, 0.8)])
    }
    /// A warm pad: soft, rounded partials from three slowly beating oscillators.
    static func warmPad(_ note: Int) -> Tone {
        Tone(
            partials: harmonics(16) { k in (slope(k, 1.8), .infinity) }, recorded: 0.05, loop: 0.8,
            voices: [(-8, 0.8), (0, 1), (7, 0.8)])
    }
    /// A metallic pad: a steady inharmonic cluster (glass, bowed metal).
    static func metallicPad(_ note: Int) -> Tone {
        Tone(
            partials: [(1.0, 1.0), (2.01, 0.5), (2.76, 0.35), (3.98, 0.2), (5.40, 0.2), (7.1, 0.1)].map {
                Partial(ratio: $0.0, amplitude: $0.1, attack: 0.1)
            }, recorded: 0.3, loop: 0.5, voices: [(-6, 1), (0, 0.7), (6, 1)], drive: 1.2, randomPhases: true)
    }

    /// Steady noise, for the sound effects the SF2 filter and LFOs shape (breath, seashore, helicopter,
    /// applause).
    static func noiseLoop(_ note: Int) -> Tone {
        // Soft-clipped: noise's rare high peaks would otherwise set the sample's scale and leave it quiet.
        Tone(partials: [], recorded: 0.05, loop: 1.5, noise: [NoiseBand(level: 1, low: 40, high: 10_000)], drive: 2)
    }
}

/// The bundled font's General MIDI drum kit (bank 128, program 0): one synthesised one-shot per GM key 35–81,
/// each its own sound, with the choke groups GM implies (an `exclusiveClass` per group: a closed or pedal
/// hi-hat cuts the open one, a short whistle, guiro, cuica or muted triangle cuts its long partner).
///
/// Threads: control side, generation time.
enum DrumKit {
    typealias Mode = PercussionSynthesis.Mode
    typealias Noise = PercussionSynthesis.Noise
    typealias Metal = PercussionSynthesis.Metal

    /// One key of the kit.
    struct Drum {
        var key: UInt8
        var name: String
        /// Length of the sample in seconds (the note rings to the end whatever the note-off).
        var seconds: Double
        /// Level against the loudest drums, in dB (≤ 0).
        var gain: Double
        /// SF2 exclusive class (0: none).
        var chokeGroup: Int16 = 0
        var modes: [Mode] = []
        var noise: [Noise] = []
        var metal: [Metal] = []
        var drive: Double = 0
        /// Skins and low drums need less bandwidth than metal.
        var sampleRate = 32_000
    }

    /// The TR-808's six hi-hat/cymbal oscillators (Hz), the classic metallic cluster.
    static let hatSquares: [Double] = [205.3, 304.4, 369.6, 522.7, 540.0, 800.0]

    static func kick(_ key: UInt8, _ name: String, hertz: Double, decay: Double, bend: Double, click: Double) -> Drum {
        Drum(
            key: key, name: name, seconds: 0.6, gain: 0,
            modes: [
                Mode(hertz: hertz, level: 1, decay: decay, bend: bend, bendTime: 0.025),
                Mode(hertz: hertz * 1.6, level: 0.2, decay: decay * 0.3, bend: bend, bendTime: 0.02),
            ],
            noise: [Noise(level: click, low: 1500, high: 7000, decay: 0.004)], sampleRate: 22_050)
    }

    static func tom(_ key: UInt8, _ name: String, hertz: Double) -> Drum {
        let decay = 0.5 * 100 / (hertz + 40)
        return Drum(
            key: key, name: name, seconds: 0.7, gain: -2,
            modes: [
                Mode(hertz: hertz, level: 1, decay: decay, bend: 0.25, bendTime: 0.04),
                Mode(hertz: hertz * 1.59, level: 0.35, decay: decay * 0.6, bend: 0.2),
                Mode(hertz: hertz * 2.14, level: 0.2, decay: decay * 0.4, bend: 0.2),
            ],
            noise: [Noise(level: 0.25, low: 300, high: 5000, decay: 0.02)], sampleRate: 22_050)
    }

    static func snare(_ key: UInt8, _ name: String, hertz: Double, snares: Double, bright: Double) -> Drum {
        Drum(
            key: key, name: name, seconds: 0.5, gain: 0,
            modes: [
                Mode(hertz: hertz, level: 0.8, decay: 0.06, bend: 0.1),
                Mode(hertz: hertz * 1.76, level: 0.4, decay: 0.04, bend: 0.1),
            ],
            noise: [
                Noise(level: 1, low: 1500, high: bright, decay: snares),
                Noise(level: 0.5, low: 200, high: 1500, decay: 0.03),
            ])
    }

    static func cymbal(
        _ key: UInt8, _ name: String, seconds: Double, decay: Double, band: Double, partials: Int, low: Double,
        high: Double, squares: Double, noise: Double, seed: UInt32, gain: Double
    ) -> Drum {
        Drum(
            key: key, name: name, seconds: seconds, gain: gain,
            noise: [
                Noise(level: noise, low: band, high: 14_000, decay: decay * 0.6),
                Noise(level: noise * 1.5, low: 2000, high: 12_000, decay: 0.01),
            ],
            metal: [
                Metal(
                    squares: hatSquares.map { $0 * (1 + 0.37 * Double(seed % 5)) }, squareLevel: squares,
                    partials: partials, low: low, high: high, level: 1, decay: decay, band: band, seed: seed)
            ])
    }

    static func hat(_ key: UInt8, _ name: String, decay: Double, seconds: Double, chick: Double) -> Drum {
        Drum(
            key: key, name: name, seconds: seconds, gain: -3, chokeGroup: 1,
            noise: [
                Noise(level: 0.6, low: 7000, high: 15_000, decay: decay),
                Noise(level: chick, low: 500, high: 3000, decay: 0.01),
            ],
            metal: [
                Metal(
                    squares: hatSquares.map { $0 * 1.7 }, squareLevel: 0.4, partials: 20, low: 6000, high: 14_000,
                    level: 1, decay: decay, band: 6500, seed: 42)
            ])
    }

    /// A struck bell, block or bar: modes at these frequencies (Hz) with their levels and decays.
    static func struck(
        _ key: UInt8, _ name: String, seconds: Double, gain: Double, choke: Int16 = 0,
        _ modes: [(Double, Double, Double)],
        knock: Double = 0.1
    ) -> Drum {
        Drum(
            key: key, name: name, seconds: seconds, gain: gain, chokeGroup: choke,
            modes: modes.map { Mode(hertz: $0.0, level: $0.1, decay: $0.2) },
            noise: knock > 0 ? [Noise(level: knock, low: 1000, high: 9000, decay: 0.003)] : [])
    }

    /// A hand drum: a skin's modes, and a slap (noise) for muted or slapped strokes.
    static func handDrum(_ key: UInt8, _ name: String, hertz: Double, decay: Double, slap: Double) -> Drum {
        Drum(
            key: key, name: name, seconds: max(0.3, min(0.8, decay * 4)), gain: -2,
            modes: [
                Mode(hertz: hertz, level: 1, decay: decay, bend: 0.06),
                Mode(hertz: hertz * 1.5, level: 0.4, decay: decay * 0.6, bend: 0.05),
                Mode(hertz: hertz * 2.2, level: 0.2, decay: decay * 0.4),
            ],
            noise: [Noise(level: slap, low: 800, high: 6000, decay: 0.012)], sampleRate: 22_050)
    }

    /// A pitch glide for the whistles and cuicas: a mode swept from `from` to `to` Hz is approximated by a bent
    /// mode (bend = from/to − 1) with a slow bend time.
    static func glide(_ key: UInt8, _ name: String, from: Double, to: Double, seconds: Double, choke: Int16) -> Drum {
        Drum(
            key: key, name: name, seconds: seconds, gain: -4, chokeGroup: choke,
            modes: [
                Mode(hertz: to, level: 1, decay: seconds * 0.5, bend: from / to - 1, bendTime: seconds * 0.3),
                Mode(hertz: to * 2, level: 0.25, decay: seconds * 0.4, bend: from / to - 1, bendTime: seconds * 0.3),
            ],
            noise: [Noise(level: 0.1, low: 300, high: 3000, decay: seconds * 0.4)])
    }

    /// A whistle: a high tone trilled by a pea (a fast alternation of two pitches, made from close modes
    /// beating at the trill rate), breath noise.
    static func whistle(_ key: UInt8, _ name: String, seconds: Double) -> Drum {
        Drum(
            key: key, name: name, seconds: seconds, gain: -8, chokeGroup: 2,
            modes: [
                Mode(hertz: 2450, level: 1, decay: seconds * 2), Mode(hertz: 2480, level: 0.8, decay: seconds * 2),
                Mode(hertz: 2525, level: 0.6, decay: seconds * 2),
            ],
            noise: [Noise(level: 0.2, low: 2000, high: 4000, decay: seconds)])
    }

    /// A guiro scrape: a train of tiny strikes on a hollow gourd (bursts of band noise).
    static func guiro(_ key: UInt8, _ name: String, seconds: Double, strokes: Int) -> Drum {
        let spacing = seconds * 0.8 / Double(strokes)
        return Drum(
            key: key, name: name, seconds: seconds, gain: -4, chokeGroup: 3,
            noise: [
                Noise(
                    level: 1, low: 1800, high: 5000, decay: 0.01, bursts: (0..<strokes).map { Double($0) * spacing },
                    burstDecay: 0.006)
            ])
    }

    /// Every key 35–81.
    static let drums: [Drum] = [
        kick(35, "Acoustic Bass Drum", hertz: 48, decay: 0.3, bend: 0.8, click: 0.15),
        kick(36, "Bass Drum 1", hertz: 58, decay: 0.22, bend: 1.6, click: 0.4),
        Drum(
            key: 37, name: "Side Stick", seconds: 0.25, gain: -4,
            modes: [Mode(hertz: 420, level: 0.6, decay: 0.03), Mode(hertz: 1650, level: 0.5, decay: 0.015)],
            noise: [Noise(level: 1, low: 2000, high: 9000, decay: 0.004)]),
        snare(38, "Acoustic Snare", hertz: 185, snares: 0.14, bright: 9000),
        Drum(
            key: 39, name: "Hand Clap", seconds: 0.4, gain: -2,
            noise: [
                Noise(
                    level: 1, low: 800, high: 3500, decay: 0.09, bursts: [0, 0.011, 0.022, 0.033], burstDecay: 0.006)
            ]),
        snare(40, "Electric Snare", hertz: 225, snares: 0.1, bright: 12_000),
        tom(41, "Low Floor Tom", hertz: 82),
        hat(42, "Closed Hi-Hat", decay: 0.035, seconds: 0.25, chick: 0),
        tom(43, "High Floor Tom", hertz: 98),
        hat(44, "Pedal Hi-Hat", decay: 0.05, seconds: 0.3, chick: 0.5),
        tom(45, "Low Tom", hertz: 117),
        hat(46, "Open Hi-Hat", decay: 0.45, seconds: 1.5, chick: 0),
        tom(47, "Low-Mid Tom", hertz: 139),
        tom(48, "Hi-Mid Tom", hertz: 165),
        cymbal(
            49, "Crash Cymbal 1", seconds: 2.5, decay: 0.9, band: 2500, partials: 60, low: 1500, high: 14_000,
            squares: 0.15, noise: 0.5, seed: 49, gain: -3),
        tom(50, "High Tom", hertz: 196),
        cymbal(
            51, "Ride Cymbal 1", seconds: 2.5, decay: 1.1, band: 3000, partials: 50, low: 2500, high: 12_000,
            squares: 0.05, noise: 0.15, seed: 51, gain: -7),
        {
            var china = cymbal(
                52, "Chinese Cymbal", seconds: 2, decay: 0.7, band: 900, partials: 40, low: 500, high: 8000,
                squares: 0.3, noise: 0.4, seed: 52, gain: -5)
            china.drive = 2.5
            return china
        }(),
        Drum(
            key: 53, name: "Ride Bell", seconds: 2, gain: -6,
            modes: [
                Mode(hertz: 1210, level: 0.5, decay: 0.9), Mode(hertz: 2530, level: 0.4, decay: 0.7),
                Mode(hertz: 3470, level: 0.3, decay: 0.5), Mode(hertz: 5010, level: 0.2, decay: 0.35),
            ],
            noise: [Noise(level: 0.3, low: 2000, high: 9000, decay: 0.003)],
            metal: [
                Metal(
                    squares: [], squareLevel: 0, partials: 30, low: 3000, high: 12_000, level: 0.3, decay: 0.8,
                    band: 3000, seed: 53)
            ]),
        Drum(
            key: 54, name: "Tambourine", seconds: 0.6, gain: -5,
            noise: [
                Noise(level: 0.6, low: 6000, high: 14_000, decay: 0.12, bursts: [0, 0.03], burstDecay: 0.02),
                Noise(level: 0.2, low: 300, high: 1200, decay: 0.02),
            ],
            metal: [
                Metal(
                    squares: [], squareLevel: 0, partials: 40, low: 5000, high: 13_000, level: 0.8, decay: 0.12,
                    band: 4500, seed: 54)
            ]),
        cymbal(
            55, "Splash Cymbal", seconds: 1.4, decay: 0.35, band: 4000, partials: 40, low: 3000, high: 15_000,
            squares: 0.1, noise: 0.5, seed: 55, gain: -5),
        Drum(
            key: 56, name: "Cowbell", seconds: 0.6, gain: -6,
            modes: [
                Mode(hertz: 562, level: 0.6, decay: 0.18), Mode(hertz: 845, level: 1, decay: 0.12),
                Mode(hertz: 1415, level: 0.35, decay: 0.08), Mode(hertz: 1980, level: 0.2, decay: 0.05),
            ],
            noise: [Noise(level: 0.2, low: 2000, high: 8000, decay: 0.003)]),
        cymbal(
            57, "Crash Cymbal 2", seconds: 2.5, decay: 0.75, band: 3500, partials: 60, low: 2000, high: 15_000,
            squares: 0.2, noise: 0.6, seed: 57, gain: -3),
        Drum(
            key: 58, name: "Vibraslap", seconds: 1.2, gain: -6,
            modes: [Mode(hertz: 2300, level: 0.05, decay: 0.5), Mode(hertz: 3900, level: 0.03, decay: 0.4)],
            noise: [
                Noise(
                    level: 1, low: 1500, high: 6000, decay: 0.3, bursts: (0..<30).map { Double($0) * 0.032 },
                    burstDecay: 0.004)
            ]),
        cymbal(
            59, "Ride Cymbal 2", seconds: 2.5, decay: 1.3, band: 2200, partials: 50, low: 1800, high: 10_000,
            squares: 0.08, noise: 0.2, seed: 59, gain: -7),
        handDrum(60, "Hi Bongo", hertz: 430, decay: 0.1, slap: 0.4),
        handDrum(61, "Low Bongo", hertz: 300, decay: 0.14, slap: 0.3),
        handDrum(62, "Mute Hi Conga", hertz: 340, decay: 0.04, slap: 0.9),
        handDrum(63, "Open Hi Conga", hertz: 330, decay: 0.22, slap: 0.2),
        handDrum(64, "Low Conga", hertz: 225, decay: 0.26, slap: 0.2),
        Drum(
            key: 65, name: "High Timbale", seconds: 0.7, gain: -4,
            modes: [
                Mode(hertz: 640, level: 1, decay: 0.2, bend: 0.04), Mode(hertz: 1010, level: 0.5, decay: 0.15),
                Mode(hertz: 2250, level: 0.3, decay: 0.3), Mode(hertz: 3320, level: 0.2, decay: 0.25),
            ],
            noise: [Noise(level: 0.6, low: 2000, high: 9000, decay: 0.01)]),
        Drum(
            key: 66, name: "Low Timbale", seconds: 0.7, gain: -4,
            modes: [
                Mode(hertz: 450, level: 1, decay: 0.25, bend: 0.04), Mode(hertz: 720, level: 0.5, decay: 0.18),
                Mode(hertz: 1800, level: 0.3, decay: 0.3), Mode(hertz: 2900, level: 0.2, decay: 0.25),
            ],
            noise: [Noise(level: 0.5, low: 1500, high: 8000, decay: 0.01)]),
        struck(67, "High Agogo", seconds: 0.6, gain: -6, [(925, 1, 0.3), (2410, 0.4, 0.15), (4180, 0.2, 0.08)]),
        struck(68, "Low Agogo", seconds: 0.6, gain: -6, [(650, 1, 0.35), (1700, 0.4, 0.18), (2950, 0.2, 0.1)]),
        Drum(
            key: 69, name: "Cabasa", seconds: 0.35, gain: -8,
            noise: [Noise(level: 1, low: 5000, high: 14_000, attack: 0.02, decay: 0.05, grain: 400)]),
        Drum(
            key: 70, name: "Maracas", seconds: 0.25, gain: -8,
            noise: [Noise(level: 1, low: 3500, high: 10_000, attack: 0.005, decay: 0.03, grain: 900)]),
        whistle(71, "Short Whistle", seconds: 0.2),
        whistle(72, "Long Whistle", seconds: 0.7),
        guiro(73, "Short Guiro", seconds: 0.15, strokes: 5),
        guiro(74, "Long Guiro", seconds: 0.5, strokes: 16),
        struck(75, "Claves", seconds: 0.3, gain: -5, [(2500, 1, 0.04), (6700, 0.2, 0.015)], knock: 0.2),
        struck(76, "Hi Wood Block", seconds: 0.3, gain: -5, [(1180, 1, 0.05), (2650, 0.4, 0.025)], knock: 0.3),
        struck(77, "Low Wood Block", seconds: 0.3, gain: -5, [(830, 1, 0.06), (1900, 0.4, 0.03)], knock: 0.3),
        glide(78, "Mute Cuica", from: 720, to: 560, seconds: 0.18, choke: 4),
        glide(79, "Open Cuica", from: 330, to: 520, seconds: 0.45, choke: 4),
        struck(
            80, "Mute Triangle", seconds: 0.25, gain: -10, choke: 5,
            [(1250, 0.5, 0.05), (3420, 1, 0.05), (5400, 0.6, 0.04), (7950, 0.4, 0.03), (10_200, 0.3, 0.03)],
            knock: 0.2),
        struck(
            81, "Open Triangle", seconds: 2, gain: -10, choke: 5,
            [(1250, 0.5, 0.9), (3420, 1, 1.2), (5400, 0.6, 0.9), (7950, 0.4, 0.7), (10_200, 0.3, 0.5)], knock: 0.2),
    ]

    /// The kit's samples, one per key.
    static func render(_ drum: Drum) -> [Double] {
        PercussionSynthesis.hit(
            seconds: drum.seconds, rate: drum.sampleRate, modes: drum.modes, noise: drum.noise, metal: drum.metal,
            drive: drum.drive, seed: UInt32(drum.key) &* 2_654_435_761)
    }
}

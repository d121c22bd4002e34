import AulosCore
import AulosDSP

/// The drums of the oscillator synth's kit: each a small model of its own, played on the drum channel (10
/// unless the host says otherwise) by General MIDI's percussion keys. Each has a tune, decay and level
/// parameter on the unit.
public enum SynthDrum: Int, CaseIterable, Sendable {
    case kick, snare, rim, clap, closedHat, pedalHat, openHat, lowTom, midTom, highTom, crash, ride, cowbell
    // General MIDI's Latin percussion and the rest of its key map (appended: parameter IDs never move).
    case tambourine, bongo, conga, timbale, agogo, cabasa, maracas, whistle, guiro, claves, woodBlock, cuica
    case triangle, vibraslap, rideBell, splash, chinaCymbal

    public var name: String {
        [
            "Kick", "Snare", "Rim", "Clap", "Closed Hat", "Pedal Hat", "Open Hat", "Low Tom", "Mid Tom", "High Tom",
            "Crash", "Ride", "Cowbell", "Tambourine", "Bongo", "Conga", "Timbale", "Agogo", "Cabasa", "Maracas",
            "Whistle", "Guiro", "Claves", "Wood Block", "Cuica", "Triangle", "Vibraslap", "Ride Bell", "Splash",
            "China Cymbal",
        ][rawValue]
    }

    /// The key used in preset files and rigs, e.g. `closedHatDecay`.
    public var key: String { String(describing: self) }

    /// What each drum has: tune in semitones, decay as a factor on the model's own, level in dB.
    public enum Control: Int, CaseIterable, Sendable {
        case tune, decay, level
        var suffix: String { ["Tune", "Decay", "Level"][rawValue] }

        /// `allCases.count`, as a value the render-side checker can see: each drum's slots in the unit.
        static var allCasesCount: Int { @inline(__always) @_noAllocation @_noLocks get { Self.level.rawValue + 1 } }
    }

    /// Parameter IDs: 1000 + 4 · drum + control, after the patch parameters.
    public func parameter(_ control: Control) -> ParameterID {
        ParameterID(UInt32(1000 + 4 * rawValue + control.rawValue))
    }

    /// The drum parameters, in the order of their slots after the patch's.
    public static var parameterInfos: [ParameterInfo] {
        allCases.flatMap { drum in
            [
                ParameterInfo(
                    id: drum.parameter(.tune), name: drum.name + " Tune", unit: .generic, range: -24...24,
                    defaultValue: 0),
                ParameterInfo(
                    id: drum.parameter(.decay), name: drum.name + " Decay", unit: .generic, range: 0.1...4,
                    defaultValue: 1),
                ParameterInfo(
                    id: drum.parameter(.level), name: drum.name + " Level", unit: .decibels, range: -60...6,
                    defaultValue: 0),
            ]
        }
    }

    /// The drum a General MIDI percussion key plays and its offset in semitones; nil for keys the kit leaves
    /// silent (below 35 and above 81). Control side (the kernel keeps the answer in a table).
    public static func playedBy(key: Int) -> (drum: SynthDrum, semitones: Float)? {
        switch key {
        case 35: (.kick, -3)
        case 36: (.kick, 0)
        case 37: (.rim, 0)
        case 38: (.snare, 0)
        case 39: (.clap, 0)
        case 40: (.snare, 3)
        case 41: (.lowTom, -4)
        case 42: (.closedHat, 0)
        case 43: (.lowTom, 0)
        case 44: (.pedalHat, 0)
        case 45: (.midTom, -3)
        case 46: (.openHat, 0)
        case 47: (.midTom, 0)
        case 48: (.highTom, -3)
        case 49: (.crash, 0)
        case 50: (.highTom, 0)
        case 51: (.ride, 0)
        case 52: (.chinaCymbal, 0)
        case 53: (.rideBell, 0)
        case 54: (.tambourine, 0)
        case 55: (.splash, 0)
        case 56: (.cowbell, 0)
        case 57: (.crash, 2)
        case 58: (.vibraslap, 0)
        case 59: (.ride, -2)
        case 60: (.bongo, 0)
        case 61: (.bongo, -5)
        case 62: (.conga, 2)
        case 63: (.conga, 0)
        case 64: (.conga, -5)
        case 65: (.timbale, 0)
        case 66: (.timbale, -5)
        case 67: (.agogo, 0)
        case 68: (.agogo, -4)
        case 69: (.cabasa, 0)
        case 70: (.maracas, 0)
        case 71: (.whistle, 0)
        case 72: (.whistle, -2)
        case 73: (.guiro, 0)
        case 74: (.guiro, -2)
        case 75: (.claves, 0)
        case 76: (.woodBlock, 0)
        case 77: (.woodBlock, -4)
        case 78: (.cuica, 5)
        case 79: (.cuica, 0)
        case 80: (.triangle, 0)
        case 81: (.triangle, 0)
        default: nil
        }
    }

    /// How much shorter a key plays its drum than the drum's own decay: the muted and short members of
    /// General MIDI's pairs (mute conga, short whistle and guiro, mute cuica and triangle). Control side.
    public static func decayFactor(key: Int) -> Float {
        switch key {
        case 62: 0.3
        case 71: 0.25
        case 73: 0.35
        case 78: 0.3
        case 80: 0.06
        default: 1
        }
    }

    /// The model's own sound before the unit's parameters: a pitched sine with a pitch envelope, filtered
    /// noise, and a metallic cluster of square waves at inharmonic ratios (a TR-808 cymbal), each with its
    /// level and decay.
    var model: DrumModel {
        switch self {
        case .kick:
            DrumModel(
                toneFrequency: 50, toneSweep: 3, sweepTime: 0.035, toneLevel: 1, toneDecay: 0.5, noiseLevel: 0.12,
                noiseDecay: 0.006, noiseMode: 0, noiseCutoff: 5000, pan: 0, level: -10)
        case .snare:
            DrumModel(
                toneFrequency: 185, toneSweep: 0.5, sweepTime: 0.02, toneLevel: 0.45, toneDecay: 0.12,
                noiseLevel: 0.7, noiseDecay: 0.2, noiseMode: 2, noiseCutoff: 4500, noiseResonance: 0.1, pan: 0,
                level: -1.8)
        case .rim:
            DrumModel(
                toneFrequency: 1650, toneSweep: 0, sweepTime: 0.01, toneLevel: 0.5, toneDecay: 0.025,
                noiseLevel: 0.45, noiseDecay: 0.012, noiseMode: 2, noiseCutoff: 3200, noiseResonance: 0.5, pan: -0.1)
        case .clap:
            DrumModel(
                noiseLevel: 1, noiseDecay: 0.28, noiseMode: 2, noiseCutoff: 1150, noiseResonance: 0.45, bursts: 3,
                pan: 0.05)
        case .closedHat:
            DrumModel(
                noiseLevel: 0.7, noiseDecay: 0.04, noiseMode: 1, noiseCutoff: 8000, metalLevel: 2,
                metalDecay: 0.05, metalCutoff: 7000, chokeGroup: 1, pan: 0.3, level: -1.8)
        case .pedalHat:
            DrumModel(
                noiseLevel: 0.5, noiseDecay: 0.03, noiseMode: 2, noiseCutoff: 5500, noiseResonance: 0.3,
                metalLevel: 2.2, metalDecay: 0.12, metalMode: 2, metalCutoff: 4200, metalBase: 0.9, chokeGroup: 1,
                pan: 0.3, level: -7.3)
        case .openHat:
            DrumModel(
                noiseLevel: 0.6, noiseDecay: 0.35, noiseMode: 1, noiseCutoff: 8000, metalLevel: 1.6,
                metalDecay: 0.5, metalCutoff: 7000, chokeGroup: 1, pan: 0.3, level: -14.8)
        case .lowTom:
            DrumModel(
                toneFrequency: 95, toneSweep: 0.7, sweepTime: 0.08, toneLevel: 0.9, toneDecay: 0.45,
                noiseLevel: 0.08, noiseDecay: 0.05, noiseMode: 2, noiseCutoff: 1200, pan: -0.3, level: -8.3)
        case .midTom:
            DrumModel(
                toneFrequency: 135, toneSweep: 0.7, sweepTime: 0.07, toneLevel: 0.9, toneDecay: 0.38,
                noiseLevel: 0.08, noiseDecay: 0.05, noiseMode: 2, noiseCutoff: 1600, pan: -0.1, level: -14.1)
        case .highTom:
            DrumModel(
                toneFrequency: 185, toneSweep: 0.7, sweepTime: 0.06, toneLevel: 0.9, toneDecay: 0.32,
                noiseLevel: 0.08, noiseDecay: 0.05, noiseMode: 2, noiseCutoff: 2000, pan: 0.15, level: -14)
        case .crash:
            DrumModel(
                noiseLevel: 0.45, noiseDecay: 1.3, noiseMode: 1, noiseCutoff: 4500, metalLevel: 0.45,
                metalDecay: 1.7, metalCutoff: 5000, metalBase: 1.15, pan: -0.35, level: -3)
        case .ride:
            DrumModel(
                toneFrequency: 2400, toneSweep: 0, sweepTime: 0.01, toneLevel: 0.08, toneDecay: 1.2, noiseLevel: 0.25,
                noiseDecay: 0.8, noiseMode: 1, noiseCutoff: 6000, metalLevel: 1.2, metalDecay: 2.2,
                metalCutoff: 3500, metalBase: 1.35, pan: 0.35, level: -13.9)
        case .cowbell:
            DrumModel(
                metalLevel: 0.9, metalDecay: 0.3, metalMode: 2, metalCutoff: 2640, metalBase: 1,
                metalRatios: SIMD8(587, 845, 0, 0, 0, 0, 0, 0) / 205.3, pan: 0.15, level: -7.6)
        case .tambourine:
            // Jingles: a bright metallic cluster and hissing noise, shaken in three quick bursts.
            DrumModel(
                noiseLevel: 0.5, noiseDecay: 0.25, noiseMode: 1, noiseCutoff: 7000, bursts: 3, burstSpacing: 0.018,
                burstDecay: 0.05, metalLevel: 1.2, metalDecay: 0.3, metalMode: 2, metalCutoff: 9000,
                metalBase: 5.2, pan: -0.4, level: -3.9)
        case .bongo:
            DrumModel(
                toneFrequency: 390, toneSweep: 0.25, sweepTime: 0.012, toneLevel: 0.9, toneDecay: 0.16,
                noiseLevel: 0.15, noiseDecay: 0.015, noiseMode: 2, noiseCutoff: 2500, pan: 0.25, level: -7.9)
        case .conga:
            DrumModel(
                toneFrequency: 300, toneSweep: 0.12, sweepTime: 0.02, toneLevel: 0.9, toneDecay: 0.42,
                noiseLevel: 0.25, noiseDecay: 0.02, noiseMode: 2, noiseCutoff: 1800, noiseResonance: 0.3, pan: -0.25,
                level: -9.5)
        case .timbale:
            // A shallow metal shell: a high ringing tone over a resonant band of noise.
            DrumModel(
                toneFrequency: 520, toneSweep: 0.05, sweepTime: 0.01, toneLevel: 0.7, toneDecay: 0.5,
                noiseLevel: 0.5, noiseDecay: 0.18, noiseMode: 2, noiseCutoff: 3200, noiseResonance: 0.7,
                metalLevel: 0.25, metalDecay: 0.25, metalMode: 2, metalCutoff: 5000, metalBase: 3, pan: 0.3, level: -8.5
            )
        case .agogo:
            DrumModel(
                toneFrequency: 920, toneLevel: 0.6, toneDecay: 0.55, metalLevel: 0.6, metalDecay: 0.35, metalMode: 2,
                metalCutoff: 2400, metalBase: 1, metalRatios: SIMD8(920, 2530, 0, 0, 0, 0, 0, 0) / 205.3,
                pan: -0.3, level: -15.2)
        case .cabasa:
            DrumModel(
                noiseLevel: 0.9, noiseDecay: 0.12, noiseMode: 1, noiseCutoff: 5000, noiseResonance: 0.2, bursts: 2,
                burstSpacing: 0.03, burstDecay: 0.04, pan: 0.35, level: -7.2)
        case .maracas:
            DrumModel(noiseLevel: 0.9, noiseDecay: 0.07, noiseMode: 2, noiseCutoff: 6500, noiseResonance: 0.3, pan: 0.4)
        case .whistle:
            // A referee's whistle: a high tone warbling with the pea inside, held, then stopped.
            DrumModel(
                toneFrequency: 2350, toneLevel: 0.35, toneDecay: 8, trillRate: 28, trillDepth: 0.03, length: 0.6,
                chokeGroup: 2, pan: 0.1, level: -5.3)
        case .guiro:
            // A stick scraped along ridges: a train of short resonant noise bursts.
            DrumModel(
                noiseLevel: 1, noiseDecay: 0.01, noiseMode: 2, noiseCutoff: 2800, noiseResonance: 0.6, bursts: 18,
                burstSpacing: 0.022, burstDecay: 0.012, burstsFollowDecay: true, chokeGroup: 3, pan: -0.15, level: -2.7)
        case .claves:
            DrumModel(toneFrequency: 2500, toneLevel: 0.8, toneDecay: 0.1, pan: -0.2, level: -5.5)
        case .woodBlock:
            DrumModel(
                toneFrequency: 1050, toneSweep: 0.1, sweepTime: 0.003, toneLevel: 0.8, toneDecay: 0.09, noiseLevel: 0.3,
                noiseDecay: 0.01, noiseMode: 2, noiseCutoff: 1400, noiseResonance: 0.6, pan: 0.2, level: -4.3)
        case .cuica:
            // A friction drum's whoop: a tone sliding up from below.
            DrumModel(
                toneFrequency: 520, toneSweep: -0.45, sweepTime: 0.06, toneLevel: 0.7, toneDecay: 0.8,
                noiseLevel: 0.1, noiseDecay: 0.05, noiseMode: 2, noiseCutoff: 900, chokeGroup: 4, pan: -0.1, level: -2.3
            )
        case .triangle:
            DrumModel(
                toneFrequency: 4700, toneLevel: 0.12, toneDecay: 2.5, metalLevel: 0.5, metalDecay: 2, metalMode: 2,
                metalCutoff: 6000, metalBase: 1, metalRatios: SIMD8(4700, 5980, 7160, 0, 0, 0, 0, 0) / 205.3,
                chokeGroup: 5, pan: 0.25, level: -12.5)
        case .vibraslap:
            // A rattle: a wooden box's teeth hit by a ball, dying away.
            DrumModel(
                noiseLevel: 0.8, noiseDecay: 0.9, noiseMode: 2, noiseCutoff: 3000, noiseResonance: 0.75, bursts: 24,
                burstSpacing: 0.032, burstDecay: 0.015, metalLevel: 0.3, metalDecay: 0.8, metalMode: 2,
                metalCutoff: 3500, metalBase: 2.1, pan: 0.3, level: -6.4)
        case .rideBell:
            DrumModel(
                toneFrequency: 2950, toneLevel: 0.3, toneDecay: 1.6, noiseLevel: 0.1, noiseDecay: 0.3, noiseMode: 1,
                noiseCutoff: 7000, metalLevel: 1.1, metalDecay: 1.8, metalMode: 2, metalCutoff: 3000,
                metalBase: 1.7, pan: 0.35, level: -16.6)
        case .splash:
            DrumModel(
                noiseLevel: 0.45, noiseDecay: 0.7, noiseMode: 1, noiseCutoff: 6000, metalLevel: 0.45, metalDecay: 0.8,
                metalCutoff: 6500, metalBase: 1.6, pan: 0.4, level: -8.3)
        case .chinaCymbal:
            // Trashy: a lower, band-passed cluster with a strong noise body.
            DrumModel(
                noiseLevel: 0.6, noiseDecay: 1.2, noiseMode: 2, noiseCutoff: 2800, noiseResonance: 0.3,
                metalLevel: 0.7, metalDecay: 1.3, metalMode: 2, metalCutoff: 2600, metalBase: 0.8, pan: -0.4,
                level: -6.5)
        }
    }
}

/// A drum's sound as numbers: frequencies in Hz, times in seconds (decays to −60 dB), levels linear, pan
/// −1 (left) … 1 (right). Plain value: made on the control thread, read by the render thread from the
/// kernel's table.
struct DrumModel: BitwiseCopyable {
    var toneFrequency: Float = 100
    /// The tone starts `1 + toneSweep` times higher and falls to its frequency with time constant `sweepTime`.
    var toneSweep: Float = 0
    var sweepTime: Float = 0.01
    var toneLevel: Float = 0
    var toneDecay: Float = 0.1
    var noiseLevel: Float = 0
    var noiseDecay: Float = 0.1
    /// State-variable filter mode for the noise: 0 low-, 1 high-, 2 band-pass.
    var noiseMode = 0
    var noiseCutoff: Float = 5000
    var noiseResonance: Float = 0
    /// Bursts of noise before its tail (0: none): a hand clap's, a shaken tambourine's, a guiro's scrape;
    /// `burstSpacing` seconds apart, each dying in `burstDecay` (to −60 dB); with `burstsFollowDecay` their
    /// number scales with the decay (a long scrape has more ridges).
    var bursts = 0
    var burstSpacing: Float = 0.011
    var burstDecay: Float = 0.02
    var burstsFollowDecay = false
    var metalLevel: Float = 0
    var metalDecay: Float = 0.1
    var metalMode = 1
    var metalCutoff: Float = 7000
    /// The cluster's lowest square wave is 205.3 Hz · `metalBase`; the others at the 808's ratios.
    var metalBase: Float = 1
    var metalRatios = SIMD8<Float>(1, 1.4827, 1.8003, 2.5460, 2.6303, 3.8967, 0, 0)
    /// The tone's warble (a whistle's pea): a square wave moving its frequency by ±`trillDepth`.
    var trillRate: Float = 0
    var trillDepth: Float = 0
    /// Seconds after which the hit is stopped (0: it only dies away), scaled like the decays.
    var length: Float = 0
    /// Voices in the same non-zero group cut each other off (the closed hat chokes the open one).
    var chokeGroup: UInt8 = 0
    var pan: Float = 0
    /// The model's level in dB, set so the kit plays each key about as loud as FluidR3_GM's kit on
    /// FluidSynth at its gain 0.2 (measured by `GeneralMIDIConformanceTests`, velocity 100).
    var level: Float = 0
}

/// One sounding drum hit: the three layers of its model running down. Plain value; render thread.
struct DrumVoice: BitwiseCopyable {
    var active = false
    var note: UInt8 = 0
    var channel: UInt8 = 0
    var chokeGroup: UInt8 = 0
    var age: UInt64 = 0
    var pan: Float = 0
    var tonePhase: Float = 0.25
    var toneIncrement: Float = 0
    var sweep: Float = 0
    var sweepCoefficient: Float = 0
    var toneLevel: Float = 0
    var toneCoefficient: Float = 0
    var noise = NoiseGenerator(seed: 1)
    var noiseFilter = StateVariableFilter()
    var noiseMode = 0
    var noiseLevel: Float = 0
    var noisePeak: Float = 0
    var noiseCoefficient: Float = 0
    var burstCoefficient: Float = 0
    var burstsLeft = 0
    var framesToBurst = 0
    var burstFrames = 0
    var metalPhases = SIMD8<UInt32>(repeating: 0)
    var metalIncrements = SIMD8<UInt32>(repeating: 0)
    var metalWeights = SIMD8<Float>(repeating: 0)
    var metalFilter = StateVariableFilter()
    var metalMode = 1
    var metalLevel: Float = 0
    var metalCoefficient: Float = 0
    var trillPhase: UInt32 = 0
    var trillIncrement: UInt32 = 0
    var trillDepth: Float = 0
    /// Frames until the hit is stopped (−1: never), and how fast it then fades.
    var framesToStop = -1
    var stopStep: Float = 0
    var gain = GlidingGain()
    var fadeGain: Float = 1
    var fadeStep: Float = 0

    /// Below this every layer is inaudible (−80 dB) and the hit is over.
    static var silence: Float { 1e-4 }

    /// The per-sample factor that takes a level down 60 dB in `seconds`.
    @inline(__always) @_noAllocation @_noLocks
    static func decayCoefficient(_ seconds: Float, sampleRate: Double) -> Float {
        Float(FastMath.exp(-6.907_755_278_982_137 / (max(0.001, Double(seconds)) * sampleRate)))
    }

    /// A new hit of `model`, tuned by `semitones` and its decays scaled by `decayScale`, at linear `level`.
    @_noAllocation @_noLocks
    init(
        model: DrumModel, semitones: Float, decayScale: Float, level: Float, sampleRate: Double, seed: UInt32
    ) {
        active = true
        let level = level * Float(FastMath.exp2(Double(model.level) / 6.020_599_913_279_624))
        chokeGroup = model.chokeGroup
        pan = model.pan
        let ratio = Float(FastMath.exp2(Double(semitones) / 12))
        toneIncrement = model.toneFrequency * ratio / Float(sampleRate)
        sweep = model.toneSweep
        sweepCoefficient = Float(FastMath.exp(-1 / (Double(model.sweepTime) * sampleRate)))
        toneLevel = model.toneLevel * level
        toneCoefficient = Self.decayCoefficient(model.toneDecay * decayScale, sampleRate: sampleRate)
        noise = NoiseGenerator(seed: seed)
        noiseFilter.setCoefficients(
            cutoff: Double(model.noiseCutoff * ratio), resonance: model.noiseResonance, sampleRate: sampleRate)
        noiseMode = model.noiseMode
        noisePeak = model.noiseLevel * level
        noiseLevel = noisePeak
        noiseCoefficient = Self.decayCoefficient(model.noiseDecay * decayScale, sampleRate: sampleRate)
        if model.bursts > 0 {
            // A clap, a shake, a scrape: short bursts, then the tail.
            burstsLeft = model.burstsFollowDecay ? max(1, Int(Float(model.bursts) * decayScale)) : model.bursts
            burstFrames = max(1, Int(Double(model.burstSpacing) * sampleRate))
            framesToBurst = burstFrames
            burstCoefficient = Self.decayCoefficient(model.burstDecay, sampleRate: sampleRate)
        }
        if model.trillDepth > 0 {
            trillIncrement = UInt32(truncatingIfNeeded: Int64(Double(model.trillRate) / sampleRate * 4_294_967_296))
            trillDepth = model.trillDepth
        }
        if model.length > 0 {
            framesToStop = max(1, Int(Double(model.length * decayScale) * sampleRate))
            // Stopped as a player's hand or breath stops it: gone in 5 ms, not a click.
            stopStep = Float(1 / (0.005 * sampleRate))
        }
        let base = 205.3 * model.metalBase * ratio / Float(sampleRate)
        var partials: Float = 0
        for partial in 0..<8 where model.metalRatios[partial] > 0 { partials += 1 }
        for partial in 0..<8 where model.metalRatios[partial] > 0 {
            let cycles = Double(base * model.metalRatios[partial])
            metalIncrements[partial] = UInt32(truncatingIfNeeded: Int64(min(0.49, cycles) * 4_294_967_296))
            metalWeights[partial] = 1 / partials
            // Spread the starting phases so the squares do not all switch on the first frame.
            metalPhases[partial] = UInt32(truncatingIfNeeded: partial &* 0x2F1A_3B57)
        }
        metalFilter.setCoefficients(
            cutoff: Double(model.metalCutoff * ratio), resonance: model.metalMode == 2 ? 0.6 : 0.1,
            sampleRate: sampleRate)
        metalMode = model.metalMode
        metalLevel = model.metalLevel * level
        metalCoefficient = Self.decayCoefficient(model.metalDecay * decayScale, sampleRate: sampleRate)
    }

    @_noAllocation @_noLocks
    init() {}

    /// Adds `count` frames of the hit into `left`/`right`; false once it has died away.
    @_noAllocation @_noLocks
    mutating func render(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int) -> Bool {
        // Every decision is made per frame, so where a slice ends cannot change what is heard.
        let silence = Self.silence
        for i in 0..<count {
            var sample: Float = 0
            var sounding = burstsLeft > 0
            if toneLevel > silence {
                sounding = true
                sample += Float(FastMath.sine(Double(tonePhase))) * toneLevel
                var increment = toneIncrement * (1 + sweep)
                if trillDepth > 0 {
                    increment *= trillPhase < 0x8000_0000 ? 1 + trillDepth : 1 - trillDepth
                    trillPhase &+= trillIncrement
                }
                tonePhase += increment
                if tonePhase >= 1 { tonePhase -= 1 }
                sweep *= sweepCoefficient
                toneLevel *= toneCoefficient
            }
            if noiseLevel > silence || burstsLeft > 0 {
                sounding = true
                sample += noiseFilter.process(noise.next(), mode: noiseMode) * noiseLevel
                if burstsLeft > 0 {
                    noiseLevel *= burstCoefficient
                    framesToBurst -= 1
                    if framesToBurst <= 0 {
                        burstsLeft -= 1
                        framesToBurst = burstFrames
                        noiseLevel = noisePeak
                    }
                } else {
                    noiseLevel *= noiseCoefficient
                }
            }
            if metalLevel > silence {
                sounding = true
                // Each square is +1 in the first half of its period, −1 in the second.
                let high = metalPhases .< SIMD8(repeating: 0x8000_0000)
                let signs = SIMD8<Float>(repeating: -1).replacing(with: 1, where: high)
                let cluster = (signs * metalWeights).sum()
                metalPhases &+= metalIncrements
                sample += metalFilter.process(cluster, mode: metalMode) * metalLevel
                metalLevel *= metalCoefficient
            }
            if !sounding { return false }
            if framesToStop > 0 {
                framesToStop -= 1
                if framesToStop == 0 && fadeStep == 0 { fadeStep = stopStep }
            }
            if fadeStep > 0 {
                sample *= fadeGain
                fadeGain -= fadeStep
                if fadeGain <= 0 { return false }
            }
            gain.left += gain.leftStep
            gain.right += gain.rightStep
            left[i] += sample * gain.left
            right[i] += sample * gain.right
        }
        return true
    }
}

/// Playing the drum kit on a drum channel.
///
/// Threads: render thread.
extension OscillatorSynthKernel {
    /// A hit on a drum channel: the key's drum, tuned and decayed by its parameters, in a free hit slot or
    /// the oldest one's. A hit in a choke group cuts the others of its group on the channel short.
    @_noAllocation @_noLocks
    func drumNoteOn(_ note: UInt8, velocity: Float, channel: Int) {
        let drum = Int(drumOfKey[Int(note & 0x7F)])
        guard drum >= 0 else { return }
        let model = drumModels[drum]
        // The drum's tune, decay and level follow the patch's parameters in the unit's slots.
        let slot = Self.parameterCount + SynthDrum.Control.allCasesCount * drum
        let normalized = velocity / 127
        let decibels = Double(parameters.value(slot + SynthDrum.Control.level.rawValue))
        let level = 0.2 + 0.8 * normalized * normalized
        var chosen = 0
        for index in 0..<Self.drumVoiceCount {
            let voice = drumVoices[index]
            if model.chokeGroup != 0 && voice.active && voice.chokeGroup == model.chokeGroup
                && Int(voice.channel) == channel
            {
                drumVoices[index].fadeStep = 1 / Self.fadeFrames
            }
            if !voice.active {
                if drumVoices[chosen].active { chosen = index }
            } else if drumVoices[chosen].active && voice.age < drumVoices[chosen].age {
                chosen = index
            }
        }
        ageCounter.pointee += 1
        var hit = DrumVoice(
            model: model,
            semitones: drumOffsetOfKey[Int(note & 0x7F)] + parameters.value(slot + SynthDrum.Control.tune.rawValue),
            decayScale: parameters.value(slot + SynthDrum.Control.decay.rawValue) * drumDecayOfKey[Int(note & 0x7F)],
            level: level * Float(FastMath.exp2(decibels / 6.020_599_913_279_624)), sampleRate: sampleRate,
            seed: UInt32(truncatingIfNeeded: ageCounter.pointee &* 2_654_435_761) | 1)
        hit.note = note
        hit.channel = UInt8(channel)
        hit.age = ageCounter.pointee
        drumVoices[chosen] = hit
        updateDrumGains(drumVoices + chosen, interpolate: false)
    }

    /// A drum hit's output gains from its channel's volume, expression and pan and the drum's own place in
    /// the stereo picture; like a synth voice's, they glide over a control tick.
    @_noAllocation @_noLocks
    func updateDrumGains(_ voice: UnsafeMutablePointer<DrumVoice>, interpolate: Bool) {
        let channel = channels[Int(voice.pointee.channel)]
        let volume = Float(channel.volume) / 127
        let expression = Float(channel.expression) / 127
        voice.pointee.gain.aim(
            gain: 0.5 * volume * volume * expression * expression,
            position: GlidingGain.position(pan: channel.pan) + Double(voice.pointee.pan) / 2,
            frames: Self.controlInterval, interpolate: interpolate)
    }
}

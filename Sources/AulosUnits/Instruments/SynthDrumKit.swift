import AulosCore
import AulosDSP

/// The drums of the oscillator synth's kit: each a small model of its own, played on the drum channel (10
/// unless the host says otherwise) by General MIDI's percussion keys. Each has a tune, decay and level
/// parameter on the unit.
public enum SynthDrum: Int, CaseIterable, Sendable {
    case kick, snare, rim, clap, closedHat, pedalHat, openHat, lowTom, midTom, highTom, crash, ride, cowbell

    public var name: String {
        [
            "Kick", "Snare", "Rim", "Clap", "Closed Hat", "Pedal Hat", "Open Hat", "Low Tom", "Mid Tom", "High Tom",
            "Crash", "Ride", "Cowbell",
        ][rawValue]
    }

    /// The key used in preset files and rigs, e.g. `closedHatDecay`.
    public var key: String { String(describing: self) }

    /// What each drum has: tune in semitones, decay as a factor on the model's own, level in dB.
    public enum Control: Int, CaseIterable, Sendable {
        case tune, decay, level
        var suffix: String { ["Tune", "Decay", "Level"][rawValue] }
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
    /// silent. Control side (the kernel keeps the answer in a table).
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
        case 52: (.crash, -3)
        case 53: (.ride, 5)
        case 54: (.closedHat, 7)
        case 55: (.crash, 5)
        case 56: (.cowbell, 0)
        case 57: (.crash, 2)
        case 59: (.ride, -2)
        case 60: (.highTom, 10)
        case 61: (.highTom, 5)
        case 62: (.midTom, 9)
        case 63: (.midTom, 7)
        case 64: (.midTom, 2)
        case 65: (.highTom, 3)
        case 66: (.highTom, -1)
        case 75: (.rim, 5)
        case 76: (.rim, 3)
        case 77: (.rim, 0)
        default: nil
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
                noiseDecay: 0.006, noiseMode: 0, noiseCutoff: 5000, pan: 0)
        case .snare:
            DrumModel(
                toneFrequency: 185, toneSweep: 0.5, sweepTime: 0.02, toneLevel: 0.45, toneDecay: 0.12,
                noiseLevel: 0.7, noiseDecay: 0.2, noiseMode: 2, noiseCutoff: 4500, noiseResonance: 0.1, pan: 0)
        case .rim:
            DrumModel(
                toneFrequency: 1650, toneSweep: 0, sweepTime: 0.01, toneLevel: 0.5, toneDecay: 0.025,
                noiseLevel: 0.45, noiseDecay: 0.012, noiseMode: 2, noiseCutoff: 3200, noiseResonance: 0.5, pan: -0.1)
        case .clap:
            DrumModel(
                noiseLevel: 1, noiseDecay: 0.28, noiseMode: 2, noiseCutoff: 1150, noiseResonance: 0.45, clapBursts: 3,
                pan: 0.05)
        case .closedHat:
            DrumModel(
                noiseLevel: 0.7, noiseDecay: 0.04, noiseMode: 1, noiseCutoff: 8000, metalLevel: 2,
                metalDecay: 0.05, metalCutoff: 7000, chokeGroup: 1, pan: 0.3)
        case .pedalHat:
            DrumModel(
                noiseLevel: 0.5, noiseDecay: 0.03, noiseMode: 2, noiseCutoff: 5500, noiseResonance: 0.3,
                metalLevel: 2.2, metalDecay: 0.12, metalMode: 2, metalCutoff: 4200, metalBase: 0.9, chokeGroup: 1,
                pan: 0.3)
        case .openHat:
            DrumModel(
                noiseLevel: 0.6, noiseDecay: 0.35, noiseMode: 1, noiseCutoff: 8000, metalLevel: 1.6,
                metalDecay: 0.5, metalCutoff: 7000, chokeGroup: 1, pan: 0.3)
        case .lowTom:
            DrumModel(
                toneFrequency: 95, toneSweep: 0.7, sweepTime: 0.08, toneLevel: 0.9, toneDecay: 0.45,
                noiseLevel: 0.08, noiseDecay: 0.05, noiseMode: 2, noiseCutoff: 1200, pan: -0.3)
        case .midTom:
            DrumModel(
                toneFrequency: 135, toneSweep: 0.7, sweepTime: 0.07, toneLevel: 0.9, toneDecay: 0.38,
                noiseLevel: 0.08, noiseDecay: 0.05, noiseMode: 2, noiseCutoff: 1600, pan: -0.1)
        case .highTom:
            DrumModel(
                toneFrequency: 185, toneSweep: 0.7, sweepTime: 0.06, toneLevel: 0.9, toneDecay: 0.32,
                noiseLevel: 0.08, noiseDecay: 0.05, noiseMode: 2, noiseCutoff: 2000, pan: 0.15)
        case .crash:
            DrumModel(
                noiseLevel: 0.45, noiseDecay: 1.3, noiseMode: 1, noiseCutoff: 4500, metalLevel: 0.45,
                metalDecay: 1.7, metalCutoff: 5000, metalBase: 1.15, pan: -0.35)
        case .ride:
            DrumModel(
                toneFrequency: 2400, toneSweep: 0, sweepTime: 0.01, toneLevel: 0.08, toneDecay: 1.2, noiseLevel: 0.25,
                noiseDecay: 0.8, noiseMode: 1, noiseCutoff: 6000, metalLevel: 1.2, metalDecay: 2.2,
                metalCutoff: 3500, metalBase: 1.35, pan: 0.35)
        case .cowbell:
            DrumModel(
                metalLevel: 0.9, metalDecay: 0.3, metalMode: 2, metalCutoff: 2640, metalBase: 1,
                metalRatios: SIMD8(587, 845, 0, 0, 0, 0, 0, 0) / 205.3, pan: 0.15)
        }
    }
}

/// A drum's sound as numbers: frequencies in Hz, times in seconds (decays to −60 dB), levels linear, pan
/// −1 (left) … 1 (right). Plain value.
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
    /// A hand clap's bursts before its tail (0: none).
    var clapBursts = 0
    var metalLevel: Float = 0
    var metalDecay: Float = 0.1
    var metalMode = 1
    var metalCutoff: Float = 7000
    /// The cluster's lowest square wave is 205.3 Hz · `metalBase`; the others at the 808's ratios.
    var metalBase: Float = 1
    var metalRatios = SIMD8<Float>(1, 1.4827, 1.8003, 2.5460, 2.6303, 3.8967, 0, 0)
    /// Voices in the same non-zero group cut each other off (the closed hat chokes the open one).
    var chokeGroup: UInt8 = 0
    var pan: Float = 0
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
        if model.clapBursts > 0 {
            // A clap: short bursts about 11 ms apart, then the tail.
            burstsLeft = model.clapBursts
            burstFrames = Int(0.011 * sampleRate)
            framesToBurst = burstFrames
            burstCoefficient = Self.decayCoefficient(0.02, sampleRate: sampleRate)
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
                tonePhase += toneIncrement * (1 + sweep)
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

import AulosCore
import AulosUnits

#if canImport(Glibc)
import Glibc
#endif

// Measuring the synth: a plain patch and frequency in cents.

func setSynth(_ unit: AudioUnit, _ values: [OscillatorSynthUnit.Parameter: Float]) throws {
    for (parameter, value) in values { try unit.setParameter(parameter.id, value: value) }
}

/// A plain, exactly measurable sound: one sine, filter wide open, no modulation, instant envelope.
let pureSine: [OscillatorSynthUnit.Parameter: Float] = [
    .osc1Waveform: 3, .oscMix: 0, .cutoff: 20_000, .resonance: 0, .filterEnvAmount: 0, .keyTracking: 0,
    .ampAttack: 0, .ampDecay: 0.001, .ampSustain: 1, .ampRelease: 0.05, .velocitySensitivity: 0, .lfoToPitch: 0,
    .volume: 0,
]

/// Frequency of a steady tone by counting rising zero crossings with linear interpolation.
func measuredFrequency(_ samples: ArraySlice<Float>, sampleRate: Double) -> Double {
    var crossings: [Double] = []
    var index = samples.startIndex + 1
    while index < samples.endIndex {
        let a = samples[index - 1]
        let b = samples[index]
        if a < 0 && b >= 0 { crossings.append(Double(index - 1) + Double(-a / (b - a))) }
        index += 1
    }
    guard crossings.count > 2 else { return 0 }
    return Double(crossings.count - 1) / ((crossings.last! - crossings.first!) / sampleRate)
}

func cents(_ measured: Double, _ expected: Double) -> Double { 1200 * log2(measured / expected) }

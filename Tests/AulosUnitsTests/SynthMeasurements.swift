import AulosCore
import AulosUnits

#if canImport(Glibc)
import Glibc
#endif

// Measuring the synth: a plain patch, frequency in cents, one component's amplitude and the strongest one's frequency.

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

/// Amplitude of the component at `frequency` in `samples` (a Hann-windowed single-bin DFT).
func amplitude(_ samples: ArraySlice<Float>, at frequency: Double) -> Double {
    var re = 0.0
    var im = 0.0
    let n = samples.count
    for (i, x) in samples.enumerated() {
        let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))
        let angle = 2 * Double.pi * frequency * Double(i) / 48_000
        re += Double(x) * w * cos(angle)
        im += Double(x) * w * sin(angle)
    }
    return 4 * (re * re + im * im).squareRoot() / Double(n)
}

/// The strongest frequency within `range` (to 0.01 Hz: a coarse scan, then golden-section refinement).
func peak(_ samples: ArraySlice<Float>, in range: ClosedRange<Double>) -> Double {
    var best = range.lowerBound
    var frequency = range.lowerBound
    while frequency <= range.upperBound {
        if amplitude(samples, at: frequency) > amplitude(samples, at: best) { best = frequency }
        frequency += 1
    }
    var (low, high) = (best - 1, best + 1)
    while high - low > 0.005 {
        let a = low + (high - low) * 0.382
        let b = low + (high - low) * 0.618
        if amplitude(samples, at: a) > amplitude(samples, at: b) { high = b } else { low = a }
    }
    return (low + high) / 2
}

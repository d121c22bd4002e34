import AulosDSP
import Foundation
import Testing

/// The ladder filter and the saturator it uses.
@Suite struct LadderFilterTests {
    /// The soft clip is within 0.024 of tanh up to ±3 (as its comment says), odd, and held at ±1 beyond.
    @Test func saturateFollowsTanh() {
        for step in -300...300 {
            let x = Float(step) / 100
            let error = abs(FastMath.saturate(x) - tanh(x))
            #expect(error <= 0.024, "x = \(x): \(FastMath.saturate(x)) against \(tanh(x))")
            #expect(FastMath.saturate(-x) == -FastMath.saturate(x))
        }
        #expect(FastMath.saturate(50) == 1 && FastMath.saturate(-50) == -1)
    }

    /// Without resonance a low-pass passes DC at unity and takes 24 dB per octave well above its cutoff.
    @Test func lowPassPassesDCAndFallsTwentyFourDecibelsPerOctave() {
        func gain(at frequency: Double) -> Double {
            var filter = LadderFilter()
            filter.setCoefficients(cutoff: 200, resonance: 0, sampleRate: 48_000)
            var peak: Float = 0
            for n in 0..<48_000 {
                let x = frequency == 0 ? 0.1 : Float(0.1 * sin(2 * Double.pi * frequency * Double(n) / 48_000))
                let y = filter.process(x)
                if n > 24_000 { peak = max(peak, abs(y)) }
            }
            return Double(peak) / 0.1
        }
        #expect(abs(gain(at: 0) - 1) < 0.01)
        let slope = 20 * log10(gain(at: 3200) / gain(at: 1600))
        #expect(abs(slope + 24) < 1.5, "\(slope) dB per octave")
    }
}

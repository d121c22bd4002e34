import AulosSFZ
import Foundation
import Testing

/// Each `fil_type` the voice plays attenuates a steady sine by its analogue prototype's response at the
/// prewarped frequency (the filters are bilinear, prewarped at the cutoff): within 0.25 dB, below, at and
/// above the cutoff. The two-pole filters' resonance in dB is their Q = 10^(dB/20), as sfizz maps it: 0 dB is
/// Q = 1 (unity gain at the cutoff), 12 dB a 12 dB peak there.
@Suite struct VoiceFilterTests {
    /// The response of `type` at `frequency` with cutoff `cutoff`, in dB, from the prototype.
    static func expected(
        _ type: SFZFilterType, frequency: Double, cutoff: Double, resonance: Double, rate: Double = 48000
    ) -> Double {
        let w = tan(Double.pi * frequency / rate) / tan(Double.pi * cutoff / rate)
        let k = 1 / pow(10, resonance / 20)
        let twoPole = ((1 - w * w) * (1 - w * w) + k * k * w * w).squareRoot()
        let gain: Double =
            switch type {
            case .none: 1
            case .lowPass1Pole: 1 / (1 + w * w).squareRoot()
            case .highPass1Pole: w / (1 + w * w).squareRoot()
            case .bandPass1Pole: w / (1 + w * w)
            case .lowPass2Pole: 1 / twoPole
            case .highPass2Pole: w * w / twoPole
            case .bandPass2Pole: w / twoPole
            }
        return 20 * log10(gain)
    }

    /// The RMS of the second half of a one-second render of a `frequency` sine through `type` at `cutoff`.
    static func level(_ type: SFZFilterType, frequency: Double, cutoff: Double, resonance: Float = 0) throws -> Double {
        let rig = try VoiceRig(samples: [("s.wav", SampleFixtures.sine(frequency, frames: 60_000), 1, 48000, nil)])
        var parameters = rig.parameters("s.wav")
        parameters.filterType = type
        parameters.cutoff = cutoff
        parameters.resonance = resonance
        let (left, _) = rig.render(frames: 48_000, slice: 256, events: [(0, .start(id: 0, parameters))])
        let tail = left[24_000..<48_000]
        return 10 * log10(tail.reduce(0) { $0 + Double($1) * Double($1) } / Double(tail.count))
    }

    @Test(arguments: [
        (SFZFilterType.lowPass1Pole, 250.0, 0.0), (.lowPass1Pole, 1000, 0), (.lowPass1Pole, 4000, 0),
        (.highPass1Pole, 250, 0), (.highPass1Pole, 1000, 0), (.highPass1Pole, 4000, 0),
        (.bandPass1Pole, 125, 0), (.bandPass1Pole, 1000, 0), (.bandPass1Pole, 8000, 0),
        (.lowPass2Pole, 1000, 0), (.lowPass2Pole, 4000, 0), (.lowPass2Pole, 1000, 12),
        (.highPass2Pole, 250, 0), (.highPass2Pole, 1000, 0), (.highPass2Pole, 1000, 12),
        (.bandPass2Pole, 250, 0), (.bandPass2Pole, 1000, 0), (.bandPass2Pole, 4000, 0),
    ])
    func theResponseIsThePrototypes(type: SFZFilterType, frequency: Double, resonance: Double) throws {
        let open = try Self.level(.none, frequency: frequency, cutoff: 1000)
        let filtered = try Self.level(type, frequency: frequency, cutoff: 1000, resonance: Float(resonance))
        let expected = Self.expected(type, frequency: frequency, cutoff: 1000, resonance: resonance)
        #expect(
            abs(filtered - open - expected) < 0.25,
            "\(type) at \(frequency) Hz, resonance \(resonance) dB: \(filtered - open) dB, expected \(expected) dB")
    }
}

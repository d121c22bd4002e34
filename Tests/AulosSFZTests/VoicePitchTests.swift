import AulosSFZ
import Foundation
import Testing

/// A voice's pitch within 0.1 cent of what it was asked, at the sample's own pitch and transposed (down, up a
/// fifth, up an octave past the sample's rate), measured over a four-second render.
@Suite struct VoicePitchTests {
    @Test(arguments: [SFZInterpolationQuality.high, .live], [0.0, 700, -1200, 1200, 1237.5])
    func pitchIsWithinATenthOfACent(quality: SFZInterpolationQuality, cents: Double) throws {
        // A 440 Hz sine recorded at 44.1 kHz, played at 48 kHz: the voice resamples as well as transposes.
        let rig = try VoiceRig(
            samples: [
                ("a.wav", SampleFixtures.sine(440, rate: 44100, frames: 44100 * 5), 1, 44100, nil)
            ], quality: quality)
        var parameters = rig.parameters("a.wav")
        parameters.pitchCents = cents
        let frames = 48000 * 2
        let (left, _) = rig.render(frames: frames, slice: 256, events: [(0, .start(id: 0, parameters))])
        let expected = 440 * pow(2, cents / 1200)
        let measured = SignalMeasure.frequency(left, rate: 48000, from: 4800, to: frames - 100)
        let error = SignalMeasure.cents(measured, expected)
        #expect(abs(error) < 0.1, "asked \(expected) Hz, measured \(measured) Hz: \(error) cents off")
    }
}

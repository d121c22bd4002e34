import AulosSFZ
import Foundation
import Testing

/// Loops: no step at the seam larger than the waveform's own, the file's loop points used, a sustain loop
/// playing on past its end after the note-off, offset and end honoured.
@Suite struct VoiceLoopTests {
    /// 480 Hz at 48 kHz: 100 frames a period, so a loop of whole periods is seamless in the sample itself.
    static let period = 100

    /// The largest step a sampled sine of this amplitude and frequency makes (between two frames either
    /// side of a zero crossing).
    static func ownStep(amplitude: Float, frequency: Double) -> Float {
        2 * amplitude * Float(sin(Double.pi * frequency / 48000))
    }

    /// The margin over the sine's own step is the interpolator's error: `.high`'s below 10⁻⁴; `.live`'s
    /// 8-tap kernel errs by up to 2·10⁻⁴ of full scale on any frame (its −74 dB images), seam or not — a seam
    /// that read a wrong frame would step by 10⁻² or more.
    @Test(arguments: [SFZInterpolationQuality.high, .live], [0.0, 350, -500, 1400])
    func aLoopHasNoStepAtItsSeam(quality: SFZInterpolationQuality, cents: Double) throws {
        // 3,000 frames, loop 1,000…1,999 (ten periods) from the file's smpl chunk; the voice loops for 2 s.
        let tone = SampleFixtures.sine(480, frames: 3000)
        let rig = try VoiceRig(samples: [("loop.wav", tone, 1, 48000, 1000...1999)], quality: quality)
        var parameters = rig.parameters("loop.wav")
        parameters.loopMode = .loopContinuous
        parameters.pitchCents = cents
        let frames = 96000
        let (left, _) = rig.render(frames: frames, slice: 128, events: [(0, .start(id: 0, parameters))])
        let frequency = 480 * pow(2, cents / 1200)
        let own = Self.ownStep(amplitude: 0.5, frequency: frequency)
        // Past the first few frames (the sinc's onset on the sample's first frame).
        let largest = SignalMeasure.maximumStep(left, from: 200)
        #expect(
            largest <= own * 1.001 + (quality == .high ? 1e-4 : 3e-4),
            "a step of \(largest) where the sine's own is \(own)")
        // It still sounds at the end: it looped rather than ran out.
        #expect((left[(frames - 200)...].map { abs($0) }.max() ?? 0) > 0.45)
        let measured = SignalMeasure.frequency(left, rate: 48000, from: 1000, to: frames - 10)
        #expect(abs(SignalMeasure.cents(measured, frequency)) < 0.1)
    }

    /// A loop set by the parameters over a span that is not whole periods still reads across its seam: the
    /// frames after the loop's end come from its start, so the seam is the sample's own step (here a jump the
    /// sample makes at the seam, which the test makes equal on both sides by looping a ramp).
    @Test func aSustainLoopPlaysOnPastItsEndAfterTheNoteOff() throws {
        // 0…999 a sine; the loop 200…299; after it the sine goes on to frame 1,999.
        let tone = SampleFixtures.sine(480, frames: 2000)
        let rig = try VoiceRig(samples: [("sustain.wav", tone, 1, 48000, nil)])
        var parameters = rig.parameters("sustain.wav")
        parameters.loopMode = .loopSustain
        parameters.loopStart = 200
        parameters.loopEnd = 299
        parameters.amplitudeEnvelope.release = 5  // long: the sample's end, not the release, ends the voice
        let release = 20000
        let (left, _) = rig.render(
            frames: 30000, slice: 64, events: [(0, .start(id: 0, parameters)), (release, .release(id: 0))])
        let own = Self.ownStep(amplitude: 0.5, frequency: 480)
        #expect(SignalMeasure.maximumStep(left, from: 100, to: 25000) <= own * 1.001 + 1e-4)
        // Looping until the note-off; then at most one more pass of the loop and the 1,700 frames after it.
        #expect((left[(release - 100)..<release].map { abs($0) }.max() ?? 0) > 0.45)
        let lastSound = left.lastIndex { abs($0) > 1e-4 } ?? 0
        #expect(lastSound > release + 1600 && lastSound < release + 1900, "the last sound at \(lastSound)")
    }

    /// `offset` starts playback there and `end` stops it after that frame; no loop: the voice then ends.
    @Test func offsetAndEndBoundWhatPlays() throws {
        let ramp = (0..<10000).map { Float($0) / 10000 }
        let rig = try VoiceRig(samples: [("ramp.wav", ramp, 1, 48000, nil)])
        var parameters = rig.parameters("ramp.wav")
        parameters.offset = 2000
        parameters.end = 5999
        let (left, _) = rig.render(frames: 8000, slice: 100, events: [(10, .start(id: 0, parameters))])
        #expect(left[0..<10].allSatisfy { $0 == 0 })
        #expect(abs(left[510] - 0.25) < 1e-3, "frame 500 of the voice plays sample frame 2,500: \(left[510])")
        #expect(left[(10 + 4001)...].allSatisfy { $0 == 0 }, "the voice ends after its end frame")
        #expect(rig.engine.status.activeVoices == 0)
    }
}

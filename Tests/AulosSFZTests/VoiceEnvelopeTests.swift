import AulosSFZ
import Foundation
import Testing

/// The amplitude envelope's segments land within a frame of their times, the release decays along its
/// stated curve to silence at its time, and the envelope struct alone agrees.
@Suite struct VoiceEnvelopeTests {
    /// A constant sample, so the output is the envelope times the constant.
    static func render(_ envelope: SFZEnvelopeTimes, release: Int, frames: Int) throws -> [Float] {
        let rig = try VoiceRig(samples: [("dc.wav", [Float](repeating: 0.5, count: 60000), 1, 48000, nil)])
        var parameters = rig.parameters("dc.wav")
        parameters.amplitudeEnvelope = envelope
        let (left, _) = rig.render(
            frames: frames, slice: 97, events: [(0, .start(id: 0, parameters)), (release, .release(id: 0))])
        return left.map { $0 / 0.5 }
    }

    @Test func segmentsLandWithinAFrameOfTheirTimes() throws {
        // delay 10 ms (480), attack 20 ms (960), hold 10 ms (480), decay 50 ms (2,400) to 0.5, release
        // at frame 10,000 over 100 ms (4,800).
        let times = SFZEnvelopeTimes(delay: 0.01, attack: 0.02, hold: 0.01, decay: 0.05, sustain: 0.5, release: 0.1)
        let level = try Self.render(times, release: 10000, frames: 20000)
        let tolerance: Float = 1e-5
        #expect(level[0..<480].allSatisfy { abs($0) < tolerance }, "silent through the delay")
        #expect(abs(level[480 + 480] - 0.5) < 1e-3, "linear: halfway up halfway through the attack")
        let top = level.firstIndex { $0 >= 1 - tolerance } ?? -1
        #expect(abs(top - 1440) <= 1, "the attack ends at \(top), not 1,440")
        let decayStart = (max(0, top)..<level.count).first { level[$0] < 1 - tolerance } ?? -1
        #expect(abs(decayStart - 1921) <= 1, "the hold ends at \(decayStart), not 1,920")
        let sustained = (2000..<level.count).first { abs(level[$0] - 0.5) < 3e-7 } ?? -1
        #expect(abs(sustained - 4320) <= 1, "the decay lands at \(sustained), not 4,320")
        #expect(level[4320..<10000].allSatisfy { abs($0 - 0.5) < tolerance })
        let silent = (10000..<level.count).first { level[$0] == 0 } ?? -1
        #expect(abs(silent - 14800) <= 1, "the release lands at \(silent), not 14,800")
    }

    /// The release falls along (1 + ε)·cⁿ − ε (ε = 0.001, cᴺ = ε / (1 + ε)): exponential, −30 dB halfway.
    @Test func theReleaseDecaysExponentially() throws {
        let times = SFZEnvelopeTimes(attack: 0, sustain: 1, release: 0.5)  // 24,000 frames
        let level = try Self.render(times, release: 1000, frames: 30000)
        let epsilon = 0.001
        let ratio = pow(epsilon / (1 + epsilon), 1 / 24000.0)
        for n in [1, 2400, 6000, 12000, 18000, 23000] {
            let expected = (1 + epsilon) * pow(ratio, Double(n)) - epsilon
            #expect(
                abs(Double(level[1000 + n]) - expected) < 1e-4 * max(1, expected * 100),
                "\(n) frames into the release: \(level[1000 + n]), expected \(expected)")
        }
        #expect(level[(1000 + 24000)...].allSatisfy { $0 == 0 })
    }

    /// A release during the attack starts from where the attack got to (no jump).
    @Test func aReleaseDuringTheAttackStartsFromItsLevel() throws {
        let times = SFZEnvelopeTimes(attack: 0.1, release: 0.05)
        let level = try Self.render(times, release: 2400, frames: 8000)
        #expect(abs(level[2399] - 0.5) < 1e-3)
        #expect(SignalMeasure.maximumStep(level, from: 1) < 0.002, "a jump in the envelope")
    }
}

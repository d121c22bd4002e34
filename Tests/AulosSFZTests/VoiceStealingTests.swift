import AulosSFZ
import Foundation
import Testing

/// Stealing at the polyphony limit: released voices first, else the quietest; the stolen voice fades out
/// over 3 ms with no click.
@Suite struct VoiceStealingTests {
    /// A looped 100 Hz sine (480 frames a period, loop over ten periods).
    static func rig(polyphony: Int, fadeSeconds: Double = 0.003) throws -> VoiceRig {
        let tone = SampleFixtures.sine(100, frames: 9600, amplitude: 0.3)
        return try VoiceRig(
            samples: [("low.wav", tone, 1, 48000, 4800...9599)], polyphony: polyphony, fadeSeconds: fadeSeconds)
    }

    static func looped(_ rig: VoiceRig, gain: Float = 1, release: Double = 1) -> SFZVoiceParameters {
        var parameters = rig.parameters("low.wav")
        parameters.loopMode = .loopContinuous
        parameters.gain = gain
        parameters.amplitudeEnvelope.release = release
        return parameters
    }

    /// Two voices sound, a third steals one: the output's largest step stays near the sines' own (a cut
    /// would step by up to 0.3).
    @Test func aStolenVoiceFadesWithoutAClick() throws {
        let rig = try Self.rig(polyphony: 2)
        let voice = Self.looped(rig)
        var second = voice
        second.pitchCents = 700
        var third = voice
        third.pitchCents = 400
        // Voice 2 starts where the first voice is at its peak, so cutting either would jump.
        let (left, _) = rig.render(
            frames: 12000, slice: 64,
            events: [(0, .start(id: 0, voice)), (1000, .start(id: 1, second)), (6120, .start(id: 2, third))])
        // Each sine's own step at most 0.3·2π·f/48000 (f ≤ 150 Hz); three at once, plus the fade's slope.
        let ownSteps: Float = 0.3 * 2 * .pi * (100 + 149.8 + 126) / 48000
        let fadeSlope: Float = 0.3 / 144
        let largest = SignalMeasure.maximumStep(left)
        #expect(largest < ownSteps + fadeSlope, "a step of \(largest)")
        #expect(rig.engine.status.steals == 1)
        #expect(rig.engine.status.activeVoices == 2)
    }

    /// A released voice is stolen before an older one still held.
    @Test func releasedVoicesAreStolenFirst() throws {
        let rig = try Self.rig(polyphony: 2)
        let voice = Self.looped(rig, release: 2)
        var handles: [SFZVoiceHandle] = []
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer {
            left.deallocate()
            right.deallocate()
        }
        handles.append(rig.engine.start(voice)!)
        rig.engine.render(frameCount: 512, left: left, right: right)
        handles.append(rig.engine.start(voice)!)
        rig.engine.render(frameCount: 512, left: left, right: right)
        rig.engine.release(handles[1])
        rig.engine.render(frameCount: 512, left: left, right: right)
        #expect(rig.engine.isActive(handles[1]), "still releasing")
        handles.append(rig.engine.start(voice)!)
        rig.engine.render(frameCount: 512, left: left, right: right)
        #expect(rig.engine.isActive(handles[0]), "the oldest, held, stays")
        #expect(!rig.engine.isActive(handles[1]), "the released one is stolen")
        #expect(rig.engine.isActive(handles[2]))
    }

    /// With none released, the quietest goes, whatever its age.
    @Test func otherwiseTheQuietestIsStolen() throws {
        let rig = try Self.rig(polyphony: 2)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer {
            left.deallocate()
            right.deallocate()
        }
        let loud = rig.engine.start(Self.looped(rig, gain: 1))!
        rig.engine.render(frameCount: 512, left: left, right: right)
        let quiet = rig.engine.start(Self.looped(rig, gain: 0.1))!
        rig.engine.render(frameCount: 512, left: left, right: right)
        let new = rig.engine.start(Self.looped(rig))!
        rig.engine.render(frameCount: 512, left: left, right: right)
        #expect(rig.engine.isActive(loud))
        #expect(!rig.engine.isActive(quiet))
        #expect(rig.engine.isActive(new))
    }

    /// A fast choke fades the group's voices over the same 3 ms; a normal one releases them.
    @Test func chokesFadeOrRelease() throws {
        let rig = try Self.rig(polyphony: 8)
        var open = Self.looped(rig, release: 1)
        open.group = 7
        let (fast, _) = rig.render(
            frames: 8000, slice: 100, events: [(0, .start(id: 0, open)), (3000, .choke(group: 7, .fast))])
        #expect(fast[(3000 + 145)...].allSatisfy { $0 == 0 }, "silent 3 ms after the choke")
        let bound: Float = 0.3 * 2 * Float.pi * 100 / 48000 + 0.3 / 144
        #expect(SignalMeasure.maximumStep(fast) < bound)
        let (normal, _) = rig.render(
            frames: 8000, slice: 100, events: [(0, .start(id: 0, open)), (3000, .choke(group: 7, .normal))])
        #expect((normal[7000..<8000].map { abs($0) }.max() ?? 0) > 0.01, "still releasing")
    }
}

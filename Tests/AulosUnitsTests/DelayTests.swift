import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

/// A host whose tempo is whatever `tempo` holds, playing: what the delay's sync reads through the host
/// callbacks.
final class FixedTempoHost {
    let tempo = UnsafeMutablePointer<Double>.allocate(capacity: 1)

    init(_ bpm: Double) { tempo.initialize(to: bpm) }
    deinit { tempo.deallocate() }

    var callbacks: HostCallbackInfo {
        HostCallbackInfo(
            hostUserData: UnsafeMutableRawPointer(tempo),
            beatAndTempo: { user, beat, tempo in
                beat?.pointee = 0
                tempo?.pointee = user!.assumingMemoryBound(to: Double.self).pointee
                return 0
            }, musicalTimeLocation: nil,
            transportState: { _, playing, _, _, _, _, _, _ in
                playing?.pointee = 1
                return 0
            })
    }
}

/// The delay: exact to the sample, synced to the host's tempo, ping-pong, and smooth when its time changes.
@Suite struct DelayTests {
    typealias Delay = DelayUnit

    /// Frames at which `channel` holds a sample above `threshold`.
    func onsets(_ channel: [Float], above threshold: Float = 0.05) -> [Int] {
        channel.indices.filter { abs(channel[$0]) > threshold && ($0 == 0 || abs(channel[$0 - 1]) <= threshold) }
    }

    @Test func theDelayTimeIsExactToTheSample() throws {
        for (milliseconds, frames) in [(10.5, 504), (375.0, 18_000), (1.0, 48)] {
            let rig = try EffectRig(Delay.componentDescription, signal: 2) { unit in
                try unit.setParameter(Delay.Parameter.time.id, value: Float(milliseconds))
                try unit.setParameter(Delay.Parameter.feedback.id, value: 0)
                try unit.setParameter(Delay.Parameter.mix.id, value: 100)
            }
            let output = rig.harness.render(frames + 1000, slice: 256)
            for channel in output {
                #expect(channel[frames] == 1, "\(milliseconds) ms")
                #expect(channel.indices.filter { channel[$0] != 0 } == [frames], "\(milliseconds) ms")
            }
        }
    }

    @Test(arguments: [
        (120.0, 4, 0, 12_000),  // an eighth at 120 BPM: 0.25 s
        (90.0, 4, 1, 24_000),  // a dotted eighth at 90 BPM: 0.5 s
        (90.0, 3, 2, 21_333),  // a quarter triplet at 90 BPM: 0.4444 s
        (140.0, 2, 0, 41_143),  // a half note at 140 BPM: 0.857 s
    ])
    func aSyncedDelayIsExactlyItsNoteValue(tempo: Double, sync: Int, kind: Int, frames: Int) throws {
        let host = FixedTempoHost(tempo)
        let rig = try EffectRig(Delay.componentDescription, signal: 2) { unit in
            try unit.set(.hostCallbacks, host.callbacks)
            try unit.setParameter(Delay.Parameter.sync.id, value: Float(sync))
            try unit.setParameter(Delay.Parameter.syncKind.id, value: Float(kind))
            try unit.setParameter(Delay.Parameter.feedback.id, value: 0)
            try unit.setParameter(Delay.Parameter.mix.id, value: 100)
        }
        let output = rig.harness.render(frames + 1000, slice: 512)
        #expect(onsets(output[0]) == [frames])
        #expect(
            Delay.syncedSeconds(sync: sync, kind: kind, tempo: tempo).map { Int(($0 * 48_000).rounded()) } == frames)
    }

    @Test func aTempoChangeMovesTheRepeatsToTheNewNoteValue() throws {
        let host = FixedTempoHost(120)
        let rig = try EffectRig(Delay.componentDescription, signal: 2) { unit in
            try unit.set(.hostCallbacks, host.callbacks)
            try unit.setParameter(Delay.Parameter.sync.id, value: 3)  // a quarter: 24,000 frames at 120 BPM
            try unit.setParameter(Delay.Parameter.feedback.id, value: 90)
            try unit.setParameter(Delay.Parameter.damping.id, value: 20_000)
            try unit.setParameter(Delay.Parameter.mix.id, value: 100)
        }
        var output = rig.harness.render(30_000, slice: 512)[0]
        host.tempo.pointee = 100  // a quarter is now 28,800 frames
        output += rig.harness.render(60_000, slice: 512)[0]
        let repeats = onsets(output, above: 0.2)
        #expect(repeats.first == 24_000)
        #expect(repeats.count >= 3)
        if repeats.count >= 3 { #expect(repeats[2] - repeats[1] == 28_800, "\(repeats)") }
    }

    @Test func pingPongAlternatesSides() throws {
        let rig = try EffectRig(Delay.componentDescription, signal: 2) { unit in
            try unit.setParameter(Delay.Parameter.time.id, value: 100)  // 4,800 frames
            try unit.setParameter(Delay.Parameter.pingPong.id, value: 1)
            try unit.setParameter(Delay.Parameter.feedback.id, value: 80)
            try unit.setParameter(Delay.Parameter.damping.id, value: 20_000)
            try unit.setParameter(Delay.Parameter.mix.id, value: 100)
        }
        let output = rig.harness.render(20_000, slice: 256)
        #expect(onsets(output[0], above: 0.1) == [4_800, 14_400])
        #expect(onsets(output[1], above: 0.1) == [9_600, 19_200])
    }

    @Test func changingTheTimeMidNoteNeverClicks() throws {
        let rig = try EffectRig(Delay.componentDescription, signal: -440) { unit in
            try unit.setParameter(Delay.Parameter.mix.id, value: 50)
        }
        var output = rig.render(24_000, slice: 256)
        for (change, preset) in Delay().factoryPresets.enumerated() {
            try rig.effect.set(.presentPreset, preset)
            try rig.effect.setParameter(Delay.Parameter.time.id, value: Float(50 + change * 97))
            output += rig.render(12_000, slice: 256)
        }
        let worst = worstStepOverSlopeBound(output, frequency: 440, from: 24_000)
        #expect(worst.ratio <= 1, "a step \(worst.ratio)× the slope bound at frame \(worst.at)")
    }

    @Test func outputIsIndependentOfSliceSize() throws {
        func render(_ slice: Int) throws -> [[Float]] {
            let rig = try EffectRig(Delay.componentDescription, signal: 3, maximumFramesPerSlice: 4096) { unit in
                try unit.set(.presentPreset, Delay().factoryPresets[4])
            }
            return rig.harness.render(48_000, slice: slice)
        }
        let reference = try render(256)
        for slice in [16, 64, 1000, 4096] { #expect(try render(slice) == reference, "slice \(slice)") }
    }

    @Test func renderingWhileParametersMoveAllocatesNothing() throws {
        let host = FixedTempoHost(120)
        let rig = try EffectRig(Delay.componentDescription, signal: -440) { unit in
            try unit.set(.hostCallbacks, host.callbacks)
        }
        for cycle in 0..<10_000 {
            if cycle % 25 == 0 {
                try rig.effect.setParameter(Delay.Parameter.time.id, value: Float(10 + cycle % 900))
                try rig.effect.setParameter(Delay.Parameter.sync.id, value: Float(cycle / 25 % 7))
                try rig.effect.setParameter(Delay.Parameter.damping.id, value: Float(500 + cycle % 9000))
                host.tempo.pointee = Double(60 + cycle % 120)
            }
            rig.harness.renderSlice(64, counting: true)
        }
        try expectNoAllocations(rig.harness.allocations)
    }
}

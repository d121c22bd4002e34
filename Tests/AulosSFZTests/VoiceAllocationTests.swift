import AulosSFZ
import AulosTestSupport
import Testing

/// No heap allocation on the render thread across thousands of render cycles with voices starting,
/// stealing, releasing, choking and streaming (live, not waiting), counted by the test executable's malloc.
@Suite struct VoiceAllocationTests {
    @Test func renderingStartingAndStreamingNeverAllocate() throws {
        let rig = try VoiceRig(
            samples: StreamingTests.samples(), limits: VoiceRig.streamed, polyphony: 6, fadeSlots: 4, stream: true,
            waitsForData: false)
        var long = rig.parameters("long.wav")
        long.filterType = .lowPass2Pole
        long.pitchLFO = SFZLFO(frequency: 4, depth: 20)
        var loop = rig.parameters("looped.wav")
        loop.loopMode = .loopContinuous
        loop.filterType = .highPass1Pole
        loop.group = 2
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer {
            left.deallocate()
            right.deallocate()
        }
        var handles = [SFZVoiceHandle?](repeating: nil, count: 16)
        handles.reserveCapacity(16)
        var tally = AllocationTally()
        for cycle in 0..<4000 {
            let frames = 32 + cycle % 200
            tally.count {
                if cycle % 7 == 0 {
                    var parameters = cycle % 14 == 0 ? long : loop
                    parameters.pitchCents = Double(cycle % 2400) - 1200
                    parameters.offset = (cycle * 997) % 120_000
                    handles[cycle % 16] = rig.engine.start(parameters, at: cycle % frames)
                }
                if cycle % 11 == 0, let handle = handles[(cycle / 11) % 16] { rig.engine.release(handle, at: 3) }
                if cycle % 13 == 0, let handle = handles[(cycle / 13) % 16] {
                    rig.engine.setInputs(handle, SFZVoiceInputs(volume: -3, pan: 0.2, cutoff: 300, pitch: 10))
                }
                if cycle % 97 == 0 { rig.engine.choke(group: 2, mode: .fast, at: 5) }
                rig.engine.render(frameCount: frames, left: left, right: right)
            }
        }
        #expect(rig.engine.status.steals > 0, "the test should steal")
        #expect(rig.engine.status.streamedBytes > 0, "the test should stream")
        try expectNoAllocations(tally, "starting, stealing and streaming SFZ voices")
    }
}

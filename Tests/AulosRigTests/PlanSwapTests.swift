import AulosCore
import AulosMIDI
import AulosRig
import AulosTestSupport
import Testing

/// A graph change in mid-play (here the smallest one: a render notification added, which publishes a new
/// render plan) leaves the sound as it was, sample for sample. A new plan counted its render cycles from 0
/// again, so a mixer with sends, which computes once per cycle and remembered the old plan's cycle 1, took
/// the new plan's first cycle as done and played the previous slice again.
@Suite struct PlanSwapTests {
    /// Two seconds of a chord through a rig with a return (its parts mixer has a send), the plan replaced
    /// `swaps` times while it plays.
    func render(swapping swaps: [Int]) throws -> [Float] {
        let rig = try Rig(
            yaml: "returns:\n  - name: hall\n    effects:\n      - unit: reverb\nparts:\n  - name: Pad\n"
                + "    instrument: synth\n    sends: {hall: 0.4}\n")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        for note: UInt8 in [60, 64, 67] {
            playback.scheduler.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: 0)
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        let nothing: RenderCallback = { _, _, _, _, _, _ in 0 }
        var samples: [Float] = []
        for slice in 0..<375 {
            if swaps.contains(slice) { try playback.graph.addRenderNotify(RenderCallbackStruct(nothing, refCon: nil)) }
            harness.renderSlice(256)
            samples += harness.interleaved(frames: 256)
        }
        return samples
    }

    @Test func aNewPlanInMidPlayChangesNoSample() throws {
        let plain = try render(swapping: [])
        #expect(plain.map(abs).max()! > 0.01)
        for swaps in [[1], [2, 50], [100]] {
            let swapped = try render(swapping: swaps)
            let first = zip(plain, swapped).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "plan replaced before slices \(swaps): first different frame \((first ?? 0) / 2)")
        }
    }
}

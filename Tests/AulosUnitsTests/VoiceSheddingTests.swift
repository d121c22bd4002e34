import AulosCore
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

/// Overload shedding: when the host lowers an instrument's voice limit, the instrument ends the excess
/// voices on the render thread (released, then oldest, with a 128-frame fade), counts them, and allocates
/// nothing doing it. (The sampler's shedding is tested with it, in AulosFluidTests.)
@Suite struct VoiceSheddingTests {
    @Test func synthShedsOldestVoicesToTheLimit() throws {
        let rig = try InstrumentRig(OscillatorSynthUnit.componentDescription, maximumFrames: 64)
        let synth = rig.instrument as! OscillatorSynthUnit
        for note in 0..<24 {
            rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(40 + note), velocity: 100), at: Int64(note))
        }
        rig.renderCounting(slices: 4)
        #expect(synth.voiceBudget.active == 24)
        synth.voiceBudget.limit = 8
        rig.renderCounting(slices: 1)
        #expect(synth.voiceBudget.shed == 16)
        rig.renderCounting(slices: 4)  // the fades (128 frames) are over
        #expect(synth.voiceBudget.active == 8)
        // New notes under the limit steal rather than grow past it (each counted as shed at the next slice).
        for note in 0..<4 {
            rig.scheduler.schedule(
                .noteOn(channel: 0, note: UInt8(90 + note), velocity: 100), at: rig.harness.sampleTime)
        }
        rig.renderCounting(slices: 4)
        #expect(synth.voiceBudget.active == 8 && synth.voiceBudget.shed == 20)
        synth.voiceBudget.limit = .max
        for note in 0..<4 {
            rig.scheduler.schedule(
                .noteOn(channel: 0, note: UInt8(100 + note), velocity: 100), at: rig.harness.sampleTime)
        }
        rig.renderCounting(slices: 2)
        #expect(synth.voiceBudget.active == 12 && synth.voiceBudget.shed == 20)
        try expectNoAllocations(rig.harness.allocations)
    }
}

import AulosCore
import AulosFluid
import AulosMIDI
import AulosTestSupport
import Testing

/// Overload shedding on the sampler: when the host lowers its voice limit, the oldest notes past it get a
/// fast release on the render thread, are counted, and nothing is allocated doing it.
@Suite struct SamplerSheddingTests {
    @Test func samplerShedsTheOldestNotesWithAFastRelease() throws {
        let rig = try samplerRig(slice: 64)
        let sampler = rig.instrument as! FluidSynthSamplerUnit
        for note in 0..<40 {
            rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(40 + note), velocity: 100), at: Int64(note * 64))
        }
        rig.renderCounting(slices: 44)
        let sounding = sampler.voiceBudget.active
        #expect(sounding >= 40, "the bundled piano sounds at least one voice a note")
        sampler.voiceBudget.limit = 10
        // At most 32 voices are shed a slice: the bundled grand is a stereo pair (two voices a note), so
        // the 70 past the limit take three slices.
        rig.renderCounting(slices: 3)
        #expect(sampler.voiceBudget.shed == sounding - 10, "the oldest notes past the limit, in the first slices")
        rig.renderCounting(slices: 40)  // 15 ms releases are over
        #expect(sampler.voiceBudget.active == 10)
        sampler.voiceBudget.limit = .max
        for note in 0..<10 {
            rig.scheduler.schedule(
                .noteOn(channel: 0, note: UInt8(20 + note), velocity: 100), at: rig.harness.sampleTime)
        }
        rig.renderCounting(slices: 4)
        #expect(sampler.voiceBudget.active >= 20, "the limit lifted, new notes sound again")
        try expectNoAllocations(rig.harness.allocations)
    }
}

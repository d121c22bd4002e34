import AulosCore
import AulosFluid
import AulosMIDI
import AulosUnits
import CAllocationCounter
import Testing

/// Overload shedding: when the host lowers an instrument's voice limit, the instrument ends the excess
/// voices on the render thread (synth: released, then oldest, with a 128-frame fade), counts them, and
/// allocates nothing doing it.
@Suite struct VoiceSheddingTests {
    func render(_ rig: inout InstrumentRig, cycles: Int, count allocations: inout Int64) {
        let entry = rig.graph.renderEntry!
        for _ in 0..<cycles {
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp(sampleTime: rig.time)
            rig.buffers.list.pointee.setFrameCount(64, bytesPerFrame: 4)
            allocation_counter_begin()
            _ = entry.render(flags: &flags, timeStamp: &stamp, frameCount: 64, ioData: rig.buffers.list)
            allocations += allocation_counter_end().allocations
            rig.time += 64
        }
    }

    @Test func synthShedsOldestVoicesToTheLimit() throws {
        var rig = try InstrumentRig(OscillatorSynthUnit.componentDescription, maximumFrames: 64)
        let synth = rig.instrument as! OscillatorSynthUnit
        var allocations: Int64 = 0
        for note in 0..<24 { rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(40 + note), velocity: 100), at: Int64(note)) }
        render(&rig, cycles: 4, count: &allocations)
        #expect(synth.voiceBudget.active == 24)
        synth.voiceBudget.limit = 8
        render(&rig, cycles: 1, count: &allocations)
        #expect(synth.voiceBudget.shed == 16)
        render(&rig, cycles: 4, count: &allocations)  // the fades (128 frames) are over
        #expect(synth.voiceBudget.active == 8)
        // New notes under the limit steal rather than grow past it (each counted as shed at the next slice).
        for note in 0..<4 { rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(90 + note), velocity: 100), at: rig.time) }
        render(&rig, cycles: 4, count: &allocations)
        #expect(synth.voiceBudget.active == 8 && synth.voiceBudget.shed == 20)
        synth.voiceBudget.limit = .max
        for note in 0..<4 { rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(100 + note), velocity: 100), at: rig.time) }
        render(&rig, cycles: 2, count: &allocations)
        #expect(synth.voiceBudget.active == 12 && synth.voiceBudget.shed == 20)
        if allocation_counter_is_compiled_in() != 0 { #expect(allocations == 0) }
    }

    @Test func samplerShedsTheOldestNotesWithAFastRelease() throws {
        var rig = try samplerRig(slice: 64)
        let sampler = rig.instrument as! FluidSynthSamplerUnit
        var allocations: Int64 = 0
        for note in 0..<40 { rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(40 + note), velocity: 100), at: Int64(note * 64)) }
        render(&rig, cycles: 44, count: &allocations)
        let sounding = sampler.voiceBudget.active
        #expect(sounding >= 40, "the bundled piano sounds at least one voice a note")
        sampler.voiceBudget.limit = 10
        render(&rig, cycles: 2, count: &allocations)
        #expect(sampler.voiceBudget.shed == sounding - 10, "the oldest notes past the limit, in the first slices")
        render(&rig, cycles: 40, count: &allocations)  // 15 ms releases are over
        #expect(sampler.voiceBudget.active == 10)
        sampler.voiceBudget.limit = .max
        for note in 0..<10 { rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(20 + note), velocity: 100), at: rig.time) }
        render(&rig, cycles: 4, count: &allocations)
        #expect(sampler.voiceBudget.active >= 20, "the limit lifted, new notes sound again")
        if allocation_counter_is_compiled_in() != 0 { #expect(allocations == 0) }
    }
}

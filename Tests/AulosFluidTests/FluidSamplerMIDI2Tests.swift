import AulosCore
import AulosFluid
import AulosMIDI
import AulosTestSupport
import Testing

/// The sampler knows MIDI 1.0 only: a MIDI 2.0 message plays as its MIDI 1.0 bytes (the value scaled down), a
/// per-note message plays nothing, and the MIDI 1.0 stand-in that follows a lone note's per-note bend bends the
/// channel, as before MIDI 2.0 reached the instruments.
@Suite struct FluidSamplerMIDI2Tests {
    func render(_ timed: [(Int64, ChannelMessage)]) throws -> ([Float], [Float]) {
        let rig = try samplerRig(slice: 256)
        for (time, message) in timed {
            rig.scheduler.schedule(TimedMIDIEvent(sampleTime: time, destination: 0, message: message))
        }
        return rig.render(48_000, slice: 256)
    }

    @Test func midi2PlaysAsItsMIDI1Bytes() throws {
        // MIDI 2.0: velocity 0x81FF (64 in 7 bits), volume 0xA1FF_FFFF (80), a per-note bend of the lone note with
        // its stand-in a frame later (bend 0x3000, as the live input spreads them), a per-note bend with none and a
        // per-note controller, pressure; then the same as MIDI 1.0 bytes alone.
        let midi2: [(Int64, ChannelMessage)] = [
            (0, ChannelMessage(midi2: 0xB0, data1: 7, data2: 80, wide: 0xA1FF_FFFF)),
            (0, ChannelMessage(midi2: 0x90, data1: 60, data2: 64, wide: 0x81FF)),
            (12_000, .perNotePitchBend(channel: 0, note: 60, value: 0xC000_0000)),
            (12_001, ChannelMessage(midi2: 0xE0, data1: 0, data2: 96, wide: 0xC000_0000).standingIn()),
            (16_000, .perNotePitchBend(channel: 0, note: 60, value: 0x2000_0000)),  // as if another note were held
            (18_000, .perNoteController(channel: 0, note: 60, controller: 7, value: 0)),
            (20_000, ChannelMessage(midi2: 0xD0, data1: 100, wide: 0xC9FF_FFFF)),
            (30_000, ChannelMessage(midi2: 0x80, data1: 60, data2: 20, wide: 0x2900)),
        ]
        let midi1: [(Int64, ChannelMessage)] = [
            (0, .controlChange(channel: 0, controller: 7, value: 80)),
            (0, .noteOn(channel: 0, note: 60, velocity: 64)),
            (12_001, ChannelMessage(status: 0xE0, data1: 0, data2: 96)),
            (20_000, ChannelMessage(status: 0xD0, data1: 100)),
            (30_000, .noteOff(channel: 0, note: 60, velocity: 20)),
        ]
        let (left, right) = try render(midi2)
        let reference = try render(midi1)
        #expect(left.contains { $0 != 0 })
        #expect(left == reference.0 && right == reference.1)
        // The bend is heard: without its stand-in the render differs.
        let unbent = try render(midi2.filter { !$0.1.resolution.isStandIn })
        #expect(unbent.0 != left)
    }
}

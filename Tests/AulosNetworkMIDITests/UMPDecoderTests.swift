import AulosMIDI
import Testing

@testable import AulosNetworkMIDI

/// UMP to Aulos's events: every message kind, with the exact values the scaling gives. The words are written
/// from M2-104-UM's layouts here, independently of the decoder.
@Suite struct UMPDecoderTests {
    private func decode(_ words: [UInt32], into decoder: inout UMPDecoder) -> [UMPEvent] {
        var events: [UMPEvent] = []
        for message in UMPMessage.split(words[...]) ?? [] { decoder.decode(message, into: &events) }
        return events
    }

    private func decode(_ words: [UInt32]) -> [UMPEvent] {
        var decoder = UMPDecoder()
        return decode(words, into: &decoder)
    }

    private func channel(_ status: UInt8, _ data1: UInt8, _ data2: UInt8 = 0) -> UMPEvent {
        .channel(ChannelMessage(status: status, data1: data1, data2: data2))
    }

    /// A MIDI 2.0 message: its MIDI 1.0 bytes and its whole value.
    private func midi2(_ status: UInt8, _ data1: UInt8, _ data2: UInt8 = 0, wide: UInt32) -> UMPEvent {
        .channel(ChannelMessage(midi2: status, data1: data1, data2: data2, wide: wide))
    }

    /// A MIDI 1.0 stand-in for a per-note message.
    private func standIn(_ status: UInt8, _ data1: UInt8, _ data2: UInt8, wide: UInt32) -> UMPEvent {
        .channel(ChannelMessage(midi2: status, data1: data1, data2: data2, wide: wide).standingIn())
    }

    @Test func messageLengthsFollowTheType() {
        #expect(UMPMessage.split([0x2090_3C64, 0x4090_3C00, 0x8000_0000, 0xF000_0101, 0, 0, 0][...])?.count == 3)
        #expect(UMPMessage.split([0x4090_3C00][...]) == nil)  // a MIDI 2.0 note-on cut after one word
        #expect(UMPMessage.split([0xB000_0000, 0, 0][...])?.count == 1)
        // A MIDI 1.0 note whole, then a MIDI 2.0 note cut after one word: the whole one is kept.
        #expect(UMPMessage.wholeMessages([0x2090_3C64, 0x4090_3C00][...]) == [[0x2090_3C64][...]])
    }

    @Test func midi1ChannelVoiceIsPassedOn() {
        #expect(decode([0x2090_3C64]) == [channel(0x90, 60, 100)])
        #expect(decode([0x23E5_0040]) == [channel(0xE5, 0, 64)])  // group 4 plays the same channels
        #expect(decode([0x20F8_0000]) == [])  // a system status in a channel voice message: not one
    }

    @Test func midi2NotesKeepTheirVelocityBesideItsTruncation() {
        // Note on ch 2, note 60, velocity 0xFFFF → 127; 0x8000 → 64; 0x01FF → 0, made 1 (0 would mean note-off);
        // each with its 16 bits beside.
        #expect(decode([0x4091_3C00, 0xFFFF_0000]) == [midi2(0x91, 60, 127, wide: 0xFFFF)])
        #expect(decode([0x4091_3C00, 0x8000_0000]) == [midi2(0x91, 60, 64, wide: 0x8000)])
        #expect(decode([0x4091_3C00, 0x01FF_0000]) == [midi2(0x91, 60, 1, wide: 0x01FF)])
        #expect(decode([0x4091_3C00, 0x0000_0000]) == [midi2(0x91, 60, 1, wide: 0)])
        // Two velocities with the same top 7 bits are two messages.
        #expect(decode([0x4091_3C00, 0x8000_0000]) != decode([0x4091_3C00, 0x81FF_0000]))
        // Note off with velocity 0x4000 → 32; its attribute (type 3, data 0x1234) is dropped.
        #expect(decode([0x4081_3C03, 0x4000_1234]) == [midi2(0x81, 60, 32, wide: 0x4000)])
    }

    @Test func midi2ControllersPressureAndPitchBendScale() {
        // CC 7 = 0x8000_0000 → 64; 0xFFFF_FFFF → 127; 0x01FF_FFFF → 0; each with its 32 bits beside.
        #expect(decode([0x40B0_0700, 0x8000_0000]) == [midi2(0xB0, 7, 64, wide: 0x8000_0000)])
        #expect(decode([0x40B0_0700, 0xFFFF_FFFF]) == [midi2(0xB0, 7, 127, wide: 0xFFFF_FFFF)])
        #expect(decode([0x40B0_0700, 0x01FF_FFFF]) == [midi2(0xB0, 7, 0, wide: 0x01FF_FFFF)])
        // Poly pressure note 61 = 0x4000_0000 → 32; channel pressure 0xC000_0000 → 96.
        #expect(decode([0x40A3_3D00, 0x4000_0000]) == [midi2(0xA3, 61, 32, wide: 0x4000_0000)])
        #expect(decode([0x40D3_0000, 0xC000_0000]) == [midi2(0xD3, 96, wide: 0xC000_0000)])
        // Pitch bend: the center 0x8000_0000 → 8192 (LSB 0, MSB 64); the top → 16383; 0x8004_0000 → 8193.
        #expect(decode([0x40E0_0000, 0x8000_0000]) == [midi2(0xE0, 0, 64, wide: 0x8000_0000)])
        #expect(decode([0x40E0_0000, 0xFFFF_FFFF]) == [midi2(0xE0, 127, 127, wide: 0xFFFF_FFFF)])
        #expect(decode([0x40E0_0000, 0x8004_0000]) == [midi2(0xE0, 1, 64, wide: 0x8004_0000)])
        // A MIDI 1.0 message in UMP stays MIDI 1.0: no wide value.
        guard case .channel(let midi1)? = decode([0x20B0_0740]).first else {
            Issue.record("no channel message")
            return
        }
        #expect(midi1.resolution == .midi1 && midi1.wide == 0)
    }

    @Test func programChangeCarriesItsBank() {
        // Program 5 with the bank-valid flag, bank MSB 2, LSB 3: CC 0, CC 32, then the program.
        #expect(
            decode([0x40C4_0001, 0x0500_0203]) == [channel(0xB4, 0, 2), channel(0xB4, 32, 3), channel(0xC4, 5)])
        // Without the flag the bank bytes are not sent.
        #expect(decode([0x40C4_0000, 0x0500_0203]) == [channel(0xC4, 5)])
    }

    @Test func rpnAndNrpnBecomeDataEntry() {
        // RPN bank 0 index 0 (pitch-bend sensitivity) = 0x0600_0000 → 14 bits 0x0180: CC 6 = 3, CC 38 = 0.
        #expect(
            decode([0x4020_0000, 0x0600_0000]) == [
                channel(0xB0, 101, 0), channel(0xB0, 100, 0), channel(0xB0, 6, 3), channel(0xB0, 38, 0),
            ])
        // NRPN bank 1 index 2 = 0xFFFF_FFFF → CC 99 1, CC 98 2, CC 6 127, CC 38 127.
        #expect(
            decode([0x4031_0102, 0xFFFF_FFFF]) == [
                channel(0xB1, 99, 1), channel(0xB1, 98, 2), channel(0xB1, 6, 127), channel(0xB1, 38, 127),
            ])
        // Relative RPN has no MIDI 1.0 form.
        var decoder = UMPDecoder()
        #expect(decode([0x4040_0000, 0x0000_0001], into: &decoder) == [])
        #expect(decoder.ignored == 1)
    }

    /// Per-note pitch bend (status 0x6: word 0 `0x4 group 6 channel, note, 0`, word 1 the 32-bit bend) and
    /// registered per-note controllers (status 0x0: word 0 `…, note, index`, word 1 the value) are per-note messages
    /// of their own, on the note, for every note; a MIDI 1.0 stand-in follows only for a note alone on its channel.
    @Test func perNoteMessagesCarryTheirNoteAndValue() {
        var decoder = UMPDecoder()
        _ = decode([0x4092_4000, 0xFFFF_0000], into: &decoder)  // note 64 on channel 3, alone
        let bend = ChannelMessage.perNotePitchBend(channel: 2, note: 64, value: 0xC000_0000)
        #expect(bend.status == 0x62 && bend.data1 == 64 && bend.wide == 0xC000_0000 && bend.isPerNote)
        // Per-note pitch bend on note 64 = 0xC000_0000, then channel 3's pitch bend 0x3000 (LSB 0, MSB 96) standing
        // in for it.
        #expect(
            decode([0x4062_4000, 0xC000_0000], into: &decoder) == [
                .channel(bend), standIn(0xE2, 0, 96, wide: 0xC000_0000),
            ])
        // Registered per-note controller 74 (brightness, MPE's slide), then CC 74; 1 (modulation), then CC 1.
        #expect(
            decode([0x4002_404A, 0x8000_0123], into: &decoder) == [
                .channel(.perNoteController(channel: 2, note: 64, controller: 74, value: 0x8000_0123)),
                standIn(0xB2, 74, 64, wide: 0x8000_0123),
            ])
        #expect(
            decode([0x4002_4001, 0x2000_0000], into: &decoder) == [
                .channel(.perNoteController(channel: 2, note: 64, controller: 1, value: 0x2000_0000)),
                standIn(0xB2, 1, 16, wide: 0x2000_0000),
            ])
        // Per-note pitch 7.25 (#3) has no MIDI 1.0 controller: the per-note message alone. An assignable per-note
        // controller (status 0x1) and a registered one above 127: ignored.
        #expect(
            decode([0x4002_4003, 0x2000_0000, 0x4012_4001, 0x2000_0000, 0x4002_4080, 0x1], into: &decoder) == [
                .channel(.perNoteController(channel: 2, note: 64, controller: 3, value: 0x2000_0000))
            ])
        // A note not held, or a second note on the channel: the per-note message, and no stand-in (it would bend
        // the wrong notes of an instrument without per-note expression).
        #expect(
            decode([0x4062_4100, 0xC000_0000], into: &decoder) == [
                .channel(.perNotePitchBend(channel: 2, note: 65, value: 0xC000_0000))
            ])
        _ = decode([0x2092_4164], into: &decoder)  // note 65 joins on channel 3 (a MIDI 1.0 note-on)
        #expect(decode([0x4062_4000, 0xC000_0000], into: &decoder) == [.channel(bend)])
        _ = decode([0x2082_4100], into: &decoder)  // note 65 leaves
        #expect(
            decode([0x4062_4000, 0x8000_0000], into: &decoder) == [
                .channel(.perNotePitchBend(channel: 2, note: 64, value: 0x8000_0000)),
                standIn(0xE2, 0, 64, wide: 0x8000_0000),
            ])
        #expect(decoder.ignored == 2)
        decoder.reset()
        #expect(
            decode([0x4062_4000, 0x8000_0000], into: &decoder) == [
                .channel(.perNotePitchBend(channel: 2, note: 64, value: 0x8000_0000))
            ])
    }

    /// The values a MIDI 2.0 message carries read on MIDI 1.0's scales (`MIDI2Scale`): the ends and the centre exact,
    /// the steps between the 7-bit ones kept.
    @Test func wideValuesReadOnMIDI1Scales() {
        #expect(MIDI2Scale.velocity(0) == 0 && MIDI2Scale.velocity(0x8000) == 64 && MIDI2Scale.velocity(0xFFFF) == 127)
        #expect(MIDI2Scale.velocity(100 << 9) > 99.4 && MIDI2Scale.velocity(100 << 9) < 100)
        #expect(MIDI2Scale.velocity(0x8001) > 64 && MIDI2Scale.velocity(0x8001) < 64.01)
        #expect(MIDI2Scale.controller(0x8000_0000) == 64 && MIDI2Scale.controller(0xFFFF_FFFF) == 127)
        #expect(MIDI2Scale.controller(0xC000_0000) == 64 + 63 * Double(0x4000_0000) / Double(0x7FFF_FFFF))
        #expect(MIDI2Scale.bend(0x8000_0000) == 0 && MIDI2Scale.bend(0) == -8192 && MIDI2Scale.bend(0x8004_0000) == 1)
        #expect(MIDI2Scale.bend(0x8000_0001) > 0)
        // Through an event: velocity from the low 16 bits, channel pressure from `wide`, a MIDI 1.0 event's bytes.
        let note = MIDIEvent(offset: 0, message: ChannelMessage(midi2: 0x90, data1: 60, data2: 64, wide: 0x8100))
        #expect(note.fineValue == MIDI2Scale.velocity(0x8100))
        let pressure = MIDIEvent(offset: 0, message: ChannelMessage(midi2: 0xD0, data1: 96, wide: 0xC000_0000))
        #expect(pressure.fineValue == MIDI2Scale.controller(0xC000_0000))
        #expect(MIDIEvent(offset: 0, status: 0xD0, data1: 96, data2: 0).fineValue == 96)
        #expect(MIDIEvent(offset: 0, status: 0xE0, data1: 0, data2: 96).fineBend == 4096)
        #expect(
            MIDIEvent(offset: 0, message: .perNotePitchBend(channel: 0, note: 1, value: 0x4000_0000)).fineBend == -4096)
    }

    @Test func systemMessagesAreRead() {
        #expect(
            decode([0x10F8_0000, 0x10FA_0000, 0x10FC_0000]) == [.system(.timingClock), .system(.start), .system(.stop)])
        #expect(decode([0x10F2_0102]) == [.system(.songPosition(0x0101))])  // LSB 1, MSB 2 → 1 + 2·128 = 257
        #expect(decode([0x10F1_3500, 0x10F3_0700]) == [.system(.timeCodeQuarterFrame(0x35)), .system(.songSelect(7))])
        #expect(decode([0x10F4_0000]) == [])  // undefined
    }

    @Test func sysEx7IsReassembled() {
        // Complete in one: 3 bytes 7E 7F 09.
        #expect(decode([0x3003_7E7F, 0x0900_0000]) == [.system(.systemExclusive([0x7E, 0x7F, 0x09]))])
        // Start (6 bytes), continue (6), end (2) → 14 bytes.
        let words: [UInt32] = [0x3016_0102, 0x0304_0506, 0x3026_0708, 0x090A_0B0C, 0x3032_0D0E, 0x0000_0000]
        #expect(decode(words) == [.system(.systemExclusive(Array(1...14)))])
        // An end without a start is dropped; so is a byte over 0x7F, and a count over 6.
        var decoder = UMPDecoder()
        #expect(decode([0x3032_0D0E, 0, 0x3001_8000, 0, 0x3007_0000, 0], into: &decoder) == [])
        #expect(decoder.ignored == 3)
    }

    @Test func sysEx7IsBounded() {
        var decoder = UMPDecoder()
        var events: [UMPEvent] = []
        decoder.decode([0x3016_0101, 0x0101_0101], into: &events)
        for _ in 0..<(NetworkMIDILimits.maximumSysExBytes / 6) {
            decoder.decode([0x3026_0101, 0x0101_0101], into: &events)
        }
        decoder.decode([0x3030_0000, 0], into: &events)
        #expect(events.isEmpty)
        #expect(decoder.ignored == 1)
        // The next one is whole again.
        decoder.decode([0x3001_0500, 0], into: &events)
        #expect(events == [.system(.systemExclusive([5]))])
    }

    @Test func utilityDataAndFlexMessagesAreIgnoredAndStreamMessagesHandedOn() {
        var decoder = UMPDecoder()
        let words: [UInt32] = [0x0000_0000, 0x0020_1234, 0x5000_0000, 0, 0, 0, 0xD000_0000, 0, 0, 0]
        #expect(decode(words, into: &decoder) == [])
        #expect(decoder.ignored == 4)
        #expect(decode([0xF000_0101, 0x0000_001F, 0, 0]) == [.stream([0xF000_0101, 0x0000_001F, 0, 0])])
    }

    @Test func endpointDiscoveryIsAnswered() {
        var responder = UMPStreamResponder(endpointName: "Aulos", productInstanceId: "box-1")
        let answer = responder.answer([0xF000_0101, 0x0000_001F, 0, 0])
        #expect(
            answer == [
                // Endpoint Info: UMP 1.1, static, one function block, MIDI 2.0 and MIDI 1.0 protocols.
                [0xF001_0101, 0x8100_0300, 0, 0],
                // Endpoint Name "Aulos", complete: 'A' 'u' in word 0, "los" after.
                [0xF003_4175, 0x6C6F_7300, 0, 0],
                // Product Instance Id "box-1".
                [0xF004_626F, 0x782D_3100, 0, 0],
                // Stream Configuration: MIDI 2.0 protocol.
                [0xF006_0200, 0, 0, 0],
            ])
        // Only what the filter asks (name only, bit 2).
        #expect(responder.answer([0xF000_0101, 0x04, 0, 0]).count == 1)
        // A Stream Configuration Request for MIDI 1.0 is taken and confirmed.
        #expect(responder.answer([0xF005_0100, 0, 0, 0]) == [[0xF006_0100, 0, 0, 0]])
        #expect(responder.protocolInUse == 1)
    }

    @Test func longNamesAreSplitIntoStartContinueEnd() {
        var responder = UMPStreamResponder(endpointName: String(repeating: "n", count: 30), productInstanceId: "")
        let names = responder.answer([0xF000_0101, 0x04, 0, 0])
        // 30 bytes: 14 (start), 14 (continue), 2 (end).
        #expect(names.map { $0[0] >> 26 & 3 } == [1, 2, 3])
        #expect(names[2] == [0xFC03_6E6E, 0, 0, 0])
    }

    @Test func functionBlockDiscoveryIsAnswered() {
        var responder = UMPStreamResponder(endpointName: "Aulos", productInstanceId: "")
        // Block 0xFF (all), filter info and name.
        #expect(
            responder.answer([0xF010_FF03, 0, 0, 0]) == [
                // Active block 0, UI hint receiver, not MIDI 1.0, input; group 1 only.
                [0xF011_8011, 0x0001_0000, 0, 0],
                // Name: block 0, 'A' in word 0, "ulos" after.
                [0xF012_0041, 0x756C_6F73, 0, 0],
            ])
        #expect(responder.answer([0xF010_0503, 0, 0, 0]) == [])  // no block 5
    }
}

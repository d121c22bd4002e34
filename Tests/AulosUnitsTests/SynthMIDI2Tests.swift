import AulosCore
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// MIDI 2.0 on the synth: 16-bit velocity, 32-bit controllers and pitch bend between MIDI 1.0's steps, per-note pitch
/// bend and per-note controllers on one note among others on its channel (messages as `UMPDecoder` makes them).
@Suite struct SynthMIDI2Tests {
    typealias P = OscillatorSynthUnit.Parameter
    let synth = OscillatorSynthUnit.componentDescription

    /// The plain sine patch (velocity sensitivity `sensitivity`), playing `messages` at frame 0 then `later` at
    /// frame 24 000, rendered for a second.
    func render(
        _ messages: [ChannelMessage], later: [ChannelMessage] = [], sensitivity: Float = 0
    ) throws -> (left: [Float], right: [Float]) {
        var patch = pureSine
        patch[.velocitySensitivity] = sensitivity
        let rig = try InstrumentRig(synth) { try setSynth($0, patch) }
        for message in messages {
            rig.scheduler.schedule(TimedMIDIEvent(sampleTime: 0, destination: 0, message: message))
        }
        for message in later {
            rig.scheduler.schedule(TimedMIDIEvent(sampleTime: 24_000, destination: 0, message: message))
        }
        return rig.render(48_000, slice: 256)
    }

    /// The RMS level of a steady stretch, in dB.
    func level(_ samples: ArraySlice<Float>) -> Double {
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return 10 * log10(sum / Double(samples.count))
    }

    func noteOn(_ note: UInt8, velocity16: UInt16) -> ChannelMessage {
        ChannelMessage(midi2: 0x90, data1: note, data2: max(1, UInt8(velocity16 >> 9)), wide: UInt32(velocity16))
    }

    /// A 32-bit controller value that reads `position` on the 0…127 scale (above the centre), and its MIDI 2.0
    /// control change with the MIDI 1.0 byte the decoder gives it.
    func controlChange(_ controller: UInt8, at position: Double) -> ChannelMessage {
        let wide = 0x8000_0000 + UInt32((position - 64) / 63 * Double(0x7FFF_FFFF))
        return ChannelMessage(midi2: 0xB0, data1: controller, data2: UInt8(wide >> 25), wide: wide)
    }

    /// Two velocities with the same top 7 bits (0x8000 and 0x81FF: both 64 in MIDI 1.0) play at two levels; with
    /// full sensitivity the gain is the square of velocity/127, so 0x81FF (64.98 on the 0…127 scale) is +0.26 dB.
    /// MIDI 1.0's velocity 64 and MIDI 2.0's 64 << 9 play the same samples; 100 and 100 << 9 (99.44 on the scale:
    /// the centre-preserving mapping, `MIDI2Scale`) play within 0.1 dB: −0.098 dB, 40·log10(99.44/100).
    @Test func sixteenBitVelocityPlaysBetweenSevenBitSteps() throws {
        let steady = 4_000..<20_000
        let low = try render([noteOn(69, velocity16: 0x8000)], sensitivity: 1).left
        let high = try render([noteOn(69, velocity16: 0x81FF)], sensitivity: 1).left
        let step = level(high[steady]) - level(low[steady])
        let expected = 40 * log10(MIDI2Scale.velocity(0x81FF) / 64)
        print("velocity 0x8000 → 0x81FF: \(step) dB (expected \(expected))")
        #expect(abs(step - expected) < 0.005)
        #expect(step > 0.2)

        let midi1At64 = try render([.noteOn(channel: 0, note: 69, velocity: 64)], sensitivity: 1).left
        #expect(midi1At64 == low)
        let midi1At100 = try render([.noteOn(channel: 0, note: 69, velocity: 100)], sensitivity: 1).left
        let midi2At100 = try render([noteOn(69, velocity16: 100 << 9)], sensitivity: 1).left
        let difference = level(midi2At100[steady]) - level(midi1At100[steady])
        print("velocity 100 << 9 against MIDI 1.0's 100: \(difference) dB")
        #expect(abs(difference) < 0.1)
        #expect(abs(difference - 40 * log10(MIDI2Scale.velocity(100 << 9) / 100)) < 0.005)
    }

    /// A 32-bit volume (CC 7) or expression (CC 11) between two of MIDI 1.0's steps (100.5, between 100 and 101)
    /// plays at a level between theirs: the square law puts it 40·log10(100.5/100) = 0.087 dB above 100's.
    @Test func thirtyTwoBitVolumeAndExpressionPlayBetweenSevenBitSteps() throws {
        let steady = 4_000..<20_000
        let note = ChannelMessage.noteOn(channel: 0, note: 69, velocity: 100)
        for controller: UInt8 in [7, 11] {
            let at100 = level(
                try render([.controlChange(channel: 0, controller: controller, value: 100), note]).left[steady])
            let at101 = level(
                try render([.controlChange(channel: 0, controller: controller, value: 101), note]).left[steady])
            let between = level(try render([controlChange(controller, at: 100.5), note]).left[steady])
            print("CC \(controller): 100 → \(at100) dB, 100.5 → \(between) dB, 101 → \(at101) dB")
            #expect(between > at100 && between < at101)
            #expect(abs(between - at100 - 40 * log10(100.5 / 100)) < 0.005)
        }
    }

    /// A 32-bit pitch bend between two of MIDI 1.0's 14-bit steps (1000.5 steps up, at ±48 semitones: 586.23 cents)
    /// bends by that, not by the 14-bit 1000 steps' 585.94 cents.
    @Test func thirtyTwoBitPitchBendPlaysBetweenFourteenBitSteps() throws {
        let range: [ChannelMessage] = [
            .controlChange(channel: 0, controller: 101, value: 0),
            .controlChange(channel: 0, controller: 100, value: 0),
            .controlChange(channel: 0, controller: 6, value: 48), .controlChange(channel: 0, controller: 38, value: 0),
        ]
        let wide = UInt32(0x8000_0000 + 1000.5 * 262_144)
        let bend = ChannelMessage(midi2: 0xE0, data1: UInt8(wide >> 18 & 0x7F), data2: UInt8(wide >> 25), wide: wide)
        let left = try render(range + [bend, .noteOn(channel: 0, note: 57, velocity: 100)]).left
        let expected = 220 * pow(2, 1000.5 * 48 / 8192 / 12)
        let measured = peak(left[4_000..<20_000], in: (expected - 3)...(expected + 3))
        print("bend 1000.5 steps of ±48: \(cents(measured, 220)) cents (expected \(cents(expected, 220)))")
        #expect(abs(cents(measured, expected)) < 0.1)
    }

    /// Two notes held on one channel (not an MPE zone); a per-note pitch bend of +1 semitone (0xC000_0000 over the
    /// channel's ±2) on A4 moves it to 466.16 Hz, and E5 stays at 659.26 Hz.
    @Test func perNotePitchBendBendsOneNoteOfTwo() throws {
        let (left, _) = try render(
            [.noteOn(channel: 0, note: 69, velocity: 100), .noteOn(channel: 0, note: 76, velocity: 100)],
            later: [.perNotePitchBend(channel: 0, note: 69, value: 0xC000_0000)])
        let before = left[4_000..<20_000]
        let after = left[28_000..<44_000]
        let e5 = 440 * pow(2, 7 / 12.0)
        let bentA = peak(after, in: 455...480)
        print(
            "per-note bend: A4 \(peak(before, in: 430...450)) → \(bentA) Hz, "
                + "E5 \(peak(before, in: 650...670)) → \(peak(after, in: 650...670)) Hz")
        #expect(abs(cents(peak(before, in: 430...450), 440)) < 0.1)
        #expect(abs(cents(bentA, 440 * pow(2, 1 / 12.0))) < 0.1)
        #expect(amplitude(after, at: 440) < 0.001)
        #expect(abs(cents(peak(after, in: 650...670), e5)) < 0.1)
        #expect(abs(amplitude(after, at: e5) - amplitude(before, at: e5)) < 0.001)
    }

    /// A note alone on its channel gets its per-note bend and the MIDI 1.0 stand-in after it (a channel bend, for
    /// instruments without per-note expression); the synth plays the per-note one only: +1 semitone, not +2. (Both
    /// come while the note sounds: a per-note message acts on the notes sounding, as the decoder sends them.)
    @Test func standInForAPerNoteBendIsNotPlayedTwice() throws {
        let perNote = ChannelMessage.perNotePitchBend(channel: 0, note: 69, value: 0xC000_0000)
        let standIn = ChannelMessage(midi2: 0xE0, data1: 0, data2: 96, wide: 0xC000_0000).standingIn()
        let (left, _) = try render([.noteOn(channel: 0, note: 69, velocity: 100)], later: [perNote, standIn])
        let measured = peak(left[28_000..<44_000], in: 430...510)
        print("per-note bend with its stand-in: \(measured) Hz")
        #expect(abs(cents(measured, 440 * pow(2, 1 / 12.0))) < 0.1)
    }

    /// Registered per-note controllers on one of two notes: volume (#7) to 32 on the 0…127 scale turns A4 down by
    /// 40·log10(32/100) = −19.8 dB from the channel's 100; pan (#10) to 0 puts E5 hard left. The other note keeps
    /// its level and place.
    @Test func perNoteControllersActOnOneNote() throws {
        let (left, right) = try render(
            [.noteOn(channel: 0, note: 69, velocity: 100), .noteOn(channel: 0, note: 76, velocity: 100)],
            later: [
                .perNoteController(channel: 0, note: 69, controller: 7, value: 0x4000_0000),
                .perNoteController(channel: 0, note: 76, controller: 10, value: 0),
            ])
        let e5 = 440 * pow(2, 7 / 12.0)
        let (before, after) = (left[4_000..<20_000], left[28_000..<44_000])
        let (rightBefore, rightAfter) = (right[4_000..<20_000], right[28_000..<44_000])
        let aDrop = 20 * log10(amplitude(after, at: 440) / amplitude(before, at: 440))
        let aRight = 20 * log10(amplitude(rightAfter, at: 440) / amplitude(rightBefore, at: 440))
        print("per-note volume: A4 \(aDrop) dB (left), \(aRight) dB (right); E5 right \(amplitude(rightAfter, at: e5))")
        #expect(abs(aDrop - 40 * log10(32 / 100.0)) < 0.05)
        #expect(abs(aRight - aDrop) < 0.05)  // A4 stays in the centre
        #expect(amplitude(rightBefore, at: e5) > 0.05)
        #expect(amplitude(rightAfter, at: e5) < 0.001)  // E5 hard left
        // Hard left, constant power: E5's left gain goes from sin 45° to 1, +3 dB.
        #expect(abs(20 * log10(amplitude(after, at: e5) / amplitude(before, at: e5)) - 3.01) < 0.05)
    }
}

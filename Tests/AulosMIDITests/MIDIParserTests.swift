import AulosMIDI
import AulosTestSupport
import Testing

func parse(_ bytes: [UInt8], into parser: inout MIDIParser) -> [MIDIMessage] {
    var messages: [MIDIMessage] = []
    parser.parse(bytes) { messages.append($0) }
    return messages
}

func parse(_ bytes: [UInt8]) -> [MIDIMessage] {
    var parser = MIDIParser()
    return parse(bytes, into: &parser)
}

@Suite struct MIDIParserTests {
    @Test func channelMessagesOfEveryKind() {
        #expect(
            parse([0x91, 60, 100, 0x81, 60, 0, 0xA2, 61, 5, 0xB3, 7, 90, 0xC4, 19, 0xD5, 33, 0xE6, 0x00, 0x40]) == [
                .noteOn(channel: 1, note: 60, velocity: 100), .noteOff(channel: 1, note: 60, velocity: 0),
                .polyPressure(channel: 2, note: 61, pressure: 5), .controlChange(channel: 3, controller: 7, value: 90),
                .programChange(channel: 4, program: 19), .channelPressure(channel: 5, pressure: 33),
                .pitchBend(channel: 6, value: 8192),
            ])
    }

    @Test func runningStatus() {
        #expect(
            parse([0x90, 60, 100, 64, 90, 67, 0]) == [
                .noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 0, note: 64, velocity: 90),
                .noteOn(channel: 0, note: 67, velocity: 0),
            ])
        #expect(parse([0xC0, 1, 2, 3]).count == 3)
    }

    @Test func noteOnWithVelocityZeroIsANoteOff() {
        let message = parse([0x90, 60, 0])[0]
        #expect(message.normalized == .noteOff(channel: 0, note: 60, velocity: 64))
        #expect(
            MIDIMessage.noteOn(channel: 0, note: 60, velocity: 1).normalized
                == .noteOn(channel: 0, note: 60, velocity: 1))
    }

    @Test func realTimeBytesInsideAMessageDoNotDisturbIt() {
        #expect(
            parse([0x90, 0xF8, 60, 0xFE, 100, 0xFA]) == [
                .timingClock, .activeSensing, .noteOn(channel: 0, note: 60, velocity: 100), .start,
            ])
        // ...and not running status either.
        #expect(parse([0x90, 60, 100, 0xF8, 62, 100]).last == .noteOn(channel: 0, note: 62, velocity: 100))
    }

    @Test func sysExSpanningChunks() {
        var parser = MIDIParser()
        #expect(parse([0xF0, 0x7E, 0x7F], into: &parser).isEmpty)
        #expect(parse([0x09, 0xF8], into: &parser) == [.timingClock])
        #expect(
            parse([0x01, 0xF7, 0x90, 60, 1], into: &parser) == [
                .systemExclusive([0x7E, 0x7F, 0x09, 0x01]), .noteOn(channel: 0, note: 60, velocity: 1),
            ])
    }

    @Test func sysExCutShortIsDroppedAndCounted() {
        var parser = MIDIParser()
        let messages = parse([0xF0, 1, 2, 3, 0x90, 60, 100], into: &parser)
        #expect(messages == [.noteOn(channel: 0, note: 60, velocity: 100)])
        #expect(parser.truncatedSysEx == 1)
    }

    @Test func oversizedSysExIsDroppedAndCounted() {
        var parser = MIDIParser(maximumSysExLength: 4)
        #expect(parse([0xF0, 1, 2, 3, 4, 5, 6, 0xF7, 0xF0, 1, 0xF7], into: &parser) == [.systemExclusive([1])])
        #expect(parser.oversizedSysEx == 1)
    }

    @Test func garbageIsSkippedUntilTheNextStatus() {
        var parser = MIDIParser()
        // Stray data with no status, an undefined status, a message cut short by a new status, a lone F7.
        let messages = parse([0x12, 0x34, 0xF4, 0x05, 0x90, 60, 0xB0, 7, 100, 0xF7, 0xF9], into: &parser)
        #expect(messages == [.controlChange(channel: 0, controller: 7, value: 100)])
        #expect(parser.discardedBytes == 7)
    }

    @Test func systemCommonCancelsRunningStatus() {
        #expect(
            parse([0x90, 60, 100, 0xF2, 0x10, 0x01, 62, 100, 0xF1, 0x25, 0xF3, 3, 0xF6]) == [
                .noteOn(channel: 0, note: 60, velocity: 100), .songPosition(0x90), .timeCodeQuarterFrame(0x25),
                .songSelect(3),
                .tuneRequest,
            ])
    }

    @Test func everyChannelMessageRoundTripsThroughBytes() {
        var generator = SeededRandom(seed: 0xA0105)  // seeded: a failure replays exactly
        var messages: [MIDIMessage] = []
        for _ in 0..<2000 {
            let status = UInt8.random(in: 0x80...0xEF, using: &generator)
            messages.append(
                MIDIMessage(
                    status: status, data1: .random(in: 0...127, using: &generator),
                    data2: .random(in: 0...127, using: &generator))!)
        }
        messages += [.systemExclusive([1, 2, 3]), .songPosition(16383), .timingClock, .stop, .continue, .systemReset]
        #expect(parse(messages.flatMap(\.bytes)) == messages)
    }

    @Test func invalidChannelBytesAreRejected() {
        #expect(MIDIMessage(status: 0x90, data1: 128, data2: 0) == nil)
        #expect(MIDIMessage(status: 0x40, data1: 1, data2: 0) == nil)
        #expect(MIDIMessage(status: 0xF0, data1: 1, data2: 0) == nil)
    }
}

@Suite struct ParameterNumberTests {
    @Test func pitchBendRangeThroughRPN0() {
        var tracker = ParameterNumberTracker()
        let result1 = tracker.handle(controller: 6, value: 12)
        #expect(result1 == nil)  // nothing selected yet: null
        let result2 = tracker.handle(controller: 101, value: 0)
        #expect(result2 == nil)
        let result3 = tracker.handle(controller: 100, value: 0)
        #expect(result3 == nil)
        let result4 = tracker.handle(controller: 6, value: 12)
        #expect(result4 == .init(isRegistered: true, parameter: 0, value: 12 << 7))
        let result5 = tracker.handle(controller: 38, value: 50)
        #expect(result5 == .init(isRegistered: true, parameter: 0, value: 12 << 7 | 50))
        let incremented = tracker.handle(controller: 96, value: 0)
        let afterIncrement: UInt16 = 12 << 7 | 51  // typed: #expect infers a bare literal expression differently
        #expect(incremented?.value == afterIncrement)
        let decremented = tracker.handle(controller: 97, value: 0)
        let afterDecrement: UInt16 = 12 << 7 | 50
        #expect(decremented?.value == afterDecrement)
        _ = tracker.handle(controller: 101, value: 127)
        _ = tracker.handle(controller: 100, value: 127)
        let result6 = tracker.handle(controller: 6, value: 1)
        #expect(result6 == nil)
    }

    @Test func nrpnIsReportedAsNonRegistered() {
        var tracker = ParameterNumberTracker()
        _ = tracker.handle(controller: 99, value: 1)
        _ = tracker.handle(controller: 98, value: 8)
        let result7 = tracker.handle(controller: 6, value: 64)
        #expect(result7 == .init(isRegistered: false, parameter: 1 << 7 | 8, value: 64 << 7))
    }
}

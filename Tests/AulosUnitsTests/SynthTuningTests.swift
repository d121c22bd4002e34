import AulosCore
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The synth plays a Scala tuning: 12-EDO from a .scl is today's tuning within 0.1 cent, 19-EDO keys are
/// exact to 0.1 cent, a key the mapping leaves out is silent, and a new tuning reaches a playing synth at the next
/// slice without touching notes already sounding.
@Suite struct SynthTuningTests {
    static let twelve = "12-EDO\n12\n" + (1...11).map { "\($0)00.0\n" }.joined() + "2/1\n"
    static let nineteen = "19-EDO\n19\n" + (1...18).map { "\(Double($0) * 1200 / 19)\n" }.joined() + "2/1\n"

    static func note(_ key: UInt8, tuning: TuningTable, at seconds: Int = 1) throws -> [Float] {
        let rig = try InstrumentRig(OscillatorSynthUnit.componentDescription) { unit in
            try setSynth(unit, pureSine)
            try (unit as! OscillatorSynthUnit).setTuning(tuning)
        }
        rig.scheduler.schedule(.noteOn(channel: 0, note: key, velocity: 100), at: 0)
        return rig.render(48_000 * seconds, slice: 512).0
    }

    /// 12-EDO from a .scl is today's tuning; in 19-EDO each key is a 19th of an octave from A440.
    @Test(arguments: [(12, UInt8(69)), (12, 60), (12, 33), (12, 100), (19, 69), (19, 70), (19, 60), (19, 88)])
    func equalTemperamentsFromScaleFilesAreExact(_ divisions: Int, _ key: UInt8) throws {
        let table = try TuningTable(scale: ScalaScale(text: divisions == 12 ? Self.twelve : Self.nineteen))
        let left = try Self.note(key, tuning: table)
        let expected = 440 * pow(2, (Double(key) - 69) / Double(divisions))
        #expect(abs(cents(measuredFrequency(left[4800...], sampleRate: 48_000), expected)) < 0.1)
    }

    @Test func aKeyTheMappingLeavesOutIsSilent() throws {
        let mapping = try KeyboardMapping(text: "2\n0\n127\n60\n60\n261.6256\n0\n0\nx\n")
        let table = try TuningTable(scale: ScalaScale(text: Self.twelve), mapping: mapping)
        #expect(try Self.note(61, tuning: table).allSatisfy { $0 == 0 })
        #expect(try Self.note(62, tuning: table).contains { $0 != 0 })
    }

    /// A playing synth retuned: a note struck after the change plays the new tuning.
    @Test func aNewTuningReachesAPlayingSynth() throws {
        let rig = try InstrumentRig(OscillatorSynthUnit.componentDescription) { try setSynth($0, pureSine) }
        let synth = rig.instrument as! OscillatorSynthUnit
        rig.scheduler.schedule(.noteOn(channel: 0, note: 70, velocity: 100), at: 0)
        _ = rig.render(4800, slice: 512)
        try synth.setTuning(try TuningTable(scale: ScalaScale(text: Self.nineteen)))
        rig.scheduler.schedule(.noteOff(channel: 0, note: 70, velocity: 0), at: 4800)
        rig.scheduler.schedule(.noteOn(channel: 0, note: 70, velocity: 100), at: 9600)
        let (left, _) = rig.render(96_000, slice: 512)
        let expected = 440 * pow(2, 1.0 / 19)
        #expect(abs(cents(measuredFrequency(left[14_400...], sampleRate: 48_000), expected)) < 0.1)
    }

    /// A MIDI Tuning Standard single-note change (real-time, key 69 to 69 and 8,192/16,384 semitones) as
    /// the router delivers it, before a note at the same frame: the note sounds a quarter tone above A440,
    /// within 0.1 cent; other keys keep their pitch.
    @Test func aTuningStandardKeyChangeRetunesOneKey() throws {
        let rig = try InstrumentRig(OscillatorSynthUnit.componentDescription) { try setSynth($0, pureSine) }
        let changes = try #require(
            MIDITuningMessage.keyChanges([0x7F, 0x7F, 0x08, 0x02, 0x00, 0x01, 69, 69, 0x40, 0x00]))
        #expect(changes == [.init(key: 69, semitone: 69, fraction: 8192)])
        for message in changes.flatMap(MIDITuningMessage.events) {
            rig.scheduler.schedule(TimedMIDIEvent(sampleTime: 0, destination: 0, message: message))
        }
        rig.scheduler.schedule(.noteOn(channel: 0, note: 69, velocity: 100), at: 0)
        rig.scheduler.schedule(.noteOn(channel: 1, note: 57, velocity: 100), at: 48_000)
        rig.scheduler.schedule(.noteOff(channel: 0, note: 69, velocity: 0), at: 48_000)
        let (left, _) = rig.render(96_000, slice: 512)
        #expect(abs(cents(measuredFrequency(left[4800..<47_000], sampleRate: 48_000), 440 * pow(2, 0.5 / 12))) < 0.1)
        #expect(abs(cents(measuredFrequency(left[60_000...], sampleRate: 48_000), 220)) < 0.1)
    }

    /// Retuning while playing allocates nothing on the render thread: 10,000 slices with notes and a new
    /// tuning every 500.
    @Test func retuningWhilePlayingAllocatesNothing() throws {
        let rig = try InstrumentRig(OscillatorSynthUnit.componentDescription)
        let synth = rig.instrument as! OscillatorSynthUnit
        let tables = [try TuningTable(scale: ScalaScale(text: Self.nineteen)), TuningTable.equal]
        for step in 0..<20_000 / 16 {
            rig.scheduler.schedule(
                .noteOn(channel: 0, note: UInt8(48 + step % 24), velocity: 100), at: Int64(step * 1024))
            rig.scheduler.schedule(
                .noteOff(channel: 0, note: UInt8(48 + step % 24), velocity: 0), at: Int64(step * 1024 + 900))
        }
        for _ in 0..<200 { rig.harness.renderSlice(64) }
        for block in 0..<20 {
            try synth.setTuning(tables[block % 2])
            rig.renderCounting(slices: 500)
        }
        try expectNoAllocations(rig.harness.allocations)
    }
}

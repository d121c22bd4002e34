import AulosSFZ
import AulosTestSupport
import Foundation
import Testing

/// A selector over a library written inline, with a buffer, answering with the regions (by index) an event
/// starts.
///
/// Threads: the test's.
final class SelectorProbe {
    var selector: SFZSelector
    let buffer = UnsafeMutableBufferPointer<SFZStart>.allocate(capacity: 16)
    var frame: Int64 = 0

    init(_ text: String, seed: UInt64 = 1, sampleRate: Double = 48_000) throws {
        selector = SFZSelector(library: try library(text), sampleRate: sampleRate, seed: seed)
    }

    init(library: SFZLibrary, selector: consuming SFZSelector) throws {
        self.selector = selector
    }

    deinit { buffer.deallocate() }

    @discardableResult
    func on(_ key: Int, _ velocity: Int = 100, channel: Int = 0) -> [Int] {
        let count = selector.noteOn(channel: channel, key: key, velocity: velocity, frame: frame, into: buffer)
        return buffer.prefix(count).map { Int($0.region) }
    }

    @discardableResult
    func off(_ key: Int, channel: Int = 0) -> [SFZStart] {
        let count = selector.noteOff(channel: channel, key: key, frame: frame, into: buffer)
        return Array(buffer.prefix(count))
    }

    @discardableResult
    func cc(_ controller: Int, _ value: Int, channel: Int = 0) -> [SFZStart] {
        let count = selector.controlChange(
            channel: channel, controller: controller, value: value, frame: frame, into: buffer)
        return Array(buffer.prefix(count))
    }

    /// Plays a key and lets it go, returning the attack regions.
    func tap(_ key: Int, _ velocity: Int = 100) -> [Int] {
        let regions = on(key, velocity)
        off(key)
        return regions
    }
}

@Suite struct MappingTests {
    @Test func velocityLayersSwitchExactlyAtTheirBoundary() throws {
        let probe = try SelectorProbe(
            "<region> sample=p.wav hivel=64\n<region> sample=f.wav lovel=65\n<region> sample=x.wav lokey=61")
        #expect(probe.tap(60, 1) == [0])
        #expect(probe.tap(60, 64) == [0])
        #expect(probe.tap(60, 65) == [1])
        #expect(probe.tap(60, 127) == [1])
        #expect(probe.tap(61, 64) == [0, 2])
        #expect(probe.tap(59, 100) == [1])
        // Velocity 0 is a note-off: nothing starts.
        probe.on(60, 100)
        #expect(probe.on(60, 0).isEmpty)
    }

    @Test func keysChannelsBendAndProgramRanges() throws {
        let probe = try SelectorProbe(
            """
            <region> sample=a.wav lokey=c4 hikey=e4 lochan=2 hichan=3
            <region> sample=b.wav key=61 lobend=1000
            <region> sample=c.wav key=62 loprog=5 hiprog=6
            <region> sample=d.wav hikey=-1
            """)
        #expect(probe.on(60, channel: 0).isEmpty && probe.on(60, channel: 1) == [0] && probe.on(64, channel: 2) == [0])
        #expect(probe.on(65, channel: 1).isEmpty)
        #expect(probe.on(61, channel: 3).isEmpty)
        probe.selector.pitchBend(channel: 3, value: 1000)
        #expect(probe.on(61, channel: 3) == [1])
        #expect(probe.on(62, channel: 4).isEmpty)
        probe.selector.programChange(channel: 4, program: 6)
        #expect(probe.on(62, channel: 4) == [2])
    }

    @Test func controllerRangesChooseRegions() throws {
        let probe = try SelectorProbe(
            "<control> set_cc1=100\n<region> sample=a.wav locc1=0 hicc1=63\n<region> sample=b.wav locc1=64 hicc1=127")
        #expect(probe.tap(60) == [1])
        probe.cc(1, 63)
        #expect(probe.tap(60) == [0])
        probe.cc(1, 64)
        #expect(probe.tap(60) == [1])
        let values = (probe.selector.controller(channel: 0, 1), probe.selector.controller(channel: 1, 1))
        #expect(values == (64, 100))
    }

    @Test func keyswitchesChooseArticulationsAndDoNotSoundThemselves() throws {
        let probe = try SelectorProbe(
            """
            <global> sw_lokey=c1 sw_hikey=d1 sw_default=c1
            <region> sample=sus.wav lokey=c3 hikey=c5 sw_last=c1
            <region> sample=stac.wav lokey=c3 hikey=c5 sw_last=d1
            <region> sample=fx.wav lokey=c3 hikey=c5 sw_down=b0
            <region> sample=soft.wav lokey=c3 hikey=c5 sw_up=a#0
            <region> sample=after.wav lokey=c6 hikey=c6 sw_previous=c5
            """)
        var last = probe.selector.lastKeyswitch
        #expect(last == 24)
        #expect(probe.tap(60) == [0, 3])
        #expect(probe.tap(26).isEmpty)
        last = probe.selector.lastKeyswitch
        #expect(last == 26)
        #expect(probe.tap(60) == [1, 3])
        #expect(probe.tap(25).isEmpty)
        last = probe.selector.lastKeyswitch
        #expect(last == 25)
        #expect(probe.tap(60) == [3])
        probe.on(23)
        probe.on(22)
        #expect(probe.tap(60) == [2])
        probe.off(23)
        probe.off(22)
        #expect(probe.tap(72).count == 1 && probe.tap(84) == [4])
        #expect(probe.tap(84).isEmpty)
    }

    @Test func roundRobinCyclesAndRandomRepeatsWithTheSeed() throws {
        let text = """
            <group> lokey=60 hikey=60 seq_length=3
            <region> sample=a.wav seq_position=1
            <region> sample=b.wav seq_position=2
            <region> sample=c.wav seq_position=3
            <group> lokey=61 hikey=61
            <region> sample=r1.wav hirand=0.25
            <region> sample=r2.wav lorand=0.25 hirand=0.5
            <region> sample=r3.wav lorand=0.5 hirand=0.75
            <region> sample=r4.wav lorand=0.75
            """
        let probe = try SelectorProbe(text, seed: 42)
        #expect((0..<7).map { _ in probe.tap(60) } == [[0], [1], [2], [0], [1], [2], [0]])
        // Another velocity layer or key does not advance this round robin.
        _ = probe.tap(61)
        #expect(probe.tap(60) == [1])
        let first = (0..<200).map { _ in probe.tap(61) }
        #expect(first.allSatisfy { $0.count == 1 })
        let counts = Dictionary(grouping: first.map { $0[0] }, by: { $0 }).mapValues(\.count)
        #expect(counts.keys.sorted() == [3, 4, 5, 6] && counts.values.allSatisfy { $0 > 25 }, "\(counts)")
        // The same seed repeats the same choices; reset goes back to the start.
        let again = try SelectorProbe(text, seed: 42)
        _ = (0..<7).map { _ in again.tap(60) }
        _ = again.tap(61)
        _ = again.tap(60)
        #expect((0..<200).map { _ in again.tap(61) } == first)
        again.selector.reset()
        let probeReset = try SelectorProbe(text, seed: 42)
        #expect((0..<50).map { _ in again.tap(61) } == (0..<50).map { _ in probeReset.tap(61) })
        let other = try SelectorProbe(text, seed: 43)
        #expect((0..<50).map { _ in other.tap(61) } != Array(first.prefix(50)))
    }

    @Test func releaseTriggersFireWithRtDecayAndWaitForThePedal() throws {
        let probe = try SelectorProbe(
            """
            <region> sample=a.wav key=60
            <region> sample=rel.wav key=60 trigger=release rt_decay=6 lovel=50
            <region> sample=key.wav key=60 trigger=release_key
            <region> sample=free.wav key=60 trigger=release sustain_sw=off
            """)
        #expect(probe.on(60, 100) == [0])
        probe.frame = 48_000
        let released = probe.off(60)
        #expect(released.map(\.region) == [1, 2, 3] && released.allSatisfy(\.isRelease))
        #expect(abs(released[0].gain - powf(10, -6.0 / 20)) < 1e-5 && released[1].gain == 1)
        #expect(released[0].velocity == 100)
        // Played softer than the release region's lovel: the note-on velocity decides.
        probe.on(60, 40)
        #expect(probe.off(60).map(\.region) == [2, 3])
        // Held by the sustain pedal: release_key and sustain_sw=off at once, the release when the pedal lifts.
        probe.frame = 0
        probe.on(60, 100)
        probe.cc(64, 127)
        probe.frame = 24_000
        #expect(probe.off(60).map(\.region) == [2, 3])
        probe.frame = 96_000
        let lifted = probe.cc(64, 0)
        #expect(lifted.map(\.region) == [1])
        #expect(abs(lifted[0].gain - powf(10, -6.0 * 2 / 20)) < 1e-5)
        #expect(probe.cc(64, 0).isEmpty)
        // Struck again before the pedal lifts: the waiting release is dropped, the new note's comes later.
        probe.cc(64, 127)
        probe.on(60)
        probe.off(60)
        probe.on(60)
        #expect(probe.cc(64, 0).isEmpty)
        #expect(probe.off(60).map(\.region) == [1, 2, 3])
        // Sostenuto holds the keys down when it went down (sustain_sw=off leaves sostenuto_sw on), only those.
        probe.on(60)
        probe.cc(66, 127)
        probe.on(62)
        #expect(probe.off(60).map(\.region) == [2])
        #expect(probe.cc(66, 0).map(\.region) == [1, 3])
    }

    @Test func firstAndLegatoDependOnOtherHeldNotes() throws {
        let probe = try SelectorProbe(
            "<region> sample=f.wav trigger=first\n<region> sample=l.wav trigger=legato\n<region> sample=a.wav")
        #expect(probe.on(60) == [0, 2])
        #expect(probe.on(62) == [1, 2])
        // Another channel's notes are not this channel's.
        #expect(probe.on(64, channel: 1) == [0, 2])
        probe.off(60)
        #expect(probe.on(65) == [1, 2])
        probe.off(62)
        probe.off(65)
        #expect(probe.on(67) == [0, 2])
    }

    @Test func offByChokesAndPolyphonyDecisions() throws {
        let probe = try SelectorProbe(
            """
            <region> sample=open.wav key=46 group=1 off_by=2 polyphony=2
            <region> sample=closed.wav key=42 group=2 note_polyphony=1
            <region> sample=mono.wav key=50 group=3 off_by=3
            <region> sample=plain.wav key=52
            """)
        let chokes = [(1, 0), (0, 1), (2, 2), (3, 3), (3, 0)].map {
            probe.selector.chokes(started: Int32($0.0), playing: Int32($0.1))
        }
        #expect(chokes == [true, false, true, false, false])
        let decisions = [(0, 1, 1), (0, 2, 0), (1, 5, 1), (3, 500, 50)].map {
            probe.selector.polyphonyDecision(region: Int32($0.0), voicesInGroup: $0.1, voicesOnKey: $0.2)
        }
        #expect(decisions == [.play, .stealOldestInGroup, .stealOldestOnKey, .play])
        let group = probe.selector.group(of: 1)
        #expect(group == 2)
    }

    @Test func startsBeyondTheBufferAreCountedNotWritten() throws {
        let probe = try SelectorProbe(String(repeating: "<region> sample=a.wav\n", count: 20))
        #expect(probe.on(60).count == 16)
        let dropped = probe.selector.droppedStarts
        #expect(dropped == 4)
    }

    @Test func selectingAllocatesNothing() throws {
        let lib = try library(
            """
            <control> set_cc1=20
            <group> seq_length=2 lokey=40 hikey=80
            <region> sample=a.wav seq_position=1 hivel=64 locc1=0 hicc1=63
            <region> sample=b.wav seq_position=2 lovel=65 hirand=0.5 sw_last=c1
            <region> sample=c.wav trigger=release rt_decay=3
            <region> sample=d.wav trigger=legato off_by=4 group=5
            <region> sample=e.wav sw_lokey=c1 sw_hikey=d1 sw_last=d1 sw_default=c1
            """)
        // Owned as the render kernel will own it: a value in the caller's storage, with a buffer of its own.
        var selector = SFZSelector(library: lib, sampleRate: 48_000, seed: 9)
        let buffer = UnsafeMutableBufferPointer<SFZStart>.allocate(capacity: 8)
        defer { buffer.deallocate() }
        var random = SeededRandom(seed: 7)
        // Plain integer arrays: iterating tuples would instantiate generic metadata (an allocation) on first use.
        let kinds = (0..<5_000).map { _ in Int.random(in: 0...3, using: &random) }
        let keys = (0..<5_000).map { _ in Int.random(in: 20...90, using: &random) }
        let values = (0..<5_000).map { _ in Int.random(in: 0...127, using: &random) }
        var tally = AllocationTally()
        var started = 0
        var frame: Int64 = 0
        tally.count {
            for index in 0..<kinds.count {
                let (key, value) = (keys[index], values[index])
                frame += 64
                switch kinds[index] {
                case 0: started += selector.noteOn(channel: 0, key: key, velocity: value, frame: frame, into: buffer)
                case 1: started += selector.noteOff(channel: 0, key: key, frame: frame, into: buffer)
                case 2:
                    let controller = key % 2 == 0 ? 64 : 1
                    started += selector.controlChange(
                        channel: 0, controller: controller, value: value, frame: frame, into: buffer)
                default: selector.pitchBend(channel: 0, value: value * 64 - 4096)
                }
            }
            selector.reset()
        }
        #expect(started > 500)
        try expectNoAllocations(tally, "selecting regions", orFrees: true)
    }
}

import AulosCore
import AulosMIDI
import AulosTestSupport
import Testing

/// A file's events as a timeline the render thread reads by sample time: each event reaches its instrument
/// at its exact frame whatever the slicing, a timeline published mid-play starts at the first slice that
/// sees it, a replaced timeline is freed once the render thread lets go, and reading allocates nothing.
@Suite struct MIDITimelineTests {
    static func notes(_ times: [Int64]) -> [TimedMIDIEvent] {
        times.enumerated().map { index, time in
            TimedMIDIEvent(sampleTime: time, message: .noteOn(channel: 0, note: UInt8(10 + index % 100), velocity: 100))
        }
    }

    /// Events land on their exact frames, in order, for every slice size; the same output bit for bit.
    @Test(arguments: [1, 17, 64, 256, 1000])
    func eventsLandOnTheirFramesWhateverTheSlice(slice: Int) throws {
        let times: [Int64] = [0, 5, 63, 64, 999, 1000, 1001, 4095, 4096]
        let rig = try ScheduledProbe(maximumFrames: 4096)
        rig.player.play(MIDITimeline(Self.notes(times)))
        let out = rig.render(5000, slice: slice)
        for (index, time) in times.enumerated() {
            #expect(out[Int(time)] == Float(10 + index), "frame \(time), slice \(slice)")
        }
        #expect(out.indices.filter { out[$0] != 0 }.map(Int64.init) == times)
        #expect(rig.probe.queue.droppedCount == 0)
    }

    /// Events given out of order are played in time order; events at one time keep the order they were given.
    @Test func aTimelineSortsByTimeAndKeepsTheOrderOfTies() {
        let timeline = MIDITimeline([
            TimedMIDIEvent(sampleTime: 30, message: .noteOn(channel: 0, note: 1, velocity: 1)),
            TimedMIDIEvent(sampleTime: 10, message: .noteOn(channel: 0, note: 2, velocity: 1)),
            TimedMIDIEvent(sampleTime: 30, message: .noteOn(channel: 0, note: 3, velocity: 1)),
            TimedMIDIEvent(sampleTime: 10, message: .noteOn(channel: 0, note: 4, velocity: 1)),
        ])
        #expect(timeline.events.map(\.data1) == [2, 4, 1, 3])
        #expect(timeline.count == 4 && timeline.lastSampleTime == 30)
        #expect(MIDITimeline([]).lastSampleTime == 0)
    }

    /// Published while the graph runs, a timeline plays from the slice that first sees it: earlier events
    /// are skipped, not burst out late; the one it replaced is freed once the render thread let go.
    @Test func aTimelinePublishedMidPlayStartsWhereThePlayIs() throws {
        let rig = try ScheduledProbe(maximumFrames: 4096)
        weak var first: MIDITimeline?
        do {
            let timeline = MIDITimeline(Self.notes([100, 900]))
            first = timeline
            rig.player.play(timeline)
        }
        _ = rig.render(512, slice: 256)
        rig.player.play(MIDITimeline(Self.notes([50, 600, 1500])))
        #expect(first == nil, "the replaced timeline is freed: the render thread is not reading it")
        let out = rig.render(1536, slice: 256)  // frames 512…2047
        #expect(out.indices.filter { out[$0] != 0 }.map { $0 + 512 } == [600, 1500])
        rig.player.play(nil)
        #expect(rig.player.timeline == nil)
        #expect(rig.render(256, slice: 256).allSatisfy { $0 == 0 })
    }

    /// Reading a dense timeline (an event every 8 frames) on the render thread allocates nothing.
    @Test func readingATimelineAllocatesNothing() throws {
        let rig = try ScheduledProbe(maximumFrames: 64)
        rig.player.play(MIDITimeline(Self.notes((0..<80_000).map { Int64($0 * 8) })))
        for _ in 0..<10_000 { rig.harness.renderSlice(64, counting: true) }
        #expect(rig.probe.queue.droppedCount == 0)
        try expectNoAllocations(rig.harness.allocations)
    }
}

import AulosCore
import AulosGraph
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

/// A test instrument (`aumu/evpr/Test`): writes each note-on's note number at the exact frame it is
/// applied, and −1 for each note-off, so the tests can see where every event landed.
final class EventProbeUnit: AudioUnit, @unchecked Sendable {
    static let componentDescription = ComponentDescription(type: .musicDevice, subtype: "evpr", manufacturer: "Test")
    let queue = MIDIEventQueue(capacity: 256)

    init() {
        super.init(
            description: Self.componentDescription, name: "Test: Event Probe", inputs: 0, outputs: 1,
            format: .canonical(channels: 1, sampleRate: 48_000))
    }

    override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        UnitKernel.make(EventProbeKernel(events: queue.list), render: EventProbeKernel.render)
    }
}

struct EventProbeKernel {
    let events: MIDIEventList

    static let render: KernelRenderFunction = { state, _, _, _, _, frames, io in
        state.assumingMemoryBound(to: EventProbeKernel.self).pointee.render(Int(frames), io.pointee.floatChannel(0))
    }

    @_noAllocation @_noLocks
    func render(_ frameCount: Int, _ out: UnsafeMutablePointer<Float>) -> AulosStatus {
        events.beginSlice(frameCount: frameCount)
        out.update(repeating: 0, count: frameCount)
        var frame = 0
        while frame < frameCount {
            while let event = events.popDue(at: frame) {
                out[frame] += event.status & 0xF0 == 0x90 && event.data2 > 0 ? Float(event.data1) : -1
            }
            frame = events.nextOffset(after: frame, frameCount: frameCount)
        }
        events.endSlice(frameCount: frameCount)
        return 0
    }
}

/// Generic Output ← event probe, with a scheduler and a timeline player installed as the graph's render
/// notifications.
final class ScheduledProbe {
    let graph: AudioGraph
    let probe: EventProbeUnit
    let scheduler: MIDIScheduler
    let player: MIDITimelinePlayer
    let harness: RenderHarness

    init(maximumFrames: UInt32) throws {
        let registry = BuiltInUnits.registry()
        registry.register(
            Component(EventProbeUnit.componentDescription, name: "Test: Event Probe") { EventProbeUnit() })
        graph = AudioGraph(registry: registry)
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let node = try graph.addNode(EventProbeUnit.componentDescription)
        graph.open()
        probe = try graph.unit(for: node) as! EventProbeUnit
        for id in [output, node] { try graph.unit(for: id).set(.maximumFramesPerSlice, maximumFrames) }
        try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
        scheduler = MIDIScheduler(destinations: [probe.queue])
        player = MIDITimelinePlayer(destinations: [probe.queue])
        try graph.addRenderNotify(scheduler.renderNotify)
        try graph.addRenderNotify(player.renderNotify)
        try graph.initialize()
        try graph.start()
        harness = RenderHarness(
            graph.renderEntry!, format: .canonical(channels: 1, sampleRate: 48_000), maximumFrames: maximumFrames)
    }

    /// Renders `total` frames in slices of `slice`, returning the probe's output.
    func render(_ total: Int, slice: Int) -> [Float] { harness.render(total, slice: slice)[0] }
}

@Suite struct SchedulingTests {
    @Test func sameOffsetEventsFollowTheDocumentedOrder() {
        let queue = MIDIEventQueue(capacity: 16)
        let list = queue.list
        let arrivals: [(UInt8, UInt8, UInt8)] = [
            (0x90, 60, 100), (0xB0, 7, 80), (0xC0, 5, 0), (0xB0, 0, 1), (0x80, 60, 0), (0xE0, 0, 64), (0xB0, 32, 2),
            (0x90, 62, 0),
        ]
        for (status, data1, data2) in arrivals {
            list.insert(MIDIEvent(offset: 10, status: status, data1: data1, data2: data2))
        }
        list.insert(MIDIEvent(offset: 3, status: 0x90, data1: 1, data2: 1))
        var order: [(UInt8, UInt8)] = []
        while let event = list.popDue(at: 10) { order.append((event.status, event.data1)) }
        #expect(order.map(\.0) == [0x90, 0x80, 0x90, 0xB0, 0xB0, 0xC0, 0xB0, 0xE0, 0x90])
        #expect(order.map(\.1) == [1, 60, 62, 0, 32, 5, 7, 0, 60])
    }

    @Test func eventsForLaterSlicesWaitAndOverflowIsCounted() {
        let queue = MIDIEventQueue(capacity: 4)
        queue.send(status: 0x90, data1: 60, data2: 100, offset: 150)
        queue.send(status: 0x90, data1: 61, data2: 100, offset: 20)
        let list = queue.list
        list.beginSlice(frameCount: 64)
        #expect(list.nextOffset(after: 0, frameCount: 64) == 20)
        #expect(list.popDue(at: 19) == nil)
        #expect(list.popDue(at: 20)?.data1 == 61)
        #expect(list.nextOffset(after: 20, frameCount: 64) == 64)
        list.endSlice(frameCount: 64)
        list.endSlice(frameCount: 64)
        #expect(list.popDue(at: 22)?.data1 == 60)
        for note in 0..<6 { list.insert(MIDIEvent(offset: 0, status: 0x90, data1: UInt8(note), data2: 1)) }
        #expect(list.pendingCount == 4)
        #expect(queue.droppedCount == 2)
    }

    /// A note scheduled at sample time t is applied at exactly frame t of the output, whatever the slices.
    @Test(arguments: [1, 7, 64, 412, 1024, 4096])
    func scheduledEventsLandOnTheirExactFrames(slice: Int) throws {
        let rig = try ScheduledProbe(maximumFrames: UInt32(max(slice, 64)))
        let times: [Int64] = [0, 1, 63, 64, 65, 411, 412, 1023, 1024, 1025, 4095, 4096, 5000]
        for (index, time) in times.enumerated() {
            rig.scheduler.schedule(.noteOn(channel: 0, note: UInt8(10 + index), velocity: 100), at: time)
        }
        rig.scheduler.schedule(.noteOff(channel: 0, note: 10, velocity: 0), at: 2000)
        let out = rig.render(6000, slice: slice)
        var expected = [Float](repeating: 0, count: 6000)
        for (index, time) in times.enumerated() { expected[Int(time)] = Float(10 + index) }
        expected[2000] = -1
        #expect(out == expected)
        #expect(rig.scheduler.lateCount == 0)
    }

    @Test func lateEventsPlayAtTheStartOfTheNextSliceAndAreCounted() throws {
        let rig = try ScheduledProbe(maximumFrames: 256)
        _ = rig.render(512, slice: 256)
        rig.scheduler.schedule(.noteOn(channel: 0, note: 70, velocity: 100), at: 100)
        let out = rig.render(256, slice: 256)
        #expect(out[0] == 70)
        #expect(rig.scheduler.lateCount == 1)
    }

    @Test func controlThreadEventsLandAtTheirOffsetInTheNextSlice() throws {
        let rig = try ScheduledProbe(maximumFrames: 256)
        rig.probe.queue.send(status: 0x90, data1: 77, data2: 1, offset: 33)
        let out = rig.render(256, slice: 256)
        #expect(out.firstIndex { $0 != 0 } == 33)
        #expect(out[33] == 77)
    }

    @Test func schedulingAllocatesNothingOnTheRenderThread() throws {
        let rig = try ScheduledProbe(maximumFrames: 64)
        for cycle in 0..<10_000 {
            if cycle % 4 == 0 {
                rig.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: Int64(cycle * 64 + 130))
                rig.scheduler.schedule(.noteOff(channel: 0, note: 60, velocity: 0), at: Int64(cycle * 64 + 200))
            }
            rig.harness.renderSlice(64, counting: true)
        }
        #expect(rig.scheduler.lateCount == 0)
        #expect(rig.probe.queue.droppedCount == 0)
        try expectNoAllocations(rig.harness.allocations)
    }
}

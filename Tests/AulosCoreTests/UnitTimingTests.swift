import AulosCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A test unit that pulls its input in place and then does `iterations` steps of arithmetic: a known amount
/// of work of its own on top of whatever it pulls.
private final class WorkUnit: AudioUnit, @unchecked Sendable {
    let iterations: Int

    init(_ name: String, iterations: Int) {
        self.iterations = iterations
        super.init(
            description: ComponentDescription(type: .effect, subtype: "work", manufacturer: "Test"),
            name: "Test: \(name)", inputs: 1, outputs: 1)
    }

    override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        UnitKernel.make(WorkKernel(iterations: iterations), render: WorkKernel.render)
    }
}

private struct WorkKernel {
    let iterations: Int

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frames, io in
        state.assumingMemoryBound(to: WorkKernel.self).pointee.render(inputs, flags, timeStamp, frames, io)
    }

    @_noAllocation @_noLocks
    func render(
        _ inputs: UnsafeRawPointer, _ flags: UnsafeMutablePointer<RenderActionFlags>,
        _ timeStamp: UnsafePointer<AudioTimeStamp>, _ frames: UInt32, _ io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let status = RenderInputs.pullInPlace(
            inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frames), into: io)
        if status != 0 && status != RenderStatus.noConnection { return status }
        var value: Float = 1
        for _ in 0..<iterations { value = value * 0.999_999 + 0.000_001 }
        // Used, so the loop is work done even when optimized.
        io.pointee.floatChannel(0)[0] += value > 2 ? 1 : 0
        return 0
    }
}

/// Per-unit CPU time as the render plan measures it (`RenderPlan.renderNode`): each unit's own time, without
/// the time of the units it pulls, and the render notifications in a bucket of their own. Compared by ratio
/// and ordering only: the machine may be loaded, and no absolute time is asserted.
@Suite struct UnitTimingTests {
    /// consumer ← busy ← source: the busy unit, upstream of the consumer, is charged its own work; the consumer
    /// (which waits for it inside its render) is not.
    @Test func aBusySourceIsChargedToItselfNotToItsConsumer() throws {
        #expect(UnitTiming.isEnabled, "the tests run with unit timing on (AULOS_NO_UNIT_TIMING unset)")
        let consumer = WorkUnit("consumer", iterations: 10)
        let busy = WorkUnit("busy", iterations: 20_000)
        let source = WorkUnit("source", iterations: 10)
        for unit in [consumer, busy, source] { try unit.initialize() }
        let notifyCell = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        notifyCell.initialize(to: Atomic(0))
        defer { notifyCell.deallocate() }
        // A notification that does work too (a meter, a recorder): its time is its own bucket's.
        let notifyWork: RenderCallback = { _, _, _, _, _, _ in
            var value = 1.0
            for _ in 0..<5_000 { value = value * 0.999_999 + 0.000_001 }
            return value > 2 ? 1 : 0
        }
        let storage = try RenderPlanStorage(
            nodes: [
                .init(unit: consumer, inputs: [.node(1, bus: 0)]),
                .init(unit: busy, inputs: [.node(2, bus: 0)]),
                .init(unit: source, inputs: [.silence]),
            ], head: 0, notifies: [RenderCallbackStruct(notifyWork)], notifyNanos: notifyCell)
        let buffers = AudioBufferListStorage(
            format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: consumer.maximumFramesPerSlice)
        let before = [consumer, busy, source].map(\.renderNanos)
        let started = monotonicNanos()
        for cycle in 0..<200 {
            buffers.list.pointee.setFrameCount(256, bytesPerFrame: 4)
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp()
            stamp.sampleTime = Int64(cycle) * 256
            let status = RenderPlan.renderCycle(
                storage.plan, flags: &flags, timeStamp: &stamp, bus: 0, frameCount: 256, ioData: buffers.list)
            #expect(status == 0)
        }
        let wall = monotonicNanos() - started
        let spent = zip([consumer, busy, source].map(\.renderNanos), before).map { Double($0 &- $1) }
        let notified = Double(notifyCell.pointee.load(ordering: .relaxed))
        let (consumerTime, busyTime, sourceTime) = (spent[0], spent[1], spent[2])
        #expect(busyTime > 0 && consumerTime > 0 && sourceTime > 0 && notified > 0, "\(spent), \(notified)")
        // 2,000 times the work of either neighbour: the large majority of the units' time, and many times
        // the consumer's, which would have it all if the time of its pull were charged to it.
        #expect(busyTime > 0.6 * (consumerTime + busyTime + sourceTime), "\(spent)")
        #expect(busyTime > 3 * consumerTime, "\(spent)")
        #expect(busyTime > 3 * sourceTime, "\(spent)")
        // The notification's work is its own, not the head unit's.
        #expect(notified > 3 * consumerTime, "notifications \(notified), units \(spent)")
        // Nothing is counted twice: the buckets together fit inside the time the cycles took, and make up most
        // of it (the rest is the loop around the render).
        let buckets = spent.reduce(0, +) + notified
        #expect(buckets <= Double(wall), "\(buckets) ns in buckets, \(wall) ns of cycles")
        #expect(buckets > 0.5 * Double(wall), "\(buckets) ns in buckets, \(wall) ns of cycles")
    }

    private func monotonicNanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the render thread saw, written only by it and read after join.
final class RenderReport: @unchecked Sendable {
    /// Read by the control thread while the render thread runs, so atomic.
    let cycles = Atomic<Int>(0)
    var failedCycles = 0
    var largestStep: Float = 0
}

@Suite(.serialized) struct RealtimeSafetyTests {
    /// Core Audio's live insertion while audio renders, hammered: a render thread pulls the graph as fast as it
    /// can while the control thread inserts and removes a node 300 times. Every cycle must succeed, the
    /// sine must stay continuous across every swap (the inserted converter is transparent), and the render
    /// thread must never touch the allocator.
    @Test func liveInsertAndRemoveWhileAnotherThreadRenders() throws {
        let (graph, output, tone) = try makeToneGraph(maximumFrames: 64)
        try graph.start()
        let format = try graph.unit(for: output).get(.streamFormat, scope: .input)

        let stop = Atomic<Bool>(false)
        let harness = RenderHarness(graph.renderEntry!, format: format, maximumFrames: 64)
        let report = RenderReport()
        let thread = TestThread {
            var previous: Float = 0
            while !stop.load(ordering: .relaxed) {
                if harness.renderSlice(64, counting: true) != 0 { report.failedCycles += 1 }
                let samples = harness.buffers.list.pointee.floatChannel(0)
                for index in 0..<64 {
                    let step = abs(samples[index] - previous)
                    if step > report.largestStep { report.largestStep = step }
                    previous = samples[index]
                }
                report.cycles.add(1, ordering: .relaxed)
            }
        }

        for _ in 0..<300 {
            try graph.disconnectNodeInput(output, destinationInput: 0)
            let inserted = try graph.addNode(FormatConverterUnit.componentDescription)
            let unit = try graph.unit(for: inserted)
            try unit.set(.maximumFramesPerSlice, 64)
            try unit.set(.streamFormat, format, scope: .input)
            try unit.set(.streamFormat, format, scope: .output)
            try unit.initialize()
            try graph.connectNodeInput(tone, sourceOutput: 0, inserted, destinationInput: 0)
            try graph.connectNodeInput(inserted, sourceOutput: 0, output, destinationInput: 0)
            try graph.update()

            try graph.disconnectNodeInput(output, destinationInput: 0)
            try graph.connectNodeInput(tone, sourceOutput: 0, output, destinationInput: 0)
            try graph.removeNode(inserted)
            try graph.update()
        }
        // Let the render thread run a little on the final plan, then stop it.
        let target = report.cycles.load(ordering: .relaxed) + 100
        #expect(Wait.until(seconds: 30, pollMicroseconds: 100) { report.cycles.load(ordering: .relaxed) >= target })
        stop.store(true, ordering: .relaxed)
        thread.join()

        #expect(report.cycles.load(ordering: .relaxed) > 600)
        #expect(report.failedCycles == 0)
        // 440 Hz at level 0.25: the steepest step of the sine itself is 0.25·2π·440/48000 ≈ 0.0144.
        #expect(report.largestStep < 0.0150)
        #expect(graph.retiredPlanCount == 0)
        try graph.stop()
        try graph.uninitialize()
        try expectNoAllocations(harness.allocations, "the render thread", orFrees: true)
    }

    /// 10,000 steady-state cycles of a graph that uses every render-path feature: a render callback, a
    /// parameterized generator with events arriving between cycles, two format conversions (Int16
    /// interleaved and back), fan-out, a three-input probe, render notifications, and a Generic Output
    /// converting to Int24 interleaved. The render thread must not allocate or free once.
    @Test func tenThousandCyclesWithoutAHeapAllocation() throws {
        let graph = AudioGraph(registry: testRegistry())
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let mix = try graph.addNode(ProbeUnit.componentDescription)
        let tone = try graph.addNode(ToneGeneratorUnit.componentDescription)
        let toInt16 = try graph.addNode(FormatConverterUnit.componentDescription)
        let toFloat = try graph.addNode(FormatConverterUnit.componentDescription)
        graph.open()
        let s16 = StreamFormat(sample: .int16, channels: 2, sampleRate: 48_000, interleaved: true)
        let s24 = StreamFormat(sample: .int24, channels: 2, sampleRate: 48_000, interleaved: true)
        for node in graph.nodeIDs { try graph.unit(for: node).set(.maximumFramesPerSlice, 256) }
        try graph.unit(for: mix).set(.elementCount, 3, scope: .input)
        try graph.unit(for: toInt16).set(.streamFormat, s16, scope: .output)
        try graph.unit(for: toFloat).set(.streamFormat, s16, scope: .input)
        try graph.unit(for: output).set(.streamFormat, s24, scope: .output)
        try graph.setNodeInputCallback(mix, destinationInput: 0, RenderCallbackStruct(rampCallback()))
        try graph.connectNodeInput(tone, sourceOutput: 0, toInt16, destinationInput: 0)
        try graph.connectNodeInput(toInt16, sourceOutput: 0, toFloat, destinationInput: 0)
        try graph.connectNodeInput(toFloat, sourceOutput: 0, mix, destinationInput: 1)
        try graph.connectNodeInput(tone, sourceOutput: 0, mix, destinationInput: 2)
        try graph.connectNodeInput(mix, sourceOutput: 0, output, destinationInput: 0)
        let notifyCount = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        notifyCount.initialize(to: 0)
        defer { notifyCount.deallocate() }
        try graph.addRenderNotify(
            RenderCallbackStruct(
                { refCon, _, _, _, _, _ in
                    refCon!.assumingMemoryBound(to: Int.self).pointee += 1
                    return 0
                }, refCon: notifyCount))
        try graph.initialize()
        try graph.start()
        let toneUnit = try graph.unit(for: tone)
        let harness = RenderHarness(graph.renderEntry!, format: s24, maximumFrames: 256)
        var failures = 0
        for cycle in 0..<10_000 {
            if cycle % 10 == 0 {
                // Control-side work between cycles (allowed to allocate, not counted).
                try toneUnit.setParameter(ToneGeneratorUnit.Parameter.frequency, value: Float(200 + cycle % 700))
                try toneUnit.scheduleParameters([
                    .ramp(
                        ToneGeneratorUnit.Parameter.level, scope: .global, element: 0, startOffset: UInt32(cycle % 200),
                        duration: 300, from: 0, to: 0.5)
                ])
            }
            if harness.renderSlice(256, counting: true) != 0 { failures += 1 }
        }
        #expect(failures == 0)
        #expect(notifyCount.pointee == 20_000)
        // The output is real audio, not silence: the cycles did work.
        let bytes = harness.buffers.list.pointee.buffers[0].data!.assumingMemoryBound(to: UInt8.self)
        #expect((0..<(256 * 6)).contains { bytes[$0] != 0 })
        // The cycles were timed, unit by unit and the notifications (per-part CPU, on unless
        // AULOS_NO_UNIT_TIMING is set): the timing allocates nothing either.
        #expect(UnitTiming.isEnabled)
        #expect(graph.units.allSatisfy { $0.renderNanos > 0 }, "every unit in the flow has its time")
        #expect(graph.notifyNanos > 0)
        try graph.stop()
        try graph.uninitialize()
        try expectNoAllocations(harness.allocations, orFrees: true)
    }
}

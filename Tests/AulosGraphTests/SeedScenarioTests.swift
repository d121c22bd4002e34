import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct SeedScenarioTests {
    typealias P = MultichannelMixerUnit.Parameter

    /// MixerHost: guitar (stereo) on bus 0, beats (mono) on bus 1, mixer output sample rate only, maximum
    /// frames 4096, two callbacks attached with setNodeInputCallback; enable, volume and pan changed while
    /// rendering take effect.
    @Test func mixerHost() throws {
        let graph = AudioGraph(registry: testRegistry())
        let io = try graph.addNode(GenericOutputUnit.componentDescription)
        let mixerNode = try graph.addNode(MultichannelMixerUnit.componentDescription)
        graph.open()
        let mixer = try graph.unit(for: mixerNode) as! MultichannelMixerUnit
        try mixer.set(.elementCount, 2, scope: .input)
        try mixer.set(.maximumFramesPerSlice, 4096)
        try graph.unit(for: io).set(.maximumFramesPerSlice, 4096)
        try mixer.set(.streamFormat, .canonical(channels: 2, sampleRate: 44_100), scope: .input, element: 0)
        try mixer.set(.streamFormat, .canonical(channels: 1, sampleRate: 44_100), scope: .input, element: 1)
        try mixer.set(.sampleRate, 44_100, scope: .output)
        let signals = UnsafeMutablePointer<Float>.allocate(capacity: 2)
        defer { signals.deallocate() }
        signals[0] = 0.25  // "guitar": a constant so levels are exact
        signals[1] = 0.5  // "beats"
        try graph.setNodeInputCallback(
            mixerNode, destinationInput: 0, RenderCallbackStruct(signalCallback(), refCon: signals))
        try graph.setNodeInputCallback(
            mixerNode, destinationInput: 1, RenderCallbackStruct(signalCallback(), refCon: signals + 1))
        try graph.connectNodeInput(mixerNode, sourceOutput: 0, io, destinationInput: 0)
        try graph.initialize()
        try graph.start()
        #expect(try graph.unit(for: io).get(.streamFormat, scope: .input).sampleRate == 44_100)
        let buffers = RenderBuffers(.canonical(channels: 2, sampleRate: 44_100))
        var time: Int64 = 0
        func settle() -> (Float, Float) {
            for _ in 0..<4 {
                #expect(renderCycle(graph, frames: 1024, at: time, into: buffers) == 0)
                time += 1024
            }
            return (buffers.channel(0, frames: 1024).last!, buffers.channel(1, frames: 1024).last!)
        }
        var (left, right) = settle()
        #expect(abs(left - (0.25 + 0.5 * 0.707_106_8)) < 1e-5 && abs(right - left) < 1e-5)
        try mixer.setParameter(P.enable, scope: .input, element: 1, value: 0)  // beats off
        (left, right) = settle()
        #expect(abs(left - 0.25) < 1e-5)
        try mixer.setParameter(P.enable, scope: .input, element: 1, value: 1)
        try mixer.setParameter(P.pan, scope: .input, element: 1, value: 1)  // beats hard right
        try mixer.setParameter(P.volume, scope: .input, element: 0, value: 0.5)  // guitar down
        (left, right) = settle()
        #expect(abs(left - 0.125) < 1e-5 && abs(right - (0.125 + 0.5)) < 1e-5)
        try graph.stop()
        try graph.uninitialize()
    }

    /// The seeds' live insertion, with the real iPod EQ: a render thread pulls continuously while the control
    /// thread inserts the EQ between the beats callback and mixer bus 1 (disconnect, add, configure from the
    /// mixer's bus format, initialize, connect, set callback, update) and removes it again, 100 times. Every
    /// cycle succeeds and the render thread never allocates.
    @Test func liveEQInsertionAndRemoval() throws {
        let graph = AudioGraph(registry: testRegistry())
        let io = try graph.addNode(GenericOutputUnit.componentDescription)
        let mixerNode = try graph.addNode(MultichannelMixerUnit.componentDescription)
        graph.open()
        for id in [io, mixerNode] { try graph.unit(for: id).set(.maximumFramesPerSlice, 256) }
        let mixer = try graph.unit(for: mixerNode)
        try mixer.set(.streamFormat, .canonical(channels: 1, sampleRate: 48_000), scope: .input, element: 1)
        let signals = UnsafeMutablePointer<Float>.allocate(capacity: 2)
        defer { signals.deallocate() }
        signals[0] = -220
        signals[1] = -330
        let guitar = RenderCallbackStruct(signalCallback(), refCon: signals)
        let beats = RenderCallbackStruct(signalCallback(), refCon: signals + 1)
        try graph.setNodeInputCallback(mixerNode, destinationInput: 0, guitar)
        try graph.setNodeInputCallback(mixerNode, destinationInput: 1, beats)
        try graph.connectNodeInput(mixerNode, sourceOutput: 0, io, destinationInput: 0)
        try graph.initialize()
        try graph.start()
        let stop = Atomic<Bool>(false)
        let failures = Atomic<Int>(0)
        let cycles = Atomic<Int>(0)
        let harness = RenderHarness(graph.renderEntry!, maximumFrames: 256)
        let thread = TestThread {
            while !stop.load(ordering: .relaxed) {
                if harness.renderSlice(256, counting: true) != 0 { failures.add(1, ordering: .relaxed) }
                cycles.add(1, ordering: .relaxed)
            }
        }
        for round in 0..<100 {
            try graph.disconnectNodeInput(mixerNode, destinationInput: 1)
            let eqNode = try graph.addNode(IPodEQUnit.componentDescription)
            let eq = try graph.unit(for: eqNode) as! IPodEQUnit
            let format = try mixer.get(.streamFormat, scope: .input, element: 1)
            try eq.set(.streamFormat, format, scope: .input)
            try eq.set(.streamFormat, format, scope: .output)
            try eq.set(.maximumFramesPerSlice, 256)
            try eq.selectPreset(String(round % 22))
            try eq.initialize()
            try graph.connectNodeInput(eqNode, sourceOutput: 0, mixerNode, destinationInput: 1)
            try graph.setNodeInputCallback(eqNode, destinationInput: 0, beats)
            try graph.update()
            try eq.selectPreset(String((round + 5) % 22))  // and change the curve while it plays
            try graph.disconnectNodeInput(mixerNode, destinationInput: 1)
            try graph.setNodeInputCallback(mixerNode, destinationInput: 1, beats)
            try graph.removeNode(eqNode)
            try graph.update()
            #expect(eq.state == .disposed)
        }
        let target = cycles.load(ordering: .relaxed) + 50
        #expect(Wait.until(seconds: 30, pollMicroseconds: 100) { cycles.load(ordering: .relaxed) >= target })
        stop.store(true, ordering: .relaxed)
        thread.join()
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(graph.retiredPlanCount == 0)
        try graph.stop()
        try graph.uninitialize()
        try expectNoAllocations(harness.allocations, "the render thread")
    }
}

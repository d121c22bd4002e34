import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

/// Renders one cycle through a graph's render entry (the real-time path).
@discardableResult
func renderCycle(
    _ graph: AudioGraph, frames: UInt32, at sampleTime: Int64, into buffers: RenderBuffers,
    flags: inout RenderActionFlags
) -> AulosStatus {
    var stamp = AudioTimeStamp(sampleTime: sampleTime)
    buffers.prepare(frames)
    return graph.renderEntry!.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list)
}

@discardableResult
func renderCycle(_ graph: AudioGraph, frames: UInt32, at sampleTime: Int64, into buffers: RenderBuffers) -> AulosStatus
{
    var flags = RenderActionFlags(rawValue: 0)
    return renderCycle(graph, frames: frames, at: sampleTime, into: buffers, flags: &flags)
}

@Suite struct GraphTests {
    let registry = testRegistry()

    @Test func nodesBeforeAndAfterOpen() throws {
        let graph = AudioGraph(registry: registry)
        let node = try graph.addNode(ComponentDescription(type: .output))
        let info = try graph.nodeInfo(node)
        #expect(info.description == GenericOutputUnit.componentDescription)
        #expect(info.unit == nil)
        expectError(.cannotDoInCurrentContext) { _ = try graph.unit(for: node) }
        graph.open()
        #expect(try graph.unit(for: node) is GenericOutputUnit)
        // Adding to an open graph instantiates at once, so the unit can be configured before an update.
        let late = try graph.addNode(FormatConverterUnit.componentDescription)
        #expect(try graph.nodeInfo(late).unit is FormatConverterUnit)
        expectError(.componentNotFound) { _ = try graph.addNode(ComponentDescription(type: "zzzz")) }
        expectError(.nodeNotFound) { _ = try graph.nodeInfo(NodeID(rawValue: 99)) }
        expectError(.nodeNotFound) {
            try graph.connectNodeInput(late, sourceOutput: 0, NodeID(rawValue: 99), destinationInput: 0)
        }
    }

    @Test func aGraphNeedsExactlyOneIOUnit() throws {
        let none = AudioGraph(registry: registry)
        _ = try none.addNode(ToneGeneratorUnit.componentDescription)
        none.open()
        expectError(.outputNodeError) { try none.initialize() }

        let two = AudioGraph(registry: registry)
        _ = try two.addNode(GenericOutputUnit.componentDescription)
        _ = try two.addNode(GenericOutputUnit.componentDescription)
        two.open()
        expectError(.outputNodeError) { try two.initialize() }
    }

    @Test func initializeNeedsAnOpenGraphAndStartNeedsInitialize() throws {
        let graph = AudioGraph(registry: registry)
        _ = try graph.addNode(GenericOutputUnit.componentDescription)
        expectError(.cannotDoInCurrentContext) { try graph.initialize() }
        graph.open()
        expectError(.cannotDoInCurrentContext) { try graph.start() }
        try graph.initialize()
        expectError(.initialized) { try graph.initialize() }
        try graph.start()
        #expect(graph.isRunning)
        expectError(.cannotDoInCurrentContext) { try graph.uninitialize() }
        expectError(.cannotDoInCurrentContext) { try graph.close() }
        try graph.stop()
        try graph.uninitialize()
        expectError(.uninitialized) { try graph.uninitialize() }
        try graph.close()
    }

    @Test func invalidWiringIsRefused() throws {
        let graph = AudioGraph(registry: registry)
        let tone = try graph.addNode(ToneGeneratorUnit.componentDescription)
        let a = try graph.addNode(FormatConverterUnit.componentDescription)
        let b = try graph.addNode(FormatConverterUnit.componentDescription)
        graph.open()
        expectError(.invalidConnection) { try graph.connectNodeInput(a, sourceOutput: 0, a, destinationInput: 0) }
        expectError(.invalidConnection) { try graph.connectNodeInput(tone, sourceOutput: 1, a, destinationInput: 0) }
        expectError(.invalidConnection) { try graph.connectNodeInput(tone, sourceOutput: 0, a, destinationInput: 3) }
        try graph.connectNodeInput(tone, sourceOutput: 0, a, destinationInput: 0)
        expectError(.invalidConnection) { try graph.connectNodeInput(b, sourceOutput: 0, a, destinationInput: 0) }
        try graph.connectNodeInput(a, sourceOutput: 0, b, destinationInput: 0)
        expectError(.invalidConnection) {
            try graph.disconnectNodeInput(a, destinationInput: 0)
            try graph.connectNodeInput(b, sourceOutput: 0, a, destinationInput: 0)
        }
    }

    @Test func formatsPropagateAlongConnectionsAtInitialize() throws {
        let graph = AudioGraph(registry: registry)
        let tone = try graph.addNode(ToneGeneratorUnit.componentDescription)
        let converter = try graph.addNode(FormatConverterUnit.componentDescription)
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        graph.open()
        let mono = StreamFormat.canonical(channels: 1, sampleRate: 44_100)
        try graph.unit(for: tone).set(.streamFormat, mono, scope: .output)
        try graph.unit(for: converter).set(.streamFormat, mono, scope: .output)
        var heard = 0
        try graph.unit(for: output).addPropertyListener(.streamFormat) { _, _, scope, element in
            if scope == .input && element == 0 { heard += 1 }
        }
        try graph.connectNodeInput(tone, sourceOutput: 0, converter, destinationInput: 0)
        try graph.connectNodeInput(converter, sourceOutput: 0, output, destinationInput: 0)
        try graph.initialize()
        #expect(try graph.unit(for: converter).get(.streamFormat, scope: .input) == mono)
        #expect(try graph.unit(for: output).get(.streamFormat, scope: .input) == mono)
        #expect(heard == 1)
        // The Generic Output's client side follows its input when the host never set it.
        #expect(try graph.unit(for: output).get(.streamFormat, scope: .output) == mono)
        // Propagation runs one way: nothing flowed back upstream.
        #expect(try graph.unit(for: tone).get(.streamFormat, scope: .output) == mono)
    }

    @Test func pullOrderFollowsConnectionsAndBusOrder() throws {
        let graph = AudioGraph(registry: registry)
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let top = try graph.addNode(ProbeUnit.componentDescription)
        let left = try graph.addNode(ProbeUnit.componentDescription)
        let right = try graph.addNode(ProbeUnit.componentDescription)
        graph.open()
        let log = PullLog()
        for (node, tag) in [(top, Int32(1)), (left, 2), (right, 3)] {
            let probe = try graph.unit(for: node) as! ProbeUnit
            probe.tag = tag
            probe.log = log
        }
        try graph.connectNodeInput(top, sourceOutput: 0, output, destinationInput: 0)
        try graph.connectNodeInput(right, sourceOutput: 0, top, destinationInput: 1)
        try graph.connectNodeInput(left, sourceOutput: 0, top, destinationInput: 0)
        try graph.setNodeInputCallback(left, destinationInput: 0, RenderCallbackStruct(rampCallback()))
        try graph.initialize()
        let buffers = RenderBuffers()
        #expect(renderCycle(graph, frames: 64, at: 0, into: buffers) == 0)
        #expect(log.recorded == [1, 2, -2, 3, -3, -1])
        // left carries the ramp, right's inputs are unconnected (silence): the sum is the ramp.
        #expect(buffers.channel(0, frames: 64)[10] == 0.010)
        #expect(buffers.channel(1, frames: 64)[10] == 1.010)
    }

    @Test func fanOutRendersOncePerCycle() throws {
        let graph = AudioGraph(registry: registry)
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let sum = try graph.addNode(ProbeUnit.componentDescription)
        let shared = try graph.addNode(ProbeUnit.componentDescription)
        graph.open()
        let log = PullLog()
        (try graph.unit(for: shared) as! ProbeUnit).log = log
        (try graph.unit(for: shared) as! ProbeUnit).tag = 7
        try graph.setNodeInputCallback(shared, destinationInput: 0, RenderCallbackStruct(rampCallback()))
        try graph.connectNodeInput(shared, sourceOutput: 0, sum, destinationInput: 0)
        try graph.connectNodeInput(shared, sourceOutput: 0, sum, destinationInput: 1)
        try graph.connectNodeInput(sum, sourceOutput: 0, output, destinationInput: 0)
        try graph.initialize()
        let buffers = RenderBuffers()
        for cycle in 0..<3 { renderCycle(graph, frames: 32, at: Int64(cycle * 32), into: buffers) }
        #expect(log.recorded == [7, -7, 7, -7, 7, -7])
        #expect(buffers.channel(0, frames: 32)[1] == 2 * Float(65) / 1000)
    }

    @Test func renderNotifyRunsBeforeAndAfterEveryCycle() throws {
        let graph = AudioGraph(registry: registry)
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let probe = try graph.addNode(ProbeUnit.componentDescription)
        graph.open()
        let log = PullLog()
        (try graph.unit(for: probe) as! ProbeUnit).log = log
        (try graph.unit(for: probe) as! ProbeUnit).tag = 5
        try graph.connectNodeInput(probe, sourceOutput: 0, output, destinationInput: 0)
        try graph.initialize()
        let notify: RenderCallback = { refCon, flags, timeStamp, _, _, _ in
            let log = refCon!.assumingMemoryBound(to: PullLog.self)
            _ = log
            let entries = Unmanaged<PullLog>.fromOpaque(refCon!).takeUnretainedValue()
            let phase: Int32 =
                flags.pointee.contains(.preRender) ? 100 : flags.pointee.contains(.postRender) ? 200 : 999
            entries.entries[entries.count.pointee] = phase + Int32(timeStamp.pointee.sampleTime)
            entries.count.pointee += 1
            return 0
        }
        try graph.addRenderNotify(RenderCallbackStruct(notify, refCon: Unmanaged.passUnretained(log).toOpaque()))
        let buffers = RenderBuffers()
        renderCycle(graph, frames: 16, at: 0, into: buffers)
        renderCycle(graph, frames: 16, at: 16, into: buffers)
        #expect(log.recorded == [100, 5, -5, 200, 116, 5, -5, 216])
        try graph.removeRenderNotify(refCon: Unmanaged.passUnretained(log).toOpaque())
        log.reset()
        renderCycle(graph, frames: 16, at: 32, into: buffers)
        #expect(log.recorded == [5, -5])
    }

    @Test func tooManyFramesFailsTheCycleAndIsRecorded() throws {
        let (graph, output, _) = try makeToneGraph(maximumFrames: 256)
        let buffers = RenderBuffers()
        #expect(renderCycle(graph, frames: 512, at: 0, into: buffers) == -10874)
        #expect(try graph.unit(for: output).get(.lastRenderError) == -10874)
        #expect(buffers.channel(0, frames: 512).allSatisfy { $0 == 0 })
        #expect(renderCycle(graph, frames: 256, at: 0, into: buffers) == 0)
    }

    @Test func unitsInTheFlowCannotBeReconfiguredDirectly() throws {
        let (graph, _, tone) = try makeToneGraph()
        expectError(.cannotDoInCurrentContext) { try graph.unit(for: tone).uninitialize() }
        expectError(.cannotDoInCurrentContext) { try graph.unit(for: tone).dispose() }
    }

    /// The seeds' live-insertion recipe (disconnect, add, configure, initialize, connect, update), with a
    /// converter standing in for the EQ: queued changes do nothing until update, then take effect at once.
    @Test func liveInsertionFollowsTheSeedsRecipe() throws {
        let (graph, output, tone) = try makeToneGraph()
        try graph.start()
        let buffers = RenderBuffers()
        var time: Int64 = 0
        func next() -> [Float] {
            #expect(renderCycle(graph, frames: 128, at: time, into: buffers) == 0)
            time += 128
            return buffers.channel(0, frames: 128)
        }
        var rendered = next()

        try graph.disconnectNodeInput(output, destinationInput: 0)
        let inserted = try graph.addNode(FormatConverterUnit.componentDescription)
        let unit = try graph.unit(for: inserted)
        let format = try graph.unit(for: output).get(.streamFormat, scope: .input)
        try unit.set(.streamFormat, format, scope: .input)
        try unit.set(.streamFormat, format, scope: .output)
        try unit.initialize()
        try graph.connectNodeInput(tone, sourceOutput: 0, inserted, destinationInput: 0)
        try graph.connectNodeInput(inserted, sourceOutput: 0, output, destinationInput: 0)
        #expect(graph.pendingChangeCount == 3)
        rendered += next()  // still the old topology
        try graph.update()
        #expect(graph.pendingChangeCount == 0)
        #expect(graph.dump().contains("node 3 output 0 => node 1 input 0"))
        rendered += next()
        rendered += next()

        let reference = ToneGeneratorUnit()
        try reference.initialize()
        var expected: [Float] = []
        for slice in 0..<4 {
            expected += try renderUnit(reference, frames: 128, at: Int64(slice * 128), buffers: RenderBuffers())
        }
        #expect(rendered == expected)

        // And out again: remove the node; it is disposed once the render thread has let go of it.
        try graph.disconnectNodeInput(output, destinationInput: 0)
        try graph.connectNodeInput(tone, sourceOutput: 0, output, destinationInput: 0)
        try graph.removeNode(inserted)
        try graph.update()
        #expect(unit.state == .disposed)
        #expect(next() == (try renderUnit(reference, frames: 128, at: 512, buffers: RenderBuffers())))
    }

    @Test func aFailedUpdateChangesNothing() throws {
        let (graph, output, _) = try makeToneGraph()
        // A node added to an initialized graph is instantiated at once and can be configured before wiring.
        let mono = try graph.addNode(ToneGeneratorUnit.componentDescription)
        try graph.unit(for: mono).set(.streamFormat, .canonical(channels: 1, sampleRate: 48_000), scope: .output)
        try graph.disconnectNodeInput(output, destinationInput: 0)
        try graph.connectNodeInput(mono, sourceOutput: 0, output, destinationInput: 0)
        // The mono tone does not match the initialized output's stereo input.
        expectError(.formatNotSupported) { try graph.update() }
        #expect(graph.dump().contains("node 2 output 0 => node 1 input 0"))
        #expect(renderCycle(graph, frames: 64, at: 0, into: RenderBuffers()) == 0)
    }

    @Test func dumpShowsNodesConnectionsFormatsAndState() throws {
        let graph = AudioGraph(registry: registry)
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let converter = try graph.addNode(FormatConverterUnit.componentDescription)
        graph.open()
        try graph.setNodeInputCallback(converter, destinationInput: 0, RenderCallbackStruct(rampCallback()))
        try graph.connectNodeInput(converter, sourceOutput: 0, output, destinationInput: 0)
        try graph.initialize()
        try graph.start()
        #expect(
            graph.dump() == """
                AudioGraph: 2 nodes, 2 inputs wired, running
                Member Nodes:
                  node 1: 'auou' 'genr' 'Auls', Aulos: Generic Output [initialized, running, 1024 max frames]
                    input 0: 48000 Hz, 2 ch, Float32, non-interleaved ← node 2 output 0
                    output 0: 48000 Hz, 2 ch, Float32, non-interleaved
                  node 2: 'aufc' 'conv' 'Auls', Aulos: Converter [initialized, 1024 max frames]
                    input 0: 48000 Hz, 2 ch, Float32, non-interleaved ← render callback
                    output 0: 48000 Hz, 2 ch, Float32, non-interleaved
                Connections:
                  node 2 output 0 => node 1 input 0
                Input Callbacks:
                  callback => node 2 input 0
                Render Notifications: 0
                Pending Changes: 0
                """)
    }
}

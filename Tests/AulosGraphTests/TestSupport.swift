import AulosCore
import AulosGraph
import AulosUnits
import Testing

/// A render-side log of which probe entered and left its render, in order. Test support only.
final class PullLog: @unchecked Sendable {
    let entries = UnsafeMutablePointer<Int32>.allocate(capacity: 4096)
    let count = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    init() { count.initialize(to: 0) }
    deinit {
        entries.deallocate()
        count.deallocate()
    }
    func reset() { count.pointee = 0 }
    var recorded: [Int32] { Array(UnsafeBufferPointer(start: entries, count: count.pointee)) }
}

/// A test unit (`aumx/prob/Test`): sums its inputs into its output and logs +tag on entry, -tag on exit.
/// Lets the tests see pull order and fan-out caching from the render thread's side.
final class ProbeUnit: AudioUnit, @unchecked Sendable {
    static let componentDescription = ComponentDescription(type: .mixer, subtype: "prob", manufacturer: "Test")
    var tag: Int32 = 0
    var log: PullLog?

    init(inputs: Int = 1) {
        super.init(description: Self.componentDescription, name: "Test: Probe", inputs: inputs, outputs: 1)
    }

    override func canChangeElementCount(_ scope: Scope) -> Bool { scope == .input }

    override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let format = outputFormat(0)
        let storage = AudioBufferListStorage(format: format, maximumFrames: maximumFramesPerSlice)
        retainForKernel(storage)
        if let log { retainForKernel(log) }
        let kernel = ProbeKernel(
            scratch: storage.list, inputCount: inputBusCount, channels: Int(format.channelsPerFrame), tag: tag,
            log: log?.entries, logCount: log?.count)
        return UnitKernel.make(kernel, render: ProbeKernel.render)
    }
}

struct ProbeKernel {
    let scratch: UnsafeMutablePointer<AudioBufferList>
    let inputCount: Int
    let channels: Int
    let tag: Int32
    let log: UnsafeMutablePointer<Int32>?
    let logCount: UnsafeMutablePointer<Int>?

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frames, io in
        state.assumingMemoryBound(to: ProbeKernel.self).pointee.render(inputs, flags, timeStamp, frames, io)
    }

    @_noAllocation @_noLocks
    func record(_ value: Int32) {
        guard let log, let logCount else { return }
        log[logCount.pointee] = value
        logCount.pointee += 1
    }

    @_noAllocation @_noLocks
    func render(
        _ inputs: UnsafeRawPointer, _ flags: UnsafeMutablePointer<RenderActionFlags>,
        _ timeStamp: UnsafePointer<AudioTimeStamp>,
        _ frames: UInt32, _ io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        record(tag)
        io.pointee.zeroFill()
        for bus in 0..<inputCount {
            scratch.pointee.setFrameCount(frames, bytesPerFrame: 4)
            var inputFlags = RenderActionFlags(rawValue: 0)
            let status = RenderInputs.pull(
                inputs, bus: UInt32(bus), flags: &inputFlags, timeStamp: timeStamp, frameCount: frames, into: scratch)
            if status != 0 && status != RenderStatus.noConnection { return status }
            for channel in 0..<channels {
                let out = io.pointee.floatChannel(channel)
                let input = scratch.pointee.floatChannel(channel)
                for frame in 0..<Int(frames) { out[frame] += input[frame] }
            }
        }
        record(-tag)
        return 0
    }
}

/// A registry with the built-in units plus the test units.
func testRegistry() -> ComponentRegistry {
    let registry = BuiltInUnits.registry()
    registry.register(Component(ProbeUnit.componentDescription, name: "Test: Probe") { ProbeUnit(inputs: 2) })
    return registry
}

/// Generic Output ← tone generator, opened, wired and initialized (not started): the smallest real graph.
func makeToneGraph(maximumFrames: UInt32? = nil) throws -> (graph: AudioGraph, output: NodeID, tone: NodeID) {
    let graph = AudioGraph(registry: testRegistry())
    let output = try graph.addNode(GenericOutputUnit.componentDescription)
    let tone = try graph.addNode(ToneGeneratorUnit.componentDescription)
    graph.open()
    if let maximumFrames {
        for node in [output, tone] { try graph.unit(for: node).set(.maximumFramesPerSlice, maximumFrames) }
    }
    try graph.connectNodeInput(tone, sourceOutput: 0, output, destinationInput: 0)
    try graph.initialize()
    return (graph, output, tone)
}

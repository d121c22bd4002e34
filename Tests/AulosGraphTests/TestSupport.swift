import AulosCore
import AulosGraph
import AulosUnits
import Testing


/// A render-side log of which probe entered and left its render, in order. Test support only.
final class PullLog: @unchecked Sendable {
    let entries = UnsafeMutablePointer<Int32>.allocate(capacity: 4096)
    let count = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    init() { count.initialize(to: 0) }
    deinit { entries.deallocate(); count.deallocate() }
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
    func render(_ inputs: UnsafeRawPointer, _ flags: UnsafeMutablePointer<RenderActionFlags>, _ timeStamp: UnsafePointer<AudioTimeStamp>,
                _ frames: UInt32, _ io: UnsafeMutablePointer<AudioBufferList>) -> AulosStatus {
        record(tag)
        io.pointee.zeroFill()
        for bus in 0..<inputCount {
            scratch.pointee.setFrameCount(frames, bytesPerFrame: 4)
            var inputFlags = RenderActionFlags(rawValue: 0)
            let status = RenderInputs.pull(inputs, bus: UInt32(bus), flags: &inputFlags, timeStamp: timeStamp, frameCount: frames, into: scratch)
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

/// A test unit whose output is its one parameter's value, frame by frame: the parameter trajectory made
/// audible, so scheduling, ramps and de-zipper glides can be checked sample by sample.
final class ParameterProbeUnit: AudioUnit, @unchecked Sendable {
    static let value = ParameterID(7)

    init(smoothed: Bool = true) {
        super.init(
            description: ComponentDescription(type: .generator, subtype: "ppro", manufacturer: "Test"), name: "Test: Parameter Probe",
            inputs: 0, outputs: 1, format: .canonical(channels: 1, sampleRate: 48_000),
            parameters: [ParameterInfo(id: Self.value, name: "Value", unit: .generic, range: -10...10, defaultValue: 0, isSmoothed: smoothed)])
    }

    override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        UnitKernel.make(ParameterProbeKernel(parameters: renderParameters), render: ParameterProbeKernel.render)
    }
}

struct ParameterProbeKernel {
    let parameters: ParameterKernel

    static let render: KernelRenderFunction = { state, _, _, _, _, frames, io in
        state.assumingMemoryBound(to: ParameterProbeKernel.self).pointee.render(Int(frames), io)
    }

    @_noAllocation @_noLocks
    func render(_ frameCount: Int, _ io: UnsafeMutablePointer<AudioBufferList>) -> AulosStatus {
        let out = io.pointee.floatChannel(0)
        parameters.beginSlice()
        var frame = 0
        while frame < frameCount {
            parameters.applyEvents(dueAt: frame)
            let end = parameters.nextEventOffset(after: frame, frameCount: frameCount)
            for index in frame..<end { out[index] = parameters.next(0) }
            frame = end
        }
        parameters.endSlice(frameCount: frameCount)
        return 0
    }
}

/// A render callback source: channel c, frame at sample time t holds (t mod 1000) / 1000 + c.
func rampCallback() -> RenderCallback {
    { _, _, timeStamp, _, frames, io in
        for channel in 0..<Int(io.pointee.bufferCount) {
            let out = io.pointee.floatChannel(channel)
            for frame in 0..<Int(frames) {
                out[frame] = Float((timeStamp.pointee.sampleTime + Int64(frame)) % 1000) / 1000 + Float(channel)
            }
        }
        return 0
    }
}

/// A registry with the built-in units plus the test units.
func testRegistry() -> ComponentRegistry {
    let registry = BuiltInUnits.registry()
    registry.register(Component(ProbeUnit.componentDescription, name: "Test: Probe") { ProbeUnit(inputs: 2) })
    return registry
}

/// Buffers for rendering a unit or graph from a test.
final class RenderBuffers {
    let storage: AudioBufferListStorage
    init(_ format: StreamFormat = .canonical(channels: 2, sampleRate: 48_000), frames: UInt32 = 4096) {
        storage = AudioBufferListStorage(format: format, maximumFrames: frames)
    }
    var list: UnsafeMutablePointer<AudioBufferList> { storage.list }
    func channel(_ index: Int, frames: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: list.pointee.floatChannel(index), count: frames))
    }
    func prepare(_ frames: UInt32) { list.pointee.setFrameCount(frames, bytesPerFrame: storage.format.bytesPerFrame) }
}

/// Renders `frames` frames of a standalone unit at `sampleTime`, returning channel 0.
func renderUnit(_ unit: AudioUnit, frames: UInt32, at sampleTime: Int64 = 0, buffers: RenderBuffers) throws -> [Float] {
    var flags = RenderActionFlags(rawValue: 0)
    buffers.prepare(frames)
    try unit.render(flags: &flags, timeStamp: AudioTimeStamp(sampleTime: sampleTime), frameCount: frames, ioData: buffers.list)
    return buffers.channel(0, frames: Int(frames))
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

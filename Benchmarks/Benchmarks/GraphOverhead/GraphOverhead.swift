import AulosCore
import AulosGraph
import AulosUnits
import Benchmark
import CReferenceGraph

// Graph overhead per 64-frame slice: a render callback source pulled through 16 pass-through nodes
// (AUConverters with identical formats) by a Generic Output, against the same chain in plain C.
// The "source only" pair measures the source's own work, so the difference is pure graph overhead.

let frames: UInt32 = 64

/// The source both sides share: a per-channel ramp (the C reference does exactly the same arithmetic).
func rampSource() -> RenderCallback {
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

/// Generic Output ← `passThroughNodes` converters ← render callback, initialized and started.
func makeAulosChain(passThroughNodes: Int) throws -> AudioGraph {
    let graph = AudioGraph(registry: BuiltInUnits.registry())
    let output = try graph.addNode(GenericOutputUnit.componentDescription)
    var chain: [NodeID] = []
    for _ in 0..<passThroughNodes { chain.append(try graph.addNode(FormatConverterUnit.componentDescription)) }
    graph.open()
    for node in graph.nodeIDs { try graph.unit(for: node).set(.maximumFramesPerSlice, frames) }
    var downstream = output
    for node in chain {
        try graph.connectNodeInput(node, sourceOutput: 0, downstream, destinationInput: 0)
        downstream = node
    }
    try graph.setNodeInputCallback(downstream, destinationInput: 0, RenderCallbackStruct(rampSource()))
    try graph.initialize()
    try graph.start()
    return graph
}

func benchmarkAulos(_ benchmark: Benchmark, passThroughNodes: Int) throws {
    let graph = try makeAulosChain(passThroughNodes: passThroughNodes)
    let entry = graph.renderEntry!
    let buffers = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: frames)
    var time: Int64 = 0
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        var flags = RenderActionFlags(rawValue: 0)
        var stamp = AudioTimeStamp(sampleTime: time, hostTime: 0, flags: .sampleTimeValid)
        buffers.list.pointee.setFrameCount(frames, bytesPerFrame: 4)
        blackHole(entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list))
        time += Int64(frames)
    }
    benchmark.stopMeasurement()
    blackHole(buffers.list.pointee.floatChannel(1)[63])
    try graph.stop()
    try graph.uninitialize()
}

func benchmarkC(_ benchmark: Benchmark, passThroughNodes: Int) {
    let graph = reference_graph_create(Int32(passThroughNodes), 2, Int32(frames))
    let left = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
    let right = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
    let io = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
    io[0] = left
    io[1] = right
    var time: Int64 = 0
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        blackHole(reference_graph_render(graph, time, frames, io))
        time += Int64(frames)
    }
    benchmark.stopMeasurement()
    blackHole(right[63])
    io.deallocate()
    left.deallocate()
    right.deallocate()
    reference_graph_destroy(graph)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000)

    Benchmark("Aulos: 16 pass-through nodes, 64 frames") { benchmark in
        try benchmarkAulos(benchmark, passThroughNodes: 16)
    }
    Benchmark("C reference: 16 pass-through nodes, 64 frames") { benchmark in
        benchmarkC(benchmark, passThroughNodes: 16)
    }
    Benchmark("Aulos: source only, 64 frames") { benchmark in
        try benchmarkAulos(benchmark, passThroughNodes: 0)
    }
    Benchmark("C reference: source only, 64 frames") { benchmark in
        benchmarkC(benchmark, passThroughNodes: 0)
    }
}

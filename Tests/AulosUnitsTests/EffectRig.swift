import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

/// Generic Output ← effect ← callback source (stereo).
final class EffectRig {
    let graph: AudioGraph
    let effect: AudioUnit
    let signal = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private(set) var harness: RenderHarness!

    init(
        _ description: ComponentDescription, signal value: Float, sampleRate: Double = 48_000,
        maximumFramesPerSlice: UInt32? = nil, configure: (AudioUnit) throws -> Void = { _ in }
    ) throws {
        signal.initialize(to: value)
        graph = AudioGraph(registry: BuiltInUnits.registry())
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let node = try graph.addNode(description)
        graph.open()
        effect = try graph.unit(for: node)
        let format = StreamFormat.canonical(channels: 2, sampleRate: sampleRate)
        for scope in [Scope.input, .output] {
            try effect.set(.streamFormat, format, scope: scope)
            try graph.unit(for: output).set(.streamFormat, format, scope: scope)
        }
        if let maximumFramesPerSlice {
            try effect.set(.maximumFramesPerSlice, maximumFramesPerSlice)
            try graph.unit(for: output).set(.maximumFramesPerSlice, maximumFramesPerSlice)
        }
        try configure(effect)
        try graph.setNodeInputCallback(
            node, destinationInput: 0, RenderCallbackStruct(signalCallback(), refCon: signal))
        try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
        try graph.initialize()
        try graph.start()
        harness = RenderHarness(graph.renderEntry!)
    }

    deinit { signal.deallocate() }

    func render(_ frames: Int, slice: Int = 512) -> [Float] { harness.render(frames, slice: slice)[0] }
}

/// How far the largest sample-to-sample step in `output` (from frame `start` on) goes past what a sine of
/// `frequency` at the local amplitude (the peak within a period either side) can move in one sample, with
/// `margin` for pitch wobble: at most 1 for a signal without clicks. Returns the worst ratio and its frame.
func worstStepOverSlopeBound(
    _ output: [Float], frequency: Double, from start: Int, sampleRate: Double = 48_000, margin: Float = 1.3
) -> (ratio: Float, at: Int) {
    let slope = Float(2 * Double.pi * frequency / sampleRate) * margin
    let period = Int(sampleRate / frequency)
    var worst: (ratio: Float, at: Int) = (0, 0)
    for index in max(start, period + 1)..<(output.count - period) {
        let local = output[(index - period)...(index + period)].reduce(Float(0)) { max($0, abs($1)) }
        let ratio = abs(output[index] - output[index - 1]) / (slope * max(local, 1e-6))
        if ratio > worst.ratio { worst = (ratio, index) }
    }
    return worst
}

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

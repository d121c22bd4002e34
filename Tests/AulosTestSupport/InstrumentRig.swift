import AulosCore
import AulosGraph
import AulosMIDI
import AulosUnits
import Testing

/// Generic Output ← one instrument, with a MIDI scheduler as the graph's render notify: the offline rig for
/// instrument tests, rendered through the one harness.
///
/// Threads: the test's thread.
public final class InstrumentRig {
    public let graph: AudioGraph
    public let instrument: AudioUnit
    public let scheduler: MIDIScheduler
    public let harness: RenderHarness

    public init(
        _ description: ComponentDescription, maximumFrames: UInt32 = 4096, sampleRate: Double = 48_000,
        registry: ComponentRegistry = BuiltInUnits.registry(), configure: (AudioUnit) throws -> Void = { _ in }
    ) throws {
        graph = AudioGraph(registry: registry)
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let node = try graph.addNode(description)
        graph.open()
        instrument = try graph.unit(for: node)
        let format = StreamFormat.canonical(channels: 2, sampleRate: sampleRate)
        for id in [output, node] {
            let unit = try graph.unit(for: id)
            try unit.set(.maximumFramesPerSlice, maximumFrames)
            try unit.set(.streamFormat, format, scope: .output)
        }
        try configure(instrument)
        try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
        scheduler = MIDIScheduler(destinations: [(instrument as! any MusicDevice).midiInput])
        try graph.addRenderNotify(scheduler.renderNotify)
        try graph.initialize()
        try graph.start()
        harness = RenderHarness(graph.renderEntry!, format: format, maximumFrames: maximumFrames)
    }

    /// The sample time of the next slice.
    public var time: Int64 { harness.sampleTime }

    public func schedule(_ messages: [ScheduledMessage], sourceLocation: SourceLocation = #_sourceLocation) {
        for message in messages {
            #expect(scheduler.schedule(message.message, at: message.sampleTime), sourceLocation: sourceLocation)
        }
    }

    /// Renders `total` frames in slices of `slice`; returns (left, right).
    public func render(_ total: Int, slice: Int) -> ([Float], [Float]) {
        let channels = harness.render(total, slice: slice)
        return (channels[0], channels[1])
    }

    /// Renders `slices` slices of `frames`, counting their allocations in `harness.allocations`.
    public func renderCounting(slices: Int, frames: UInt32 = 64) {
        for _ in 0..<slices { harness.renderSlice(frames, counting: true) }
    }
}

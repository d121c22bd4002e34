import AulosCore
import AulosGraph
import AulosUnits

#if canImport(Glibc)
import Glibc
#endif

/// A small, fully deterministic rig used by the offline-rendering tests: a tone generator playing a melody
/// scheduled sample-exactly through parameter events, through a format converter, into a Generic Output.
///
/// Threads: control thread.
public struct ToneMelodyRig {
    public let graph: AudioGraph
    public let toneNode: NodeID
    public let converterNode: NodeID
    public let outputNode: NodeID
    public let tone: ToneGeneratorUnit

    /// Builds, configures (Core Audio's seven steps) and initializes the rig. `outputFormat` is the
    /// Generic Output's output-scope format (what the file or the test receives).
    public init(
        sampleRate: Double, maximumFramesPerSlice: UInt32, outputFormat: StreamFormat? = nil,
        registry: ComponentRegistry = BuiltInUnits.registry()
    ) throws(AudioUnitError) {
        let graph = AudioGraph(registry: registry)
        let toneNode = try graph.addNode(ToneGeneratorUnit.componentDescription)
        let converterNode = try graph.addNode(FormatConverterUnit.componentDescription)
        let outputNode = try graph.addNode(GenericOutputUnit.componentDescription)
        graph.open()
        let processing = StreamFormat.canonical(channels: 2, sampleRate: sampleRate)
        for node in [toneNode, converterNode, outputNode] {
            let unit = try graph.unit(for: node)
            try unit.set(.maximumFramesPerSlice, maximumFramesPerSlice)
            if unit.inputBusCount > 0 { try unit.set(.streamFormat, processing, scope: .input) }
            try unit.set(.streamFormat, processing, scope: .output)
        }
        if let outputFormat {
            try graph.unit(for: outputNode).set(.streamFormat, outputFormat, scope: .output)
        }
        try graph.connectNodeInput(toneNode, sourceOutput: 0, converterNode, destinationInput: 0)
        try graph.connectNodeInput(converterNode, sourceOutput: 0, outputNode, destinationInput: 0)
        let tone = try graph.unit(for: toneNode) as! ToneGeneratorUnit
        try tone.setParameter(ToneGeneratorUnit.Parameter.level, value: 0)
        try graph.initialize()
        self.graph = graph
        self.toneNode = toneNode
        self.converterNode = converterNode
        self.outputNode = outputNode
        self.tone = tone
    }

    /// The demo melody: a rising arpeggio and its answer, in note numbers and beats at 120 BPM.
    public static let melody: [(note: Int, beat: Double, length: Double)] = [
        (60, 0, 0.5), (64, 0.5, 0.5), (67, 1, 0.5), (72, 1.5, 1.0),
        (71, 2.5, 0.5), (67, 3, 0.5), (64, 3.5, 0.5), (65, 4, 1.0),
        (69, 5, 0.5), (72, 5.5, 0.5), (76, 6, 1.5), (72, 7.5, 0.5),
    ]
    public static let beatsPerSecond = 2.0

    /// Length of the melody, including its release, in seconds.
    public static var duration: Double {
        let end = melody.map { $0.beat + $0.length }.max() ?? 0
        return end / beatsPerSecond + 0.25
    }

    /// Schedules the notes that start or end inside the slice [start, start + frames), sample-exactly.
    /// Call it before rendering each slice (the offline renderer's `beforeSlice`).
    public func scheduleMelody(sliceStart start: Int64, frames: UInt32) throws(AudioUnitError) {
        let rate = tone.outputFormat(0).sampleRate
        let attack = UInt32(rate * 0.005)
        let release = UInt32(rate * 0.04)
        let end = start + Int64(frames)
        var events: [ParameterEvent] = []
        for note in Self.melody {
            let on = Int64((note.beat / Self.beatsPerSecond * rate).rounded())
            let off = Int64(((note.beat + note.length) / Self.beatsPerSecond * rate).rounded()) - Int64(release)
            let frequency = Float(440 * exp2((Double(note.note) - 69) / 12))
            if on >= start && on < end {
                let offset = UInt32(on - start)
                events.append(
                    .immediate(
                        ToneGeneratorUnit.Parameter.frequency, scope: .global, element: 0, offset: offset,
                        value: frequency))
                events.append(
                    .ramp(
                        ToneGeneratorUnit.Parameter.level, scope: .global, element: 0, startOffset: offset,
                        duration: attack, from: 0, to: 0.3))
            }
            if off >= start && off < end {
                events.append(
                    .ramp(
                        ToneGeneratorUnit.Parameter.level, scope: .global, element: 0, startOffset: UInt32(off - start),
                        duration: release, from: 0.3, to: 0))
            }
        }
        if !events.isEmpty { try tone.scheduleParameters(events) }
    }
}

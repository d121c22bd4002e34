import AulosCore
import AulosDSP
import AulosGraph
import AulosMIDI
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Generic Output ← one instrument, with a MIDI scheduler as the graph's render notify: the offline
/// harness for instrument tests.
final class InstrumentRig {
    let graph: AudioGraph
    let instrument: AudioUnit
    let scheduler: MIDIScheduler
    let buffers: AudioBufferListStorage
    var time: Int64 = 0

    init(_ description: ComponentDescription, maximumFrames: UInt32 = 4096, sampleRate: Double = 48_000,
         registry: ComponentRegistry = BuiltInUnits.registry(), configure: (AudioUnit) throws -> Void = { _ in }) throws {
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
        buffers = AudioBufferListStorage(format: format, maximumFrames: maximumFrames)
    }

    func schedule(_ messages: [ScheduledMessage]) {
        for message in messages { #expect(scheduler.schedule(message.message, at: message.sampleTime)) }
    }

    /// Renders `total` frames in slices of `slice`; returns (left, right).
    func render(_ total: Int, slice: Int) -> ([Float], [Float]) {
        var left: [Float] = []
        var right: [Float] = []
        left.reserveCapacity(total)
        right.reserveCapacity(total)
        var remaining = total
        while remaining > 0 {
            let frames = UInt32(min(slice, remaining))
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp(sampleTime: time)
            buffers.list.pointee.setFrameCount(frames, bytesPerFrame: 4)
            let status = graph.renderEntry!.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list)
            #expect(status == 0)
            left += UnsafeBufferPointer(start: buffers.list.pointee.floatChannel(0), count: Int(frames))
            right += UnsafeBufferPointer(start: buffers.list.pointee.floatChannel(1), count: Int(frames))
            time += Int64(frames)
            remaining -= Int(frames)
        }
        return (left, right)
    }
}

func setSynth(_ unit: AudioUnit, _ values: [OscillatorSynthUnit.Parameter: Float]) throws {
    for (parameter, value) in values { try unit.setParameter(parameter.id, value: value) }
}

/// A plain, exactly measurable sound: one sine, filter wide open, no modulation, instant envelope.
let pureSine: [OscillatorSynthUnit.Parameter: Float] = [
    .osc1Waveform: 3, .oscMix: 0, .cutoff: 20_000, .resonance: 0, .filterEnvAmount: 0, .keyTracking: 0,
    .ampAttack: 0, .ampDecay: 0.001, .ampSustain: 1, .ampRelease: 0.05, .velocitySensitivity: 0, .lfoToPitch: 0, .volume: 0,
]

/// Frequency of a steady tone by counting rising zero crossings with linear interpolation.
func measuredFrequency(_ samples: ArraySlice<Float>, sampleRate: Double) -> Double {
    var crossings: [Double] = []
    var index = samples.startIndex + 1
    while index < samples.endIndex {
        let a = samples[index - 1]
        let b = samples[index]
        if a < 0 && b >= 0 { crossings.append(Double(index - 1) + Double(-a / (b - a))) }
        index += 1
    }
    guard crossings.count > 2 else { return 0 }
    return Double(crossings.count - 1) / ((crossings.last! - crossings.first!) / sampleRate)
}

func cents(_ measured: Double, _ expected: Double) -> Double { 1200 * log2(measured / expected) }

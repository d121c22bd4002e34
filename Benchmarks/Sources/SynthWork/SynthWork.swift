import AulosCore
import AulosGraph
import AulosMIDI
import AulosUnits

/// What the synth benchmarks (`Instruments`) and the synth-render driver (callgrind) share: 256 sustained voices
/// of the oscillator synth pulled through a graph in 64-frame stereo slices at 48 kHz, with the synth's default
/// patch or with parameters set before the graph is initialized.
///
/// Threads: everything here runs on the one thread that builds the graph and then pulls it (the benchmark's or
/// the driver's main thread), which is both the graph's control thread and its render thread.
public enum SynthWork {
    public static let voices = 256
    @inlinable public static var frames: UInt32 { 64 }
    public static let sampleRate = 48_000.0
    /// Slices rendered before measuring, so every voice has finished its attack.
    public static let warmUpSlices = 100

    /// A synth parameter and the value it is given before the graph is initialized.
    public typealias Setting = (parameter: OscillatorSynthUnit.Parameter, value: Float)

    /// The synth's default patch: two saws, a resonant low-pass, two envelopes.
    public static let defaultPatch: [Setting] = []
    /// Osc 1 as a 7-voice unison supersaw: 30 cents of detune spread, stereo width 0.8.
    public static let supersaw: [Setting] = [(.osc1Unison, 7), (.osc1Detune, 30), (.osc1Width, 0.8)]

    /// The generic output pulling the oscillator synth (polyphony `voices`, `settings` applied), initialized
    /// and started, with every voice sustaining a note (voice i: note 36 + i % 60, channel i / 60, velocity
    /// 100), and a stereo buffer list for the slices.
    public static func graph(settings: [Setting]) throws -> (AudioGraph, AudioBufferListStorage) {
        let graph = AudioGraph(registry: BuiltInUnits.registry())
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let node = try graph.addNode(OscillatorSynthUnit.componentDescription)
        graph.open()
        let synth = try graph.unit(for: node) as! OscillatorSynthUnit
        for id in [output, node] { try graph.unit(for: id).set(.maximumFramesPerSlice, frames) }
        try synth.setProperty(
            OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(voices))
        for setting in settings { try synth.setParameter(setting.parameter.id, value: setting.value) }
        try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
        try graph.initialize()
        try graph.start()
        for index in 0..<voices {
            try synth.midiEvent(
                status: 0x90 | UInt8(index / 60), data1: UInt8(36 + index % 60), data2: 100, offset: 0)
        }
        let buffers = AudioBufferListStorage(
            format: .canonical(channels: 2, sampleRate: sampleRate), maximumFrames: frames)
        return (graph, buffers)
    }

    /// One `frames`-frame slice pulled through `entry` at `time`, which moves on by the slice: the loop
    /// body of every synth measurement.
    @inlinable @inline(__always)
    public static func renderSlice(_ entry: RenderEntry, _ buffers: AudioBufferListStorage, _ time: inout Int64)
        -> AulosStatus
    {
        var flags = RenderActionFlags(rawValue: 0)
        var stamp = AudioTimeStamp(sampleTime: time)
        buffers.list.pointee.setFrameCount(frames, bytesPerFrame: 4)
        let status = entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list)
        time += Int64(frames)
        return status
    }
}

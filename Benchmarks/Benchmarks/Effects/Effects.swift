import AulosCore
import AulosGraph
import AulosUnits
import Benchmark
import CFluidSynth

// Effects: each of Aulos's effect units processing one 64-frame stereo block of noise at 48 kHz (a graph of
// Generic Output ← effect ← callback, so the cost includes the pull), against FluidSynth's own reverb and
// chorus measured as bare libfluidsynth with the effect on minus the same with it off: 16 sustained notes
// (one per channel, CC 91 and CC 93 at 127 so the effects have input), 64-frame blocks, one core, the
// effect mixed into the same output buffers. One benchmark iteration is one 64-frame block.

let frames: UInt32 = 64
let sampleRate = 48_000.0

/// The repository root (this file is Benchmarks/Benchmarks/Effects/Effects.swift).
var repositoryRoot: String {
    var path = #filePath
    for _ in 0..<4 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path
}

/// White-ish noise from the sample time: the same input whatever the slicing.
func noiseCallback() -> RenderCallback {
    { _, _, timeStamp, _, frameCount, io in
        for channel in 0..<Int(io.pointee.bufferCount) {
            let out = io.pointee.floatChannel(channel)
            for frame in 0..<Int(frameCount) {
                var x = UInt32(truncatingIfNeeded: (timeStamp.pointee.sampleTime + Int64(frame)) &* 2_654_435_761)
                x ^= x << 13
                x ^= x >> 17
                x ^= x << 5
                out[frame] = Float(Int32(bitPattern: x &+ UInt32(channel))) / 4_294_967_296
            }
        }
        return 0
    }
}

/// Generic Output ← `description` (configured) ← noise, ready to pull.
func effectGraph(_ description: ComponentDescription, configure: (AudioUnit) throws -> Void) throws -> AudioGraph {
    let graph = AudioGraph(registry: BuiltInUnits.registry())
    let output = try graph.addNode(GenericOutputUnit.componentDescription)
    let node = try graph.addNode(description)
    graph.open()
    for id in [output, node] { try graph.unit(for: id).set(.maximumFramesPerSlice, frames) }
    try configure(try graph.unit(for: node))
    try graph.setNodeInputCallback(node, destinationInput: 0, RenderCallbackStruct(noiseCallback()))
    try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
    try graph.initialize()
    try graph.start()
    return graph
}

func measureBlocks(_ benchmark: Benchmark, _ graph: AudioGraph) {
    let entry = graph.renderEntry!
    let buffers = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: sampleRate), maximumFrames: frames)
    var time: Int64 = 0
    // Two seconds first: delay lines full, tails ringing.
    for _ in 0..<1500 {
        var flags = RenderActionFlags(rawValue: 0)
        var stamp = AudioTimeStamp(sampleTime: time)
        buffers.list.pointee.setFrameCount(frames, bytesPerFrame: 4)
        _ = entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list)
        time += Int64(frames)
    }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        var flags = RenderActionFlags(rawValue: 0)
        var stamp = AudioTimeStamp(sampleTime: time)
        buffers.list.pointee.setFrameCount(frames, bytesPerFrame: 4)
        blackHole(entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list))
        time += Int64(frames)
    }
    benchmark.stopMeasurement()
}

/// Bare libfluidsynth, 16 notes held, `reverb` and `chorus` on or off; one iteration is one 64-frame block.
func measureFluidSynth(_ benchmark: Benchmark, reverb: Bool, chorus: Bool) {
    let settings = new_fluid_settings()!
    fluid_settings_setnum(settings, "synth.sample-rate", sampleRate)
    fluid_settings_setint(settings, "synth.threadsafe-api", 0)
    fluid_settings_setint(settings, "synth.cpu-cores", 1)
    fluid_settings_setint(settings, "synth.verbose", 0)
    fluid_settings_setint(settings, "synth.reverb.active", reverb ? 1 : 0)
    fluid_settings_setint(settings, "synth.chorus.active", chorus ? 1 : 0)
    let synth = new_fluid_synth(settings)!
    _ = fluid_synth_sfload(synth, repositoryRoot + "/soundfonts/AulosGM.sf2", 1)
    for channel in Int32(0)..<16 where channel != 9 {
        _ = fluid_synth_program_change(synth, channel, 48)  // strings: a sustained note
        _ = fluid_synth_cc(synth, channel, 91, 127)
        _ = fluid_synth_cc(synth, channel, 93, 127)
        _ = fluid_synth_noteon(synth, channel, 48 + channel * 2, 90)
    }
    let left = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
    let right = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
    var out: [UnsafeMutablePointer<Float>?] = [left, right]
    var fx: [UnsafeMutablePointer<Float>?] = [left, right, left, right]
    for _ in 0..<1500 { _ = fluid_synth_process(synth, Int32(frames), 4, &fx, 2, &out) }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        left.update(repeating: 0, count: Int(frames))
        right.update(repeating: 0, count: Int(frames))
        _ = fluid_synth_process(synth, Int32(frames), 4, &fx, 2, &out)
    }
    benchmark.stopMeasurement()
    blackHole(left[0])
    left.deallocate()
    right.deallocate()
    delete_fluid_synth(synth)
    delete_fluid_settings(settings)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 200_000)

    Benchmark("Reverb unit (Hall): 64-frame stereo block") { benchmark in
        let graph = try effectGraph(ReverbUnit.componentDescription) {
            try $0.set(.presentPreset, $0.factoryPresets[1])
        }
        measureBlocks(benchmark, graph)
    }
    Benchmark("Reverb unit (FluidSynth preset): 64-frame stereo block") { benchmark in
        let graph = try effectGraph(ReverbUnit.componentDescription) {
            try $0.set(.presentPreset, $0.factoryPresets[5])
        }
        measureBlocks(benchmark, graph)
    }
    Benchmark("Chorus unit (Ensemble, 4 voices): 64-frame stereo block") { benchmark in
        let graph = try effectGraph(ChorusUnit.componentDescription) {
            try $0.set(.presentPreset, $0.factoryPresets[1])
        }
        measureBlocks(benchmark, graph)
    }
    Benchmark("Delay unit (Ping-pong Quarter): 64-frame stereo block") { benchmark in
        let graph = try effectGraph(DelayUnit.componentDescription) { try $0.set(.presentPreset, $0.factoryPresets[3]) }
        measureBlocks(benchmark, graph)
    }
    // The output stage every rig ends in (issue 30): on noise peaking at -6 dBFS (below its -1 dBTP ceiling,
    // where the oversampled detector is skipped), and turned up 12 dB (limiting all the time, the detector
    // running on every sample).
    Benchmark("Peak limiter unit, below its ceiling: 64-frame stereo block") { benchmark in
        let graph = try effectGraph(PeakLimiterUnit.componentDescription) { _ in }
        measureBlocks(benchmark, graph)
    }
    Benchmark("Peak limiter unit, limiting (+12 dB): 64-frame stereo block") { benchmark in
        let graph = try effectGraph(PeakLimiterUnit.componentDescription) {
            try $0.setParameter(PeakLimiterUnit.Parameter.gain.id, scope: .global, element: 0, value: 12)
        }
        measureBlocks(benchmark, graph)
    }
    Benchmark("Pass-through (Converter unit): 64-frame stereo block") { benchmark in
        let graph = try effectGraph(FormatConverterUnit.componentDescription) { _ in }
        measureBlocks(benchmark, graph)
    }
    Benchmark("Bare libfluidsynth, 15 notes, effects off: 64-frame block") { benchmark in
        measureFluidSynth(benchmark, reverb: false, chorus: false)
    }
    Benchmark("Bare libfluidsynth, 15 notes, reverb on: 64-frame block") { benchmark in
        measureFluidSynth(benchmark, reverb: true, chorus: false)
    }
    Benchmark("Bare libfluidsynth, 15 notes, chorus on: 64-frame block") { benchmark in
        measureFluidSynth(benchmark, reverb: false, chorus: true)
    }
}

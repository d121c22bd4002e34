import AulosCore
import AulosDSP
import AulosFluid
import AulosGraph
import AulosMIDI
import AulosUnits
import Benchmark
import CFluidSynth
import CPlainVoice
import CReferenceVoice
import SynthWork

// Synth: 256 sustained voices (the synth's default patch: two saws, filter, envelopes; and the same with osc 1
// as a 7-voice unison supersaw) rendered in 64-frame slices, against a plain-C voice doing the default patch's
// work. Voices per core = 256 × slice time / render time.
// Sampler: the demo piece through the FluidSynth sampler unit (graph, the file's timeline read by sample
// time, 64-frame slices) against bare libfluidsynth rendering the same events from the same font in
// 64-frame blocks — with the unit's settings on both sides: reverb and chorus off, polyphony 512, one
// core, gain 0.6, samples loaded up front, the same output and effect buffers.

let voices = SynthWork.voices
let frames = SynthWork.frames
let sampleRate = SynthWork.sampleRate

/// The synth kernel benchmarks' body: the graph from `SynthWork.graph(settings:)`, every voice brought to its
/// steady state (attack done) by `SynthWork.warmUpSlices` slices, then one 64-frame slice per iteration.
func synthKernel(_ benchmark: Benchmark, settings: [SynthWork.Setting]) throws {
    let (graph, buffers) = try SynthWork.graph(settings: settings)
    let entry = graph.renderEntry!
    var time: Int64 = 0
    for _ in 0..<SynthWork.warmUpSlices { _ = SynthWork.renderSlice(entry, buffers, &time) }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { blackHole(SynthWork.renderSlice(entry, buffers, &time)) }
    benchmark.stopMeasurement()
    try graph.stop()
    try graph.uninitialize()
}

/// The repository root (this file is Benchmarks/Benchmarks/Instruments/Instruments.swift).
var repositoryRoot: String {
    var path = #filePath
    for _ in 0..<4 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path
}

var bundledFont: String { repositoryRoot + "/soundfonts/AulosGM.sf2" }

let demoMessages = try! Score(
    text: try! FileContents.text(repositoryRoot + "/presets/scores/demo.score", limit: 1 << 20)
)
.scheduledMessages(sampleRate: sampleRate)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        scalingFactor: .one, maxDuration: .seconds(5), maxIterations: 100_000)

    Benchmark("Synth kernel: 256 voices, 64-frame slice") { benchmark in
        try synthKernel(benchmark, settings: SynthWork.defaultPatch)
    }

    Benchmark("Synth kernel: 256 voices, 7-voice unison supersaw, 64-frame slice") { benchmark in
        try synthKernel(benchmark, settings: SynthWork.supersaw)
    }

    Benchmark("C reference voice: 256 voices, 64-frame slice") { benchmark in
        let tables = WavetableSet(sampleRate: sampleRate)
        let synth = reference_synth_create(Int32(voices), sampleRate, tables.saw.samples)
        defer { reference_synth_destroy(synth) }
        reference_synth_start_all(synth)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
        let right = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
        defer {
            left.deallocate()
            right.deallocate()
        }
        var time: Int64 = 0
        for _ in 0..<100 {
            reference_synth_render(synth, time, Int32(frames), left, right)
            time += Int64(frames)
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            reference_synth_render(synth, time, Int32(frames), left, right)
            time += Int64(frames)
        }
        benchmark.stopMeasurement()
        blackHole(left[63])
    }

    Benchmark("Plain C voice: 256 voices, 64-frame slice") { benchmark in
        let synth = plain_synth_create(Int32(voices), Float(sampleRate))
        defer { plain_synth_destroy(synth) }
        plain_synth_start_all(synth)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
        let right = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
        defer {
            left.deallocate()
            right.deallocate()
        }
        for _ in 0..<SynthWork.warmUpSlices { plain_synth_render(synth, Int32(frames), left, right) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { plain_synth_render(synth, Int32(frames), left, right) }
        benchmark.stopMeasurement()
        blackHole(left[63])
    }

    Benchmark(
        "Sampler unit: demo piece, 64-frame slices", configuration: .init(maxDuration: .seconds(10), maxIterations: 20)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let graph = AudioGraph(registry: BuiltInUnits.registry())
            graph.registry.register(
                Component(FluidSynthSamplerUnit.componentDescription, name: "sampler") { FluidSynthSamplerUnit() })
            let output = try graph.addNode(GenericOutputUnit.componentDescription)
            let node = try graph.addNode(FluidSynthSamplerUnit.componentDescription)
            graph.open()
            let sampler = try graph.unit(for: node) as! FluidSynthSamplerUnit
            for id in [output, node] { try graph.unit(for: id).set(.maximumFramesPerSlice, frames) }
            try sampler.loadSoundFont(bundledFont)
            try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
            let player = MIDITimelinePlayer(destinations: [sampler.midiInput])
            try graph.addRenderNotify(player.renderNotify)
            try graph.initialize()
            try graph.start()
            player.play(
                MIDITimeline(
                    demoMessages.messages.compactMap { scheduled in
                        ChannelMessage(scheduled.message).map {
                            TimedMIDIEvent(sampleTime: scheduled.sampleTime, message: $0)
                        }
                    }))
            let entry = graph.renderEntry!
            let buffers = AudioBufferListStorage(
                format: .canonical(channels: 2, sampleRate: sampleRate), maximumFrames: frames)
            let total = demoMessages.end + 48_000
            benchmark.startMeasurement()
            var time: Int64 = 0
            while time < total {
                var flags = RenderActionFlags(rawValue: 0)
                var stamp = AudioTimeStamp(sampleTime: time)
                buffers.list.pointee.setFrameCount(frames, bytesPerFrame: 4)
                blackHole(entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list))
                time += Int64(frames)
            }
            benchmark.stopMeasurement()
            try graph.stop()
            try graph.uninitialize()
        }
    }

    Benchmark(
        "Bare libfluidsynth: demo piece, 64-frame blocks",
        configuration: .init(maxDuration: .seconds(10), maxIterations: 20)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let settings = new_fluid_settings()!
            fluid_settings_setnum(settings, "synth.sample-rate", sampleRate)
            fluid_settings_setint(settings, "synth.threadsafe-api", 0)
            fluid_settings_setint(settings, "synth.polyphony", 512)
            fluid_settings_setint(settings, "synth.cpu-cores", 1)
            fluid_settings_setint(settings, "synth.dynamic-sample-loading", 0)
            fluid_settings_setint(settings, "synth.verbose", 0)
            // The sampler unit's defaults: FluidSynth's own reverb and chorus off.
            fluid_settings_setint(settings, "synth.reverb.active", 0)
            fluid_settings_setint(settings, "synth.chorus.active", 0)
            let synth = new_fluid_synth(settings)!
            _ = fluid_synth_sfload(synth, bundledFont, 1)
            fluid_synth_set_gain(synth, 0.6)
            let left = UnsafeMutablePointer<Float>.allocate(capacity: 64)
            let right = UnsafeMutablePointer<Float>.allocate(capacity: 64)
            var out: [UnsafeMutablePointer<Float>?] = [left, right]
            var fx: [UnsafeMutablePointer<Float>?] = [left, right, left, right]
            let total = demoMessages.end + 48_000
            var next = 0
            benchmark.startMeasurement()
            var time: Int64 = 0
            while time < total {
                while next < demoMessages.messages.count && demoMessages.messages[next].sampleTime < time + 64 {
                    let (status, d1, d2) = demoMessages.messages[next].message.channelBytes!
                    let ch = Int32(status & 0x0F)
                    switch status & 0xF0 {
                    case 0x90:
                        _ =
                            d2 > 0
                            ? fluid_synth_noteon(synth, ch, Int32(d1), Int32(d2))
                            : fluid_synth_noteoff(synth, ch, Int32(d1))
                    case 0x80: _ = fluid_synth_noteoff(synth, ch, Int32(d1))
                    case 0xB0: _ = fluid_synth_cc(synth, ch, Int32(d1), Int32(d2))
                    case 0xC0: _ = fluid_synth_program_change(synth, ch, Int32(d1))
                    default: break
                    }
                    next += 1
                }
                left.update(repeating: 0, count: 64)
                right.update(repeating: 0, count: 64)
                _ = fluid_synth_process(synth, 64, 4, &fx, 2, &out)
                time += 64
            }
            benchmark.stopMeasurement()
            blackHole(left[0])
            left.deallocate()
            right.deallocate()
            delete_fluid_synth(synth)
            delete_fluid_settings(settings)
        }
    }
}

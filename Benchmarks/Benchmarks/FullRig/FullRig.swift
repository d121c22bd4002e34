import AulosCore
import AulosMIDI
import AulosRig
import Benchmark

// A full rig at 64-frame slices: one FluidSynth sampler part playing all 16 MIDI channels (the bundled GM
// font; drums on 10), the multichannel mixer and a master iPod-style EQ, into a Generic Output. The load:
// every channel plays a three-note chord that changes every beat (120 BPM), so ~48 notes sound at once.
// DSP load = median render time of one slice ÷ the slice's duration (1,333 µs at 48 kHz).

let slice: UInt32 = 64

func denseScore() -> [ScheduledMessage] {
    var lines = ["0b tempo 120"]
    for channel in 1...16 where channel != 10 { lines.append("0b program \(channel * 7 % 128) ch=\(channel)") }
    for beat in 0..<64 {
        for channel in 1...16 {
            let root = 36 + (channel * 5 + beat * 2) % 36
            for interval in [0, 4, 7] {
                lines.append(
                    "\(beat)b note \(channel == 10 ? 35 + (beat + interval) % 20 : root + interval) 0.95b vel=90 "
                        + "ch=\(channel)"
                )
            }
        }
    }
    return try! Score(text: lines.joined(separator: "\n")).scheduledMessages(sampleRate: 48_000).messages
}

/// Plays the dense score through `rig` (its first part's channels) at 64-frame slices and measures one slice.
func measureSlices(_ benchmark: Benchmark, _ rig: Rig) throws {
    let playback = try PlaybackRig(rig)
    defer { playback.close() }
    try playback.graph.start()
    let entry = playback.graph.renderEntry!
    let buffers = AudioBufferListStorage(format: playback.fileFormat, maximumFrames: slice)
    let messages = denseScore()
    let lap = 64 * 24_000 as Int64  // 64 beats at 120 BPM
    var next = 0
    var offset: Int64 = 0
    var time: Int64 = 0
    func renderOne() {
        if next >= messages.count && time >= offset + lap {
            next = 0
            offset += lap
        }
        while next < messages.count && messages[next].sampleTime + offset < time + Int64(slice) {
            _ = playback.scheduler.schedule(messages[next].message, at: messages[next].sampleTime + offset)
            next += 1
        }
        var flags = RenderActionFlags(rawValue: 0)
        var stamp = AudioTimeStamp(sampleTime: time)
        buffers.list.pointee.setFrameCount(slice, bytesPerFrame: playback.fileFormat.bytesPerFrame)
        blackHole(entry.render(flags: &flags, timeStamp: &stamp, frameCount: slice, ioData: buffers.list))
        time += Int64(slice)
    }
    for _ in 0..<750 { renderOne() }  // one second in: every channel sounding
    benchmark.startMeasurement()
    defer { benchmark.stopMeasurement() }
    for _ in benchmark.scaledIterations {
        renderOne()
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal], scalingFactor: .kilo,
        maxDuration: .seconds(10), maxIterations: 200)

    Benchmark("Full rig: 16-channel sampler + mixer + EQ, 64-frame slice") { benchmark in
        var rig = Rig(name: "bench", parts: [Rig.Part(name: "GM", instrument: .sampler, channels: Array(1...16))])
        rig.slice = slice
        rig.eq = "Rock"
        try measureSlices(benchmark, rig)
    }

    // The same with two return buses (a Hall reverb and an Ensemble chorus, all wet) fed by sends of 0.3
    // and 0.15: the issue-15 goal is below 10 % DSP load at 64-frame slices.
    Benchmark("Full rig with reverb and chorus returns, 64-frame slice") { benchmark in
        var part = Rig.Part(name: "GM", instrument: .sampler, channels: Array(1...16))
        part.sends = ["hall": 0.3, "chorus": 0.15]
        var rig = Rig(name: "bench", parts: [part])
        rig.slice = slice
        rig.eq = "Rock"
        rig.returns = [
            ReturnBus(name: "hall", effects: [EffectSpec(kind: .reverb, preset: "Hall", parameters: [("mix", 100)])]),
            ReturnBus(
                name: "chorus", effects: [EffectSpec(kind: .chorus, preset: "Ensemble", parameters: [("mix", 100)])]),
        ]
        try measureSlices(benchmark, rig)
    }
}

// libFuzzer entry: an SFZ library built and played, not only parsed. The input is split at "\n%%%\n" into up
// to eight files, lib/f0.sfz … lib/f7.sfz, as for the parser target. A library that parses is written to a
// private folder with every sample it names (at most 16) made a link to one of three real WAVs: a short
// 16-bit mono tone with a `smpl` loop and root key, a 24-bit stereo tone longer than a head (so it streams),
// and a 3-frame click. Then a rig of one `sfz:` part is built at 48 kHz and played offline in 64-frame
// slices for 0.3 s: note-ons on every seventh key at changing velocities on three channels, the pedals,
// the controllers the opcodes follow (1, 7, 10, 11, 64, 66, 71, 74, the crossfade's), bends to both ends,
// programs, note-offs and All Sound Off — through the region plans, the mapping, the envelopes, filters and
// LFOs, the voices, the streamer and the sends.
// - Building either succeeds or throws an error with a message (never a crash or a hang).
// - What plays is finite: a NaN or infinity the render plan had to silence (`guardedSamples`) is a crash
//   here, since whatever values a library gives, the player must clamp them.
import AulosCore
import AulosMIDI
import AulosPlayback
import AulosRig
import AulosSFZ
import FuzzSupport
import Glibc

let folder = "/tmp/aulos-fuzz-sfzbuild-\(getpid())"
mkdir(folder, 0o700)
chdir(folder)
mkdir("lib", 0o700)

/// A PCM WAV of `frames` frames (16- or 24-bit), with a `smpl` chunk (root key 69, a forward loop) when asked.
func wav(frames: Int, channels: Int, bits: Int, loop: (Int, Int)?, value: (Int, Int) -> Double) -> [UInt8] {
    func le(_ value: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    var data: [UInt8] = []
    let scale = Double((1 << (bits - 1)) - 1)
    for frame in 0..<frames {
        for channel in 0..<channels { data += le(Int(value(frame, channel) * scale), bits / 8) }
    }
    var body = Array("WAVE".utf8) + Array("fmt ".utf8) + le(16, 4) + le(1, 2) + le(channels, 2) + le(48_000, 4)
    body += le(48_000 * channels * bits / 8, 4) + le(channels * bits / 8, 2) + le(bits, 2)
    body += Array("data".utf8) + le(data.count, 4) + data
    if let loop {
        let smpl =
            le(0, 4) + le(0, 4) + le(20_833, 4) + le(69, 4) + le(0, 12) + le(1, 4) + le(0, 4)
            + le(0, 4) + le(0, 4) + le(loop.0, 4) + le(loop.1, 4) + le(0, 8)
        body += Array("smpl".utf8) + le(smpl.count, 4) + smpl
    }
    return Array("RIFF".utf8) + le(body.count, 4) + body
}

func write(_ bytes: [UInt8], to path: String) {
    guard let file = fopen(path, "wb") else { return }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

let sources = ["\(folder)/tone.wav", "\(folder)/long.wav", "\(folder)/click.wav"]
write(
    wav(frames: 4800, channels: 1, bits: 16, loop: (1200, 2399)) { frame, _ in 0.5 * sin(Double(frame) * 0.0576) },
    to: sources[0])
write(
    wav(frames: 30_000, channels: 2, bits: 24, loop: nil) { frame, channel in
        0.4 * sin(Double(frame) * (channel == 0 ? 0.03 : 0.05))
    }, to: sources[1])
write(wav(frames: 3, channels: 1, bits: 16, loop: nil) { frame, _ in frame == 1 ? 1 : -1 }, to: sources[2])

/// The input's parts as lib/f0.sfz … in memory; any .wav exists (the parse decides which samples to make).
struct FuzzFiles: SFZFileSource {
    let memory: SFZMemoryFiles

    func read(_ path: String, limit: Int) throws(SFZFileSourceError) -> [UInt8] { try memory.read(path, limit: limit) }
    func fileExists(_ path: String) -> Bool { memory.fileExists(path) || path.hasSuffix(".wav") }
    func names(inFolder path: String) -> [String]? { memory.names(inFolder: path) }
}

/// Makes `path`'s folders under the working directory.
func makeFolders(of path: String) {
    var prefix = ""
    for component in path.split(separator: "/").dropLast() {
        prefix += (prefix.isEmpty ? "" : "/") + component
        mkdir(prefix, 0o700)
    }
}

/// The events played: every seventh key on channels 1-3, the pedals and controllers, bends, programs.
let events: [TimedMIDIEvent] = {
    var events: [TimedMIDIEvent] = []
    func add(_ frame: Int, _ status: UInt8, _ data1: UInt8, _ data2: UInt8) {
        events.append(TimedMIDIEvent(sampleTime: Int64(frame), status: status, data1: data1, data2: data2))
    }
    for (index, key) in stride(from: 0, to: 128, by: 7).enumerated() {
        let frame = index * 600
        let channel = UInt8(index % 3)
        add(frame, 0x90 | channel, UInt8(key), UInt8(1 + (index * 37) % 127))
        add(frame + 50, 0xB0 | channel, [1, 7, 10, 11, 64, 66, 71, 74][index % 8], UInt8((index * 53) % 128))
        add(frame + 90, 0xE0 | channel, 0, index % 2 == 0 ? 0 : 127)
        add(frame + 130, 0xC0 | channel, UInt8(index % 4), 0)
        add(frame + 2500, 0x80 | channel, UInt8(key), 0)
    }
    add(11_000, 0xB0, 64, 0)
    add(11_000, 0xB0, 66, 0)
    add(13_000, 0xB0, 120, 0)
    return events.sorted { $0.sampleTime < $1.sampleTime }
}()

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let files = splitFiles(bytes, maximum: 8).enumerated().reduce(into: [String: [UInt8]]()) {
        $0["lib/f\($1.offset).sfz"] = $1.element
    }
    var limits = SFZLimits()
    limits.regions = 512
    limits.expandedBytes = 2048
    guard
        let library = try? SFZLibrary.load(
            path: "lib/f0.sfz", files: FuzzFiles(memory: SFZMemoryFiles(files)), limits: limits),
        library.samples.count <= 16, library.samples.allSatisfy({ !$0.hasPrefix("/") && !$0.contains("..") })
    else { return 0 }
    for (name, text) in files { write(text, to: name) }
    for (index, sample) in library.samples.enumerated() {
        makeFolders(of: sample)
        symlink(sources[(index + sample.utf8.count) % sources.count], sample)
    }
    defer {
        for name in files.keys { unlink(name) }
        for sample in library.samples { unlink(sample) }
    }
    let yaml = "parts:\n  - instrument: sfz:lib/f0.sfz\n    channels: [1, 2, 3]\n    polyphony: 16\n"
    guard var rig = try? Rig(yaml: yaml, file: folder + "/rig.yaml") else { fatalError("the fuzzer's rig is wrong") }
    rig.slice = 64
    guard let playback = try? PlaybackRig(set: RigSet(rig), fileSample: .float32) else { return 0 }
    defer { playback.close() }
    guard let renderer = try? OfflineRenderer(graph: playback.graph, sliceFrames: 64) else {
        fatalError("a rig that was built cannot render offline")
    }
    playback.timelinePlayer.play(MIDITimeline(playback.prelude + events))
    do {
        try renderer.render(frameCount: 14_400) { _, _ in }
    } catch {
        fatalError("rendering an SFZ part failed: \(error)")
    }
    // FUZZ_SFZ_REPORT=1: a line per input that played, to see that inputs get this far.
    if getenv("FUZZ_SFZ_REPORT") != nil, let player = playback.instruments.first as? SFZInstrumentUnit {
        print("sfz-build: \(library.regions.count) regions, \(player.playedNotes) notes played")
    }
    for unit in playback.graph.units where unit.guardedSamples > 0 {
        fatalError("\(unit.name) produced NaN, infinity or more than +60 dBFS in \(unit.guardedSamples) samples")
    }
    return 0
}

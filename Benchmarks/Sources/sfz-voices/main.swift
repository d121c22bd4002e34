import AulosSFZ
import CFluidSynth
import CSndfile
import Foundation

// SFZ voices per core: `voices` notes of one looped stereo sample (48 kHz, 16-bit, 1 s, a band-limited
// 240 Hz tone looped over its second half) held on keys spread over ±16 semitones of its root (so both
// sides resample), rendered in 64-frame stereo blocks:
//
//   sfz-voices aulos [slices] [voices]    AulosSFZ's engine at its `.live` quality (8-tap windowed sinc,
//                                         stretched above the sample's rate; no filter, envelopes at sustain)
//   sfz-voices aulos-high [slices] [voices]  the same at `.high` (24-tap windowed sinc), the offline quality
//   sfz-voices fluid4 [slices] [voices]   bare libfluidsynth on an SF2 of the same sample (a stereo pair: two
//                                         FluidSynth voices a note), its default 4-point interpolation,
//                                         reverb and chorus off, one core
//   sfz-voices fluid7 [slices] [voices]   the same with FluidSynth's 7-point interpolation
//   sfz-voices all [slices] [voices]      all four, five runs each, medians and ratios (`make bench`)
//
// Each mode warms up 100 blocks, then renders `slices` blocks (default 3000) in `measure…` (for callgrind's
// --toggle-collect, as synth-render does):
//
//   strip --strip-debug -o /tmp/sfzv .build/release/sfz-voices
//   valgrind --tool=callgrind --toggle-collect='$s10sfz_voices12measureAulos*' /tmp/sfzv aulos 500
//   valgrind --tool=callgrind --toggle-collect='$s10sfz_voices12measureAulos*' /tmp/sfzv aulos-high 500
//   valgrind --tool=callgrind --toggle-collect='$s10sfz_voices12measureFluid*' /tmp/sfzv fluid4 500
//
// Threads: the main thread only.
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "all"
let slices = arguments.dropFirst().first.flatMap { Int($0) } ?? 3000
let voiceCount = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 64
/// Semitones either side of the sample's root the notes spread over.
let spread = arguments.dropFirst(3).first.flatMap { Int($0) } ?? 16
let frames = 64
let rate = 48000
let sampleFrames = 48000
let loopStart = 24000

/// The sample: harmonics 1…10 of 240 Hz (200 frames a period, so a loop of whole periods is seamless), the
/// right channel a quarter period later, as 16-bit frames.
func tone() -> (left: [Int16], right: [Int16]) {
    var left = [Int16](repeating: 0, count: sampleFrames)
    var right = left
    for n in 0..<sampleFrames {
        var l = 0.0
        var r = 0.0
        for k in 1...10 {
            l += sin(2 * Double.pi * Double(k) * Double(n) / 200) / Double(k)
            r += sin(2 * Double.pi * Double(k) * (Double(n) + 50) / 200) / Double(k)
        }
        left[n] = Int16(8000 * l)
        right[n] = Int16(8000 * r)
    }
    return (left, right)
}

/// The WAV: 16-bit stereo with the loop in its smpl chunk.
func writeWAV(_ path: String, _ sample: (left: [Int16], right: [Int16])) {
    var info = SF_INFO()
    info.samplerate = Int32(rate)
    info.channels = 2
    info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
    let file = sf_open(path, Int32(SFM_WRITE), &info)!
    var instrument = SF_INSTRUMENT()
    instrument.basenote = 60
    instrument.key_hi = 127
    instrument.velocity_hi = 127
    instrument.loop_count = 1
    // `loops` is an array of an unnamed struct Swift does not import: its first entry follows `loop_count`.
    let place = MemoryLayout<SF_INSTRUMENT>.offset(of: \.loop_count)! + 4
    withUnsafeMutableBytes(of: &instrument) { bytes in
        bytes.storeBytes(of: Int32(SF_LOOP_FORWARD), toByteOffset: place, as: Int32.self)
        bytes.storeBytes(of: UInt32(loopStart), toByteOffset: place + 4, as: UInt32.self)
        bytes.storeBytes(of: UInt32(sampleFrames), toByteOffset: place + 8, as: UInt32.self)  // one past the end
    }
    _ = sf_command(file, Int32(SFC_SET_INSTRUMENT), &instrument, Int32(MemoryLayout<SF_INSTRUMENT>.size))
    var interleaved = [Int16](repeating: 0, count: 2 * sampleFrames)
    for n in 0..<sampleFrames {
        interleaved[2 * n] = sample.left[n]
        interleaved[2 * n + 1] = sample.right[n]
    }
    _ = interleaved.withUnsafeBufferPointer { sf_writef_short(file, $0.baseAddress, sf_count_t(sampleFrames)) }
    sf_close(file)
}

/// The SF2 (SoundFont 2.01): the same frames as a linked left/right pair, one instrument of two zones (panned
/// hard left and right, looped, root key 60), one preset.
func writeSF2(_ path: String, _ sample: (left: [Int16], right: [Int16])) {
    func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    func name(_ text: String) -> [UInt8] { Array((Array(text.utf8) + [UInt8](repeating: 0, count: 20)).prefix(20)) }
    func chunk(_ tag: String, _ body: [UInt8]) -> [UInt8] {
        Array(tag.utf8) + le(UInt32(body.count)) + body + (body.count % 2 == 1 ? [0] : [])
    }
    func list(_ kind: String, _ chunks: [UInt8]...) -> [UInt8] {
        chunk("LIST", Array(kind.utf8) + chunks.flatMap { $0 })
    }
    let pad = [UInt8](repeating: 0, count: 46 * 2)  // 46 zero frames after each sample, as the format asks
    var data = sample.left.flatMap { le($0) } + pad
    let rightStart = UInt32(data.count / 2)
    data += sample.right.flatMap { le($0) } + pad
    func header(_ label: String, start: UInt32, link: UInt16, type: UInt16) -> [UInt8] {
        name(label) + le(start) + le(start + UInt32(sampleFrames)) + le(start + UInt32(loopStart))
            + le(start + UInt32(sampleFrames)) + le(UInt32(rate)) + [60, 0] + le(link) + le(type)
    }
    let shdr =
        header("left", start: 0, link: 1, type: 4) + header("right", start: rightStart, link: 0, type: 2)
        + name("EOS") + [UInt8](repeating: 0, count: 26)
    func generator(_ operation: UInt16, _ amount: UInt16) -> [UInt8] { le(operation) + le(amount) }
    // Zones: keyRange 0–127, pan ∓50 %, sampleModes 1 (loop), sampleID last.
    let zoneLeft = generator(43, 0x7F00) + generator(17, UInt16(bitPattern: -500)) + generator(54, 1) + generator(53, 0)
    let zoneRight = generator(43, 0x7F00) + generator(17, 500) + generator(54, 1) + generator(53, 1)
    let igen = zoneLeft + zoneRight + [0, 0, 0, 0]
    let ibag = le(UInt16(0)) + le(UInt16(0)) + le(UInt16(4)) + le(UInt16(0)) + le(UInt16(8)) + le(UInt16(0))
    let inst = name("tone") + le(UInt16(0)) + name("EOI") + le(UInt16(2))
    let pgen = generator(41, 0) + [0, 0, 0, 0]
    let pbag = le(UInt16(0)) + le(UInt16(0)) + le(UInt16(1)) + le(UInt16(0))
    let phdr =
        name("tone") + le(UInt16(0)) + le(UInt16(0)) + le(UInt16(0)) + le(UInt32(0)) + le(UInt32(0)) + le(UInt32(0))
        + name("EOP") + le(UInt16(0)) + le(UInt16(0)) + le(UInt16(1)) + le(UInt32(0)) + le(UInt32(0)) + le(UInt32(0))
    let terminal = [UInt8](repeating: 0, count: 10)
    let info = list("INFO", chunk("ifil", le(UInt16(2)) + le(UInt16(1))), chunk("isng", Array("EMU8000\0".utf8)))
    let sdta = list("sdta", chunk("smpl", data))
    let pdta = list(
        "pdta", chunk("phdr", phdr), chunk("pbag", pbag), chunk("pmod", terminal), chunk("pgen", pgen),
        chunk("inst", inst), chunk("ibag", ibag), chunk("imod", terminal), chunk("igen", igen), chunk("shdr", shdr))
    let file = chunk("RIFF", Array("sfbk".utf8) + info + sdta + pdta)
    FileManager.default.createFile(atPath: path, contents: Data(file))
}

func key(_ voice: Int) -> Int { 60 - spread + voice % (2 * spread + 1) }

func seconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

let folder = "/tmp/aulos-sfz-voices-\(getpid())"
try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let sample = tone()
writeWAV(folder + "/tone.wav", sample)
writeSF2(folder + "/tone.sf2", sample)

/// One block's output.
struct Block {
    let left = UnsafeMutablePointer<Float>.allocate(capacity: 64)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: 64)
    func free() {
        left.deallocate()
        right.deallocate()
    }
}

@inline(never)
func measureAulos(_ engine: SFZVoiceEngine, _ count: Int, _ block: Block) -> Float {
    let (left, right) = (block.left, block.right)
    var sum: Float = 0
    for _ in 0..<count {
        engine.render(frameCount: frames, left: left, right: right)
        sum += left[0]
    }
    return sum
}

/// Seconds per block, and a checksum.
func runAulos(_ quality: SFZInterpolationQuality) throws -> (Double, Float) {
    let block = Block()
    defer { block.free() }
    let (left, right) = (block.left, block.right)
    let store = SFZSampleStore()
    let id = try store.load(path: folder + "/tone.wav", residentFrames: .max)
    var configuration = SFZVoiceEngine.Configuration(sampleRate: Double(rate), polyphony: voiceCount)
    configuration.quality = quality
    let engine = SFZVoiceEngine(store: store, streamer: nil, configuration: configuration)
    defer { engine.deallocate() }
    for voice in 0..<voiceCount {
        var parameters = SFZVoiceParameters(sample: id)
        parameters.loopMode = .loopContinuous
        parameters.pitchCents = Double(key(voice) - 60) * 100
        parameters.gain = 0.05
        engine.start(parameters)
    }
    for _ in 0..<100 { engine.render(frameCount: frames, left: left, right: right) }
    let start = seconds()
    let sum = measureAulos(engine, slices, block)
    return ((seconds() - start) / Double(slices), sum)
}

@inline(never)
func measureFluid(_ synth: OpaquePointer, _ count: Int, _ block: Block) -> Float {
    let (left, right) = (block.left, block.right)
    var out: [UnsafeMutablePointer<Float>?] = [left, right]
    var fx: [UnsafeMutablePointer<Float>?] = [left, right, left, right]
    var sum: Float = 0
    for _ in 0..<count {
        left.update(repeating: 0, count: frames)
        right.update(repeating: 0, count: frames)
        _ = fluid_synth_process(synth, Int32(frames), 4, &fx, 2, &out)
        sum += left[0]
    }
    return sum
}

func runFluid(interpolation: Int32) -> (Double, Float) {
    let block = Block()
    defer { block.free() }
    let settings = new_fluid_settings()!
    fluid_settings_setnum(settings, "synth.sample-rate", Double(rate))
    fluid_settings_setint(settings, "synth.threadsafe-api", 0)
    fluid_settings_setint(settings, "synth.polyphony", Int32(max(512, 4 * voiceCount)))
    fluid_settings_setint(settings, "synth.cpu-cores", 1)
    fluid_settings_setint(settings, "synth.dynamic-sample-loading", 0)
    fluid_settings_setint(settings, "synth.verbose", 0)
    fluid_settings_setint(settings, "synth.reverb.active", 0)
    fluid_settings_setint(settings, "synth.chorus.active", 0)
    let synth = new_fluid_synth(settings)!
    defer {
        delete_fluid_synth(synth)
        delete_fluid_settings(settings)
    }
    _ = fluid_synth_sfload(synth, folder + "/tone.sf2", 1)
    _ = fluid_synth_set_interp_method(synth, -1, interpolation)
    for voice in 0..<voiceCount { _ = fluid_synth_noteon(synth, Int32(voice % 8), Int32(key(voice)), 100) }
    _ = measureFluid(synth, 100, block)
    let start = seconds()
    let sum = measureFluid(synth, slices, block)
    return ((seconds() - start) / Double(slices), sum)
}

func report(_ label: String, _ perBlock: Double) {
    let perVoiceFrame = perBlock / Double(voiceCount * frames) * 1e9
    let perCore = Double(voiceCount) * (Double(frames) / Double(rate)) / perBlock
    print(
        "\(label): \(String(format: "%.1f", perBlock * 1e6)) µs a block, "
            + "\(String(format: "%.2f", perVoiceFrame)) ns a note-frame, \(Int(perCore)) stereo notes per core")
}

func median(_ runs: () throws -> (Double, Float)) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<5 { times.append(try runs().0) }
    return times.sorted()[2]
}

switch mode {
case "aulos": report("AulosSFZ .live", try runAulos(.live).0)
case "aulos-high": report("AulosSFZ .high", try runAulos(.high).0)
case "fluid4": report("FluidSynth 4-point", runFluid(interpolation: 4).0)
case "fluid7": report("FluidSynth 7-point", runFluid(interpolation: 7).0)
default:
    let aulos = try median { try runAulos(.live) }
    let high = try median { try runAulos(.high) }
    let fluid4 = median { runFluid(interpolation: 4) }
    let fluid7 = median { runFluid(interpolation: 7) }
    print("\(voiceCount) held stereo notes, 64-frame blocks, \(slices) blocks a run, medians of 5 runs:")
    report("AulosSFZ .live (8-tap sinc)", aulos)
    report("AulosSFZ .high (24-tap sinc)", high)
    report("FluidSynth 2.3.1 (4-point)", fluid4)
    report("FluidSynth 2.3.1 (7-point)", fluid7)
    print(
        String(
            format: "AulosSFZ .live ÷ FluidSynth 4-point: %.2f×, .high ÷ 7-point: %.2f×", aulos / fluid4,
            high / fluid7)
    )
}

import AulosCore
import AulosDSP
import AulosGraph
import CPlainVoice
import CReferenceVoice
import SynthWork

// The synth benchmarks' work outside the benchmark framework, for instruction counts:
//
//   synth-render aulos [slices]           the oscillator synth's default patch through a graph (the
//                                         "Synth kernel" benchmark)
//   synth-render aulos-supersaw [slices]  the same with osc 1 as a 7-voice unison supersaw (detune 30, width 0.8)
//   synth-render c [slices]               the C reference voice shaped like the synth ("C reference voice")
//   synth-render plain [slices]           the plain C voice written for speed ("Plain C voice", -O3)
//
// Each renders 256 sustained voices: 100 warm-up slices of 64 frames (every voice past its attack), then
// `slices` more (default 2000), exactly the benchmark's loop, and prints a checksum (the last slice's
// energy). The render loop alone is `measureAulos` / `measureC`, for callgrind's --toggle-collect; the
// warm-up runs in separate functions so it is not counted. Instructions per voice-frame = the render loop's
// instructions ÷ (256 × 64 × slices). For example (valgrind 3.19 needs the debug info stripped):
//
//   strip --strip-debug -o /tmp/synthr .build/release/synth-render
//   valgrind --tool=callgrind --toggle-collect='$s12synth_render12measureAulos*' /tmp/synthr aulos 2000
//   valgrind --tool=callgrind --toggle-collect='$s12synth_render8measureC*' /tmp/synthr c 2000
//   valgrind --tool=callgrind --toggle-collect='$s12synth_render12measurePlain*' /tmp/synthr plain 2000
//
// (callgrind's call counts in such a run include the warm-up's calls; its instruction counts do not.)
//
// Threads: the main thread only (it builds the graph, then pulls it as its render thread).
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? ""
let slices = arguments.dropFirst().first.flatMap { Int($0) } ?? 2000
let frames = SynthWork.frames

@inline(never)
func warmUpAulos(_ entry: RenderEntry, _ buffers: AudioBufferListStorage, _ time: inout Int64) {
    for _ in 0..<SynthWork.warmUpSlices { _ = SynthWork.renderSlice(entry, buffers, &time) }
}

/// The measured loop; returns the number of slices that did not render (status ≠ 0).
@inline(never)
func measureAulos(_ entry: RenderEntry, _ buffers: AudioBufferListStorage, _ time: inout Int64, _ count: Int) -> Int {
    var failed = 0
    for _ in 0..<count where SynthWork.renderSlice(entry, buffers, &time) != 0 { failed += 1 }
    return failed
}

@inline(never)
func warmUpC(
    _ synth: OpaquePointer, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
    _ time: inout Int64
) {
    for _ in 0..<SynthWork.warmUpSlices {
        reference_synth_render(synth, time, Int32(frames), left, right)
        time += Int64(frames)
    }
}

@inline(never)
func measureC(
    _ synth: OpaquePointer, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
    _ time: inout Int64, _ count: Int
) {
    for _ in 0..<count {
        reference_synth_render(synth, time, Int32(frames), left, right)
        time += Int64(frames)
    }
}

@inline(never)
func warmUpPlain(_ synth: OpaquePointer, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>) {
    for _ in 0..<SynthWork.warmUpSlices { plain_synth_render(synth, Int32(frames), left, right) }
}

@inline(never)
func measurePlain(
    _ synth: OpaquePointer, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ count: Int
) {
    for _ in 0..<count { plain_synth_render(synth, Int32(frames), left, right) }
}

func energy(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>) -> Double {
    (0..<Int(frames)).reduce(0.0) { $0 + Double(left[$1] * left[$1]) + Double(right[$1] * right[$1]) }
}

var time: Int64 = 0
switch mode {
case "aulos", "aulos-supersaw":
    let (graph, buffers) = try SynthWork.graph(settings: mode == "aulos" ? SynthWork.defaultPatch : SynthWork.supersaw)
    let entry = graph.renderEntry!
    warmUpAulos(entry, buffers, &time)
    let failed = measureAulos(entry, buffers, &time, slices)
    let list = buffers.list.pointee
    let left = list.buffers[0].data!.assumingMemoryBound(to: Float.self)
    let right = list.buffers[1].data!.assumingMemoryBound(to: Float.self)
    print(
        "\(mode): \(slices) slices of \(frames) frames, \(SynthWork.voices) voices, \(failed) failed, "
            + "checksum (last slice's energy) \(energy(left, right))")
    try graph.stop()
    try graph.uninitialize()
case "c":
    let tables = WavetableSet(sampleRate: SynthWork.sampleRate)
    let synth = reference_synth_create(Int32(SynthWork.voices), SynthWork.sampleRate, tables.saw.samples)
    reference_synth_start_all(synth)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
    let right = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
    warmUpC(synth, left, right, &time)
    measureC(synth, left, right, &time, slices)
    print(
        "c: \(slices) slices of \(frames) frames, \(SynthWork.voices) voices, "
            + "checksum (last slice's energy) \(energy(left, right))")
    left.deallocate()
    right.deallocate()
    reference_synth_destroy(synth)
    withExtendedLifetime(tables) {}
case "plain":
    let synth = plain_synth_create(Int32(SynthWork.voices), Float(SynthWork.sampleRate))
    plain_synth_start_all(synth)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
    let right = UnsafeMutablePointer<Float>.allocate(capacity: Int(frames))
    warmUpPlain(synth, left, right)
    measurePlain(synth, left, right, slices)
    print(
        "plain: \(slices) slices of \(frames) frames, \(SynthWork.voices) voices, "
            + "checksum (last slice's energy) \(energy(left, right))")
    left.deallocate()
    right.deallocate()
    plain_synth_destroy(synth)
default:
    print("usage: synth-render aulos|aulos-supersaw|c|plain [slices]")
    exit(2)
}

// libFuzzer entry: an SFZ library made of several files, in memory. The input is split at "\n%%%\n" into up
// to eight files, lib/f0.sfz … lib/f7.sfz (so `#include "f1.sfz"` reaches the second); any path ending in
// .wav exists, so regions load. lib/f0.sfz is loaded, then its selector is built and played.
// - Loading either succeeds or throws an SFZError whose message is one line starting with the file (never
//   a crash, a hang, or memory growing with an include loop or a #define chain that doubles at each step).
// - A library that loads gives a selector whose starts are regions of the library, for note-ons on every
//   key, controllers (the pedals included), bends, programs and note-offs; and a summary.
import AulosSFZ
import FuzzSupport

/// The fuzzer's files: the input's parts, and a .wav for any name.
struct FuzzFiles: SFZFileSource {
    let memory: SFZMemoryFiles

    func read(_ path: String, limit: Int) throws(SFZFileSourceError) -> [UInt8] { try memory.read(path, limit: limit) }
    func fileExists(_ path: String) -> Bool { memory.fileExists(path) || path.hasSuffix(".wav") }
    func names(inFolder path: String) -> [String]? { memory.names(inFolder: path) }
}

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let files = splitFiles(bytes, maximum: 8).enumerated().reduce(into: [String: [UInt8]]()) {
        $0["lib/f\($1.offset).sfz"] = $1.element
    }
    var limits = SFZLimits()
    // Smaller than the defaults so each input is quick; the same code paths.
    limits.regions = 2048
    limits.expandedBytes = 2048
    let library: SFZLibrary
    do throws(SFZError) {
        library = try SFZLibrary.load(
            path: "lib/f0.sfz", files: FuzzFiles(memory: SFZMemoryFiles(files)), limits: limits)
    } catch {
        guard !error.message.contains("\n"), error.message.hasPrefix("lib/") else {
            fatalError("an SFZ error that is not one line starting with its file: \(error.message)")
        }
        return 0
    }
    _ = library.summary()
    var selector = SFZSelector(library: library, sampleRate: 48_000, seed: 1)
    let buffer = UnsafeMutableBufferPointer<SFZStart>.allocate(capacity: 8)
    defer { buffer.deallocate() }
    var frame: Int64 = 0
    func check(_ started: Int) {
        guard started <= buffer.count else { fatalError("the selector wrote past its buffer") }
        for start in buffer.prefix(started) where Int(start.region) >= library.regions.count || start.region < 0 {
            fatalError("the selector started region \(start.region) of \(library.regions.count)")
        }
    }
    for key in stride(from: 0, to: 128, by: 3) {
        frame += 100
        check(selector.noteOn(channel: key % 3, key: key, velocity: 1 + key % 127, frame: frame, into: buffer))
        if key % 2 == 0 {
            check(selector.controlChange(channel: 0, controller: 64, value: 127 - key, frame: frame, into: buffer))
        }
        check(selector.controlChange(channel: 0, controller: 66, value: key, frame: frame, into: buffer))
        check(selector.controlChange(channel: key % 3, controller: key, value: key, frame: frame, into: buffer))
        selector.pitchBend(channel: 0, value: key * 100 - 6000)
        selector.programChange(channel: 1, program: key)
    }
    for key in 0..<128 {
        frame += 100
        check(selector.noteOff(channel: key % 3, key: key, frame: frame, into: buffer))
    }
    check(selector.controlChange(channel: 0, controller: 64, value: 0, frame: frame, into: buffer))
    check(selector.controlChange(channel: 0, controller: 66, value: 0, frame: frame, into: buffer))
    for region in 0..<min(library.regions.count, 64) {
        _ = selector.chokes(started: Int32(region), playing: 0)
        _ = selector.polyphonyDecision(region: Int32(region), voicesInGroup: 3, voicesOnKey: 1)
    }
    return 0
}

// libFuzzer entry: any text as a Scala scale (.scl) and, split at a line "%%%", a keyboard mapping (.kbm).
// Reading either succeeds or throws a TuningError; a scale and mapping that read must make a table of
// 128 keys whose pitches are finite, or silent. The same bytes as a MIDI Tuning Standard message: read or
// refused, and every key change in range.
import AulosMIDI
import FuzzSupport

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let changes = MIDITuningMessage.keyChanges(bytes) {
        precondition(changes.allSatisfy { $0.key < 128 && $0.semitone < 128 && $0.fraction < 16_384 })
    }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    let halves = text.split(separator: "\n%%%\n", maxSplits: 1, omittingEmptySubsequences: false)
    guard let scale = try? ScalaScale(text: String(halves[0]), file: "fuzz.scl") else { return 0 }
    let mapping = halves.count > 1 ? try? KeyboardMapping(text: String(halves[1]), file: "fuzz.kbm") : KeyboardMapping()
    if let mapping, let table = try? TuningTable(scale: scale, mapping: mapping) {
        precondition(table.pitches.count == 128 && table.pitches.allSatisfy { $0?.isFinite ?? true })
    }
    return 0
}

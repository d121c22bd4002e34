// libFuzzer entry: any bytes as a Standard MIDI File, read both ways.
// - Strictly, reading either succeeds or throws a MIDIFileError.
// - Forgivingly (what render and play do), a file is refused only when it is not a MIDI file at all; any other
//   error traps, so libFuzzer keeps the input. A file the strict reader accepts must read identically, with
//   no recoveries: nothing that read before reads differently.
// - A file that reads must convert to timed messages at 48 kHz, or be refused for an event past
//   InputTimeLimit.
import AulosMIDI
import FuzzSupport

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let strict = try? StandardMIDIFile(bytes: bytes, reading: .strict)
    let forgiving: StandardMIDIFile
    do {
        forgiving = try StandardMIDIFile(bytes: bytes)
    } catch let error as MIDIFileError {
        guard error.kind == .notAMIDIFile else {
            fatalError("the forgiving reader refused a MIDI file: \(error.message)")
        }
        guard strict == nil else { fatalError("the strict reader read what the forgiving one refused") }
        return 0
    } catch {
        fatalError("the reader threw something other than a MIDIFileError: \(error)")
    }
    if let strict {
        guard forgiving.tracks == strict.tracks, forgiving.recoveries.isEmpty else {
            fatalError("a file the strict reader accepts read differently forgivingly")
        }
    }
    do {
        _ = try forgiving.scheduledMessages(sampleRate: 48_000)
    } catch let error as MIDIFileError {
        guard error.kind == .pastTheTimeLimit else { fatalError("converting to times failed: \(error.message)") }
    } catch {
        fatalError("converting threw something other than a MIDIFileError: \(error)")
    }
    return 0
}

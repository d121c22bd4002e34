// libFuzzer entry: any bytes as a Standard MIDI File. Reading either succeeds or throws a MIDIFileError;
// a file that reads must also convert to timed messages at 48 kHz, or throw (an event past InputTimeLimit).
import AulosMIDI
import FuzzSupport

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let file = try? StandardMIDIFile(bytes: bytes) {
        _ = try? file.scheduledMessages(sampleRate: 48_000)
    }
    return 0
}

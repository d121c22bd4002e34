// libFuzzer entry: any byte stream through the MIDI parser, in chunks of the fuzzer's choosing (the first
// byte sets the chunk size), as a serial port or raw MIDI device would deliver it. Every message must
// survive normalisation and, for channel messages, re-encoding.
import AulosMIDI
import FuzzSupport

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let first = bytes.first else { return 0 }
    let chunk = Int(first % 16) + 1
    var parser = MIDIParser(maximumSysExLength: 4096)
    var index = 1
    while index < bytes.count {
        let end = min(bytes.count, index + chunk)
        parser.parse(bytes[index..<end]) { message in
            if let (status, data1, data2) = message.normalized.channelBytes {
                precondition(status >= 0x80 && data1 < 0x80 && data2 < 0x80, "bad channel bytes from \(message)")
            }
        }
        index = end
    }
    return 0
}

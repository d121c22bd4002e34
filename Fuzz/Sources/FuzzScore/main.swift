// libFuzzer entry: any text as a score (docs/score.md). Parsing either succeeds or throws; a score that
// parses must also convert to timed messages at 48 kHz.
import AulosMIDI
import FuzzSupport

runFuzzer { data, count in
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    if let score = try? Score(text: text, name: "fuzz") {
        _ = score.scheduledMessages(sampleRate: 48_000)
    }
    return 0
}

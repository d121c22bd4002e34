// libFuzzer entry: any bytes as what a client sends the web panel, read by the gate's request framing in
// chunks whose sizes the input's first byte picks. What is passed on must be a prefix of the input (bytes
// are never changed, reordered or invented), and nothing may pass once the framing has refused.
import AulosWeb
import Foundation
import FuzzSupport

runFuzzer { data, count in
    guard let data, count > 1 else { return 0 }
    let chunk = Int(data[0]) + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: count - 1))
    var framing = RequestFraming()
    var passed: [UInt8] = []
    var stopped = false
    var index = 0
    let now = Date()
    while index < bytes.count {
        let end = min(bytes.count, index + chunk)
        let step = framing.take(bytes[index..<end], now: now)
        precondition(!stopped || step.passed.isEmpty, "bytes passed on after a refusal")
        passed += step.passed
        if step.outcome != .goOn { stopped = true }
        index = end
    }
    precondition(passed.count <= bytes.count && Array(bytes[..<passed.count]) == passed, "not a prefix of the input")
    return 0
}

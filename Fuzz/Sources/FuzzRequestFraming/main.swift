// libFuzzer entry: any bytes as what a client sends the web panel, read by the gate's request framing in
// chunks whose sizes the input's first byte picks. What is passed on must be a prefix of the input (bytes
// are never changed, reordered or invented), and nothing may pass once the framing has refused. Then what
// was passed on is read as the panel's server reads it (`PanelServer`): request heads, their bodies, and
// after a WebSocket upgrade the client's frames; a frame read must lie within the bytes and its limit.
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
    readAsTheServer(passed)
    return 0
}

/// What the server behind the gate does with `stream`.
func readAsTheServer(_ stream: [UInt8]) {
    var rest = stream
    while let end = RequestFraming.headEnd(in: rest, from: 0) {
        let head = rest[...end]
        rest.removeSubrange(...end)
        guard let request = PanelRequest(head: head), let length = request.contentLength, length <= rest.count
        else { return }
        rest.removeSubrange(..<length)
        guard request.headers["upgrade"]?.lowercased() == "websocket" else { continue }
        while case .frame(_, let payload, let taken) = WebSocketFrame.parse(rest, limit: 64 * 1024) {
            precondition(
                taken <= rest.count && payload.count <= 64 * 1024 && taken > payload.count, "frame out of bounds")
            rest.removeSubrange(..<taken)
        }
        return
    }
}

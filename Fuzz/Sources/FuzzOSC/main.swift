// libFuzzer entry: any bytes as an OSC packet (what `aulos play --osc` reads from UDP). Parsing either
// succeeds or throws an OSCError; every message read must encode and read back to itself.
import AulosPlayback
import FuzzSupport

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let messages = try? OSCMessage.parse(bytes) else { return 0 }
    for message in messages {
        // (A string argument holding a NUL cannot be written back as one: the reader never makes one.)
        let again = try? OSCMessage.parse(message.encoded())
        precondition(again?.count == 1, "a message read did not read back")
        if message.arguments.allSatisfy({ if case .float(let value) = $0 { return !value.isNaN } else { return true } })
        {
            precondition(again?.first == message, "a message read back differently")
        }
    }
    return 0
}

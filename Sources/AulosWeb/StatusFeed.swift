import AulosPlayback
import FlyingFox
import Foundation

/// The status WebSocket: every 50 ms (20 Hz) each client gets the control loop's latest status, with its
/// number and the CLOCK_MONOTONIC time it was taken (so a client on this machine can measure how old it
/// is). A status not newer than the one sent is not sent again. What clients send is ignored.
///
/// Threads: one task per client, on Swift concurrency's threads; they only read the bridge's snapshot.
struct StatusFeed: WSMessageHandler {
    let bridge: ControlBridge
    static let interval: Duration = .milliseconds(50)

    func makeMessages(for client: AsyncStream<WSMessage>) async throws -> AsyncStream<WSMessage> {
        let bridge = bridge
        return AsyncStream { continuation in
            let sender = Task {
                var sent = 0
                while !Task.isCancelled {
                    if let snapshot = bridge.latest, snapshot.sequence != sent {
                        sent = snapshot.sequence
                        continuation.yield(
                            .text(
                                #"{"sequence":\#(snapshot.sequence),"sampledNanos":\#(snapshot.sampledNanos),"#
                                    + #""status":\#(snapshot.json)}"#))
                    }
                    try? await Task.sleep(for: Self.interval)
                }
            }
            let reader = Task {
                for await message in client { if case .close = message { break } }
                sender.cancel()
                continuation.finish()
            }
            continuation.onTermination = { _ in
                sender.cancel()
                reader.cancel()
            }
        }
    }
}

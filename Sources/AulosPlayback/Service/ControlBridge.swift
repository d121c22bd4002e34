import AulosRealtime
import Foundation

/// The live instrument as seen from a network server that runs on threads of its own (the web panel):
/// requests go in a bounded queue that the control loop empties on every tick, and each tick publishes
/// the status, so no server thread ever touches the rig, and the render thread never waits on the network.
/// The one exception is a parameter change whose target the control loop has resolved before: it is set at
/// once, on the caller's thread (one atomic store, as a mapped MIDI controller does; `ControlTargets`).
///
/// A request is a `ControlRequest` (so the panel has exactly the socket's checks and effects) or one of
/// the few things only the control loop itself can do: read, replace, load or save the rig file it plays.
///
/// Threads: `submit`/`request`/`latest` from any thread; `take`/`publish`/`answerAtOnce` on the control thread.
public final class ControlBridge: @unchecked Sendable {
    public enum Request: Sendable {
        /// A control request (`set`, `get`, `rig`, `learn`, `parts`, `tempo`, …).
        case control(ControlRequest)
        /// A new rig file: checked, then written beside the playing one and renamed over it, then reloaded.
        case replaceRigFile(String)
        /// The playing rig file's text.
        case rigFile
        /// The rig and set files beside the playing one.
        case rigFiles
        /// Plays another rig file from beside the playing one (checked first, then reloaded).
        case loadRigFile(String)
        /// Saves the rig as it plays (every value a player changed) to a new file beside it (an existing file
        /// is never replaced), or with no name into the file(s) it plays.
        case saveRigFile(String?)
    }

    /// The status the control loop published last: JSON, its number, and when it was taken (CLOCK_MONOTONIC).
    public struct Snapshot: Sendable {
        public var json: String
        public var sequence: Int
        public var sampledNanos: Int64
    }

    public typealias Reply = @Sendable (ControlReply) -> Void

    private struct Pending {
        var request: Request
        var reply: Reply
    }

    /// A full queue refuses more: a flood from the network waits for nobody.
    static let capacity = 256
    private let lock = NSLock()
    private var pending: [Pending] = []
    private var snapshot: Snapshot?
    private var atOnce: (@Sendable (ControlRequest) -> ControlReply?)?

    public init() {}

    /// Queues `request`; `reply` gets the answer on the control thread (or at once, if the queue is full, or
    /// if it is a parameter change `answerAtOnce` carries out).
    public func submit(_ request: Request, reply: @escaping Reply) {
        if case .control(let control) = request, control.isParameterSet,
            let answer = lock.withLock({ atOnce })?(control)
        {
            reply(answer)
            return
        }
        let accepted = lock.withLock {
            guard pending.count < Self.capacity else { return false }
            pending.append(Pending(request: request, reply: reply))
            return true
        }
        if !accepted { reply(.failure("busy: too many requests waiting; try again", .unavailable)) }
    }

    /// The answer to `request`, from the next control tick (a parameter change, at once).
    public func request(_ request: Request) async -> ControlReply {
        await withCheckedContinuation { continuation in submit(request) { continuation.resume(returning: $0) } }
    }

    /// The last published status, if the instrument has played yet.
    public var latest: Snapshot? { lock.withLock { snapshot } }

    /// Lets `body` answer control requests on the caller's thread; it returns nil for those that must wait
    /// for the control thread. Control thread.
    func answerAtOnce(_ body: @escaping @Sendable (ControlRequest) -> ControlReply?) {
        lock.withLock { atOnce = body }
    }

    /// The requests waiting, each with where its answer goes. Control thread.
    func take() -> [(Request, Reply)] {
        lock.withLock {
            defer { pending.removeAll(keepingCapacity: true) }
            return pending.map { ($0.request, $0.reply) }
        }
    }

    /// Publishes this tick's status. Control thread.
    func publish(_ json: String) {
        let now = monotonicNanoseconds()
        lock.withLock {
            snapshot = Snapshot(json: json, sequence: (snapshot?.sequence ?? 0) + 1, sampledNanos: now)
        }
    }
}

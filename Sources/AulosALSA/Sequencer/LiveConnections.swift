import AulosMIDI
import CALSA

/// The sequencer input's bookkeeping, free of sequencer calls so it can be tested without a kernel: which
/// ports are connected (`ConnectionManager`), which notes each source holds (`HeldNotes`), and what a
/// System:Announce event or a lost subscription means — a connection to make, a notice to show, notes to
/// release.
///
/// Threads: owned by the MIDI thread (the control thread before it starts and after it stops).
public struct LiveConnections: Sendable {
    /// What one event led to.
    public struct Outcome: Sendable {
        public var notices: [SequencerInput.Notice] = []
        /// Messages that release what a vanished source held, to play like any other input.
        public var releases: [(message: MIDIMessage, source: SequencerAddress)] = []
    }

    public private(set) var manager: ConnectionManager
    public private(set) var held = HeldNotes<SequencerAddress>()
    /// Subscribes Aulos to a port; returns 0 or a negative errno.
    let connect: @Sendable (SequencerPort) -> Int32

    public init(manager: ConnectionManager, connect: @escaping @Sendable (SequencerPort) -> Int32) {
        self.manager = manager
        self.connect = connect
    }

    /// A MIDI message from `source` (tracked so it can be released later).
    public mutating func received(_ message: MIDIMessage, from source: SequencerAddress) {
        held.observe(message, from: source)
    }

    /// The ports present at start.
    public mutating func start(with ports: [SequencerPort]) -> Outcome { apply(manager.start(with: ports)) }

    /// PORT_START or PORT_CHANGE (with the port's description, queried by the caller).
    public mutating func portAppeared(_ port: SequencerPort) -> Outcome { apply(manager.portAppeared(port)) }

    /// PORT_EXIT.
    public mutating func portExited(_ address: SequencerAddress) -> Outcome { apply(manager.portDisappeared(address)) }

    /// CLIENT_EXIT: a USB keyboard unplugged takes its whole client with it.
    public mutating func clientExited(_ client: Int) -> Outcome { apply(manager.clientDisappeared(client)) }

    /// Our subscription to `sender` was removed (aconnect -d), or a program that played into us
    /// disconnected: either way its notes must stop.
    public mutating func unsubscribed(_ sender: SequencerAddress) -> Outcome {
        if manager.connected[sender] != nil { return apply(manager.portDisappeared(sender)) }
        var outcome = Outcome()
        outcome.releases = release(sender)
        return outcome
    }

    /// Releases everything every source holds (stopping).
    public mutating func releaseAll() -> [(message: MIDIMessage, source: SequencerAddress)] {
        held.activeSources.flatMap { release($0) }
    }

    mutating func apply(_ actions: [ConnectionManager.Action]) -> Outcome {
        var outcome = Outcome()
        for action in actions {
            switch action {
            case .connect(let port):
                let status = connect(port)
                if status >= 0 || status == -EBUSY {  // -EBUSY: already subscribed (by aconnect, say)
                    manager.didConnect(port)
                    outcome.notices.append(.connected(port))
                } else {
                    outcome.notices.append(.connectFailed(port, reason: String(cString: snd_strerror(status))))
                }
            case .disconnected(let port):
                let notes = held.count(from: port.address)
                outcome.releases += release(port.address)
                outcome.notices.append(.disconnected(port, releasedNotes: notes))
            }
        }
        return outcome
    }

    mutating func release(_ source: SequencerAddress) -> [(message: MIDIMessage, source: SequencerAddress)] {
        held.release(source).map { ($0, source) }
    }
}

import AulosMIDI
import CALSA

/// The sequencer input's bookkeeping, free of sequencer calls so it can be tested without a kernel: which
/// ports are connected (`ConnectionManager`), which sources have played into Aulos, and what a
/// System:Announce event or a lost subscription means — a connection to make, a notice to show, a source
/// whose notes must be released (by the receiver, which knows what each source holds).
///
/// Threads: owned by the MIDI thread (the control thread before it starts and after it stops).
public struct LiveConnections: Sendable {
    /// What one event led to.
    public struct Outcome: Sendable, Equatable {
        public var notices: [SequencerInput.Notice] = []
    }

    public private(set) var manager: ConnectionManager
    /// Sources that have played into Aulos and not ended since.
    public private(set) var playing: Set<SequencerAddress> = []
    /// Subscribes Aulos to a port; returns 0 or a negative errno.
    let connect: @Sendable (SequencerPort) -> Int32
    /// Releases what a source holds; returns how many notes that was.
    let release: @Sendable (SequencerAddress) -> Int

    public init(
        manager: ConnectionManager, connect: @escaping @Sendable (SequencerPort) -> Int32,
        release: @escaping @Sendable (SequencerAddress) -> Int
    ) {
        self.manager = manager
        self.connect = connect
        self.release = release
    }

    /// `source` played something (so it may hold notes to release later).
    public mutating func played(from source: SequencerAddress) { playing.insert(source) }

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
        end(sender)
        return Outcome()
    }

    /// Releases what every source that played still holds (stopping).
    public mutating func endAll() {
        for source in playing.sorted() { end(source) }
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
                outcome.notices.append(.disconnected(port, releasedNotes: end(port.address)))
            }
        }
        return outcome
    }

    /// Releases what `source` holds, once.
    @discardableResult
    mutating func end(_ source: SequencerAddress) -> Int {
        guard playing.remove(source) != nil else { return 0 }
        return release(source)
    }
}

extension SequencerAddress {
    /// The address as a MIDI source (what the receiver tracks held notes by).
    public var midiSource: MIDISource { MIDISource(rawValue: UInt32(client) << 8 | UInt32(port & 0xFF)) }
}

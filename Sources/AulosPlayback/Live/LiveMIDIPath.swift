import AulosCore
import AulosMIDI
import AulosRealtime
import AulosRig

/// Live MIDI's one way in: what the sequencer's MIDI thread reads and what the control socket sends both
/// arrive here, and one lock keeps the two in turn. Channel messages go through the rig's router and are
/// queued, stamped with their arrival, for the live input to place on their frame; mapped controllers set
/// their parameter at once (one atomic store) while rig switches and EQ presets wait for the control tick;
/// transport messages and MIDI clock go to the host transport. The path outlives the rigs it serves: a
/// reload attaches the new rig, and the MIDI thread never sees anything half built.
///
/// A channel message keeps one shape from the sequencer to the instrument: the `ChannelMessage` the
/// sequencer read, routed (transposed, velocity-shaped) in place, queued with its arrival, placed as a
/// `MIDIEvent` at its offset.
///
/// Threads: `receive`/`sourceEnded` on the MIDI thread, and on the control thread for the control socket;
/// everything else on the control thread. The lock is never taken on the render thread.
final class LiveMIDIPath: MIDIReceiver, @unchecked Sendable {
    /// The rig being played and where its MIDI goes.
    struct Attached {
        var router: RigRouter
        let input: LiveMIDIInput
        let transport: HostTransport
        let sampleRate: Double
        /// Rig switches and EQ presets for the control thread (property sets belong there).
        var pendingActions: [RigRouter.Action] = []
    }

    private let state = Locked<Attached?>(nil)
    /// What came in lately, for the panel.
    let activity = MIDIActivityLog()

    /// Plays what arrives on `rig` from now on, through `input`. Control thread.
    func attach(_ rig: PlaybackRig, router: RigRouter, input: LiveMIDIInput) {
        let attached = Attached(router: router, input: input, transport: rig.transport, sampleRate: rig.rig.sampleRate)
        state.withLock { $0 = attached }
    }

    /// Nothing plays until the next `attach` (the rig is being rebuilt or the run is over). Control thread.
    func detach() { state.withLock { $0 = nil } }

    // MARK: MIDIReceiver

    func receive(_ message: ChannelMessage, from source: MIDISource, arrivalNanos: Int64) {
        route(message, from: source) {
            LiveMIDIEvent(arrivalNanos: arrivalNanos, destination: $0.destination, message: $0.message)
        }
    }

    /// JACK MIDI: already on its frame, so it is queued with that frame instead of an arrival time.
    func receive(_ message: ChannelMessage, from source: MIDISource, dueFrame: Int64) {
        route(message, from: source) {
            LiveMIDIEvent(dueFrame: dueFrame, destination: $0.destination, message: $0.message)
        }
    }

    /// Routes a channel message and queues what the router delivers, stamped by `stamp`.
    private func route(
        _ message: ChannelMessage, from source: MIDISource, stamp: (RigRouter.Delivery) -> LiveMIDIEvent
    ) {
        activity.record(message, from: source)
        state.withLock { attached in
            guard attached != nil else { return }
            let routed = attached!.router.route(message, from: source)
            for delivery in routed.deliveries { attached!.input.send(stamp(delivery)) }
            for action in routed.actions {
                // A parameter is one atomic store, safe here; presets and rig switches wait for the control thread.
                if case .control(let target, let value) = action, case .parameter = target.kind {
                    try? target.apply(value)
                } else {
                    attached!.pendingActions.append(action)
                }
            }
        }
    }

    func receive(system message: MIDIMessage, from source: MIDISource, arrivalNanos: Int64) {
        state.withLock { attached in
            guard attached != nil else { return }
            switch message {
            case .timingClock, .start, .stop, .continue, .songPosition:
                if let frame = attached!.input.sampleTime(atNanos: arrivalNanos) {
                    attached!.transport.receiveClock(message, at: frame / attached!.sampleRate)
                }
                if case .timingClock = message { return }
                attached!.transport.handle(message)
            case .systemExclusive(let data):
                // A GM/GS/XG reset (every instrument's channels back to their defaults, CC 91/93 included) or
                // a MIDI Tuning Standard message (the synth parts' keys retuned; other instruments ignore
                // the internal events that carry it), to every part at its frame. A tuning message also
                // waits for the control thread, which retunes the sampler parts (`PlaybackRig.apply`).
                guard let played = PlayedSystemExclusive(data) else {
                    attached!.transport.handle(message)  // MIDI Machine Control; other SysEx is not played live yet
                    return
                }
                if case .tuning = played, let changes = MIDITuningMessage.keyChanges(data) {
                    for part in 0..<attached!.router.partCount {
                        attached!.pendingActions.append(.retune(part: part, changes: changes))
                    }
                }
                let deliveries = (0..<attached!.router.partCount).flatMap { part in
                    played.messages.map { (destination: UInt16(part), message: $0) }
                }
                Self.queue(deliveries, into: attached!, arrivalNanos: arrivalNanos)
            default:
                return
            }
        }
    }

    @discardableResult
    func sourceEnded(_ source: MIDISource, arrivalNanos: Int64) -> Int {
        state.withLock { attached in
            guard attached != nil else { return 0 }
            let (deliveries, notes) = attached!.router.release(source)
            Self.queue(deliveries, into: attached!, arrivalNanos: arrivalNanos)
            return notes
        }
    }

    // MARK: Control

    /// Switches to rig `index` as a program change on the control channel would (the control socket's
    /// `rig N`); the caller applies the output settings.
    func select(rig index: Int) {
        state.withLock { attached in
            guard attached != nil else { return }
            let deliveries = attached!.router.select(rig: index)
            Self.queue(deliveries, into: attached!, arrivalNanos: monotonicNanoseconds())
        }
    }

    /// Plays `messages` on part `part` (its place in the set) alone, past the router: a preset chosen on
    /// the panel reaches that part even when its channel is the control channel or shared with another.
    func send(_ messages: [ChannelMessage], toPart part: Int) {
        state.withLock { attached in
            guard attached != nil, part < attached!.router.partCount else { return }
            Self.queue(
                messages.map { (destination: UInt16(part), message: $0) }, into: attached!,
                arrivalNanos: monotonicNanoseconds())
        }
    }

    /// The rig switches and EQ presets the MIDI thread left for the control thread.
    func takePendingActions() -> [RigRouter.Action] {
        state.withLock { attached in
            defer { attached?.pendingActions.removeAll() }
            return attached?.pendingActions ?? []
        }
    }

    /// Reads or changes the router under the lock (MIDI-learn, mappings, the active rig). Nil when no rig
    /// is attached.
    func withRouter<Result>(_ body: (inout RigRouter) -> Result) -> Result? {
        state.withLock { attached in
            guard attached != nil else { return nil }
            return body(&attached!.router)
        }
    }

    /// Queues deliveries for the live input, stamped with their arrival. Called with the lock held, so the
    /// input's queue has one producer at a time.
    private static func queue(_ deliveries: [RigRouter.Delivery], into attached: Attached, arrivalNanos: Int64) {
        for delivery in deliveries {
            attached.input.send(
                LiveMIDIEvent(arrivalNanos: arrivalNanos, destination: delivery.destination, message: delivery.message))
        }
    }
}

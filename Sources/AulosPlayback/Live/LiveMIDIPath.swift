import AulosCore
import AulosMIDI
import AulosRealtime
import AulosRig

/// Live MIDI's one way in from threads other than the render thread: what the sequencer's MIDI thread
/// reads and what the control socket sends both arrive here, and one lock keeps the two in turn. Channel
/// messages are queued for the live input as they came, stamped with their arrival and source: the render
/// thread routes them through the rig's `RoutingKernel` when their frame comes (the same kernel that routes
/// JACK MIDI inside its cycle), so there is one record of held notes whatever the source. Rig switches,
/// releases and MIDI-learn go the same way, in order with the notes. Transport messages and MIDI clock go
/// to the host transport. What the router decided for the control thread (rig switches, EQ presets, learned
/// mappings) comes back through `takePendingActions`. The path outlives the rigs it serves: a reload
/// attaches the new rig, and the MIDI thread never sees anything half built.
///
/// Threads: `receive`/`heard`/`sourceEnded` on the MIDI threads, and on the control thread for the control
/// socket; everything else on the control thread. The lock is never taken on the render thread.
final class LiveMIDIPath: MIDIReceiver, @unchecked Sendable {
    /// The rig being played and where its MIDI goes.
    struct Attached {
        /// The router's control side (names, learned mappings); the render thread owns its kernel.
        let router: RigRouter
        let input: LiveMIDIInput
        let transport: HostTransport
        let sampleRate: Double
        /// Actions for the control thread: retunes from SysEx, and what the render thread's router reported.
        var pendingActions: [RigRouter.Action] = []
        /// MIDI Start, Continue, Stop and Song Position Pointer as they came, for the file player.
        var transportMessages: [MIDIMessage] = []
        /// The keys each source holds down as they arrived here, for the count a disconnect reports (the
        /// router's own record is the render thread's).
        var keysDown: [MIDISource: Set<UInt16>] = [:]
    }

    private let state = Locked<Attached?>(nil)
    /// What came in lately, for the panel.
    let activity = MIDIActivityLog()

    /// Plays what arrives on `rig` from now on, through `input`, which must route with `router`'s kernel.
    /// Control thread.
    func attach(_ rig: PlaybackRig, router: RigRouter, input: LiveMIDIInput) {
        precondition(input.routes(with: router.kernel.kernel), "the live input must route with this router")
        let attached = Attached(router: router, input: input, transport: rig.transport, sampleRate: rig.rig.sampleRate)
        state.withLock { $0 = attached }
    }

    /// Nothing plays until the next `attach` (the rig is being rebuilt or the run is over). Control thread.
    func detach() { state.withLock { $0 = nil } }

    // MARK: MIDIReceiver

    func receive(_ message: ChannelMessage, from source: MIDISource, arrivalNanos: Int64) {
        activity.record(message, from: source)
        state.withLock { attached in
            guard attached != nil else { return }
            Self.track(message, from: source, in: &attached!.keysDown)
            attached!.input.send(.routed(message, from: source, arrivalNanos: arrivalNanos))
        }
    }

    /// Network MIDI, placed by its sender's clock: to the live input's scheduled inbox, so that what the
    /// keyboards play meanwhile is not queued behind it.
    func receive(_ message: ChannelMessage, from source: MIDISource, scheduledNanos: Int64) {
        activity.record(message, from: source)
        state.withLock { attached in
            guard attached != nil else { return }
            Self.track(message, from: source, in: &attached!.keysDown)
            attached!.input.sendScheduled(.routed(message, from: source, arrivalNanos: scheduledNanos))
        }
    }

    /// JACK MIDI, already routed and placed on its frame in its cycle: recorded for the panel only.
    func heard(_ message: ChannelMessage, from source: MIDISource) {
        activity.record(message, from: source)
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
                // Bounded: the control thread takes them every tick; a flood beyond this is dropped.
                if attached!.transportMessages.count < 256 { attached!.transportMessages.append(message) }
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
                for part in 0..<attached!.router.partCount {
                    for played in played.messages {
                        attached!.input.send(
                            LiveMIDIEvent(arrivalNanos: arrivalNanos, destination: UInt16(part), message: played))
                    }
                }
            default:
                return
            }
        }
    }

    /// `source` is gone: the render thread's router releases its notes and pedal, in order after what it
    /// sent. Returns how many keys it held down.
    @discardableResult
    func sourceEnded(_ source: MIDISource, arrivalNanos: Int64) -> Int {
        state.withLock { attached in
            guard attached != nil else { return 0 }
            attached!.input.send(.command(.releaseSource, source: source, arrivalNanos: arrivalNanos))
            return attached!.keysDown.removeValue(forKey: source)?.count ?? 0
        }
    }

    // MARK: Control

    /// Switches to rig `index` as a program change on the control channel would (the control socket's
    /// `rig N`); the caller applies the output settings.
    func select(rig index: Int) {
        state.withLock { attached in
            attached?.input.send(.command(.selectRig, rig: index, arrivalNanos: monotonicNanoseconds()))
        }
    }

    /// Plays `messages` on part `part` (its place in the set) alone, past the router: a preset chosen on
    /// the panel reaches that part even when its channel is the control channel or shared with another.
    func send(_ messages: [ChannelMessage], toPart part: Int) {
        state.withLock { attached in
            guard attached != nil, part < attached!.router.partCount else { return }
            let now = monotonicNanoseconds()
            for message in messages {
                attached!.input.send(LiveMIDIEvent(arrivalNanos: now, destination: UInt16(part), message: message))
            }
        }
    }

    /// MIDI-learn: the next controller moved on any channel gets mapped to `target`.
    func learn(_ target: ControlTarget) {
        state.withLock { attached in
            guard attached != nil else { return }
            attached!.input.learn(attached!.router.beginLearning(target), arrivalNanos: monotonicNanoseconds())
        }
    }

    func cancelLearning() {
        state.withLock { attached in
            guard attached != nil else { return }
            attached!.router.endLearning()
            attached!.input.send(.command(.cancelLearning, arrivalNanos: monotonicNanoseconds()))
        }
    }

    /// The rig switches, EQ presets and retunes the router and the MIDI thread left for the control thread.
    func takePendingActions() -> [RigRouter.Action] {
        state.withLock { attached in
            guard attached != nil else { return [] }
            Self.drain(&attached!)
            defer { attached!.pendingActions.removeAll() }
            return attached!.pendingActions
        }
    }

    /// The transport messages (Start, Continue, Stop, Song Position) that came since the last call.
    func takeTransportMessages() -> [MIDIMessage] {
        state.withLock { attached in
            guard attached != nil else { return [] }
            defer { attached!.transportMessages.removeAll() }
            return attached!.transportMessages
        }
    }

    /// The rig being played, as the render thread's router last published it (nil: no rig attached). Any
    /// thread.
    var activeRig: Int? { state.withLock { $0?.router.activeRig } }

    /// The router's control side, up to date with what the render thread reported (nil: no rig attached).
    var router: RigRouter? {
        state.withLock { attached in
            guard attached != nil else { return nil }
            Self.drain(&attached!)
            return attached!.router
        }
    }

    // MARK: Helpers

    /// Takes the render thread's router actions into the pending ones (a learned mapping is remembered by
    /// the router as it is taken).
    private static func drain(_ attached: inout Attached) {
        for routed in attached.input.takeActions() {
            if let action = attached.router.action(for: routed) { attached.pendingActions.append(action) }
        }
    }

    /// Keeps `keysDown` for `source`: a key is down from its note-on to its note-off; all notes off (and
    /// the controllers that imply it) lift the channel's keys.
    private static func track(
        _ message: ChannelMessage, from source: MIDISource, in keysDown: inout [MIDISource: Set<UInt16>]
    ) {
        let key = UInt16(message.channel) << 7 | UInt16(message.data1)
        if message.isNoteOn {
            keysDown[source, default: []].insert(key)
        } else if message.isNoteOff {
            keysDown[source]?.remove(key)
        } else if message.isControlChange && (message.data1 == 120 || message.data1 >= 123) {
            keysDown[source]?.subtract((0..<128).map { UInt16(message.channel) << 7 | $0 })
        }
    }
}

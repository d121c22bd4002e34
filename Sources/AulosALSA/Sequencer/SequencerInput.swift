import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import CALSA
import Glibc
import Synchronization

/// Aulos as an ALSA sequencer client: a writable input port any program or keyboard can play, a readable
/// port echoing what arrives (for monitoring), automatic connection to keyboards as they are plugged in,
/// and release of the notes a keyboard held when it is unplugged.
///
/// The MIDI thread (its own, started by `start`) reads the sequencer and hands each event, with its arrival
/// time and source, to the `receiver`: a channel event straight from the event's fields as a
/// `ChannelMessage` (the shape it keeps all the way to the instrument's event list), a system event as a
/// `MIDIMessage`; it never touches audio units. When a source goes away (unplugged, disconnected, or the
/// input stopping), the receiver is told so it can release what that source held. Arrival
/// times come from the kernel: the input port timestamps every event with a sequencer queue's real time
/// on arrival, which this class maps onto CLOCK_MONOTONIC (the clock the I/O unit stamps slices with), so
/// how late the MIDI thread is scheduled does not matter.
///
/// Threads: create, `start`, `stop`, `takeNotices` on the control thread; the receiver is called on the MIDI
/// thread (and on the control thread by `stop`, for the releases).
public final class SequencerInput: @unchecked Sendable {
    public struct Options: Sendable {
        public var clientName = "Aulos"
        public var autoconnect = true
        public var requests: [ConnectionRequest] = []
        /// Re-send what arrives on the readable port.
        public var echo = true
        /// SCHED_FIFO priority of the MIDI thread (the ALSA I/O thread's default is 70).
        public var realtimePriority: Int32 = 65

        public init(
            clientName: String = "Aulos", autoconnect: Bool = true, requests: [ConnectionRequest] = [],
            echo: Bool = true
        ) {
            self.clientName = clientName
            self.autoconnect = autoconnect
            self.requests = requests
            self.echo = echo
        }
    }

    /// What happened to connections, for the control thread to report.
    public enum Notice: Equatable, Sendable {
        /// Started: where programs can play into Aulos, and how many ports it connected to by itself.
        case listening(SequencerAddress, connected: Int)
        case connected(SequencerPort)
        case connectFailed(SequencerPort, reason: String)
        case disconnected(SequencerPort, releasedNotes: Int)
        /// Another program subscribed to (or played into) our input port.
        case subscribed(SequencerAddress, name: String)
        /// The kernel's input buffer overflowed: events were lost (the MIDI thread fell behind). Posted at
        /// most once a second.
        case inputOverflow
    }

    public let client: Int
    public let inputPort: Int
    public let echoPort: Int
    public let options: Options

    private let handle: OpaquePointer
    private let decoder: OpaquePointer
    private let timestampQueue: Int32
    private let receiver: MIDIReceiver
    private let arrivals: ArrivalOrder
    private let running = Atomic<Bool>(false)
    private let worstReadDelay = Atomic<Int64>(0)
    private let noticeBox = Locked<[Notice]>([])
    private var thread: RealtimeThread?
    private var threadStarted = false
    // Owned by the MIDI thread while it runs (by the control thread before and after).
    private var connections: LiveConnections
    private var parser = MIDIParser()
    private var queueOffsetNanos: Int64 = 0
    private var lastOffsetUpdate: Int64 = 0
    private var lastOverflowNotice: Int64 = 0
    /// MIDI clock to send on the readable port (Aulos as clock master), set before `start`.
    private var clockOutput: MIDIClockOutput?
    /// Programs subscribed to our input port (the kernel announces a subscription both to System:Announce
    /// and to the port itself: report it once).
    private var subscribers: Set<SequencerAddress> = []

    /// Opens the sequencer and creates the ports. Throws a one-line error when there is no sequencer.
    public init(options: Options = Options(), receiver: MIDIReceiver) throws(SequencerError) {
        aulos_alsa_capture_errors()
        var opened: OpaquePointer?
        let status = aulos_seq_open(&opened, options.clientName)
        guard status >= 0, let opened else { throw SequencerError.unavailable(status) }
        handle = opened
        guard let decoder = aulos_seq_decoder_new() else {
            snd_seq_close(opened)
            throw SequencerError("cannot create an ALSA MIDI event decoder (out of memory?)")
        }
        self.decoder = decoder
        self.options = options
        self.receiver = receiver
        client = Int(snd_seq_client_id(opened))
        // A queue only to stamp arrivals; without one (a restricted sequencer) arrivals are stamped when read.
        timestampQueue = aulos_seq_start_timestamp_queue(opened)
        let input = aulos_seq_create_port(
            opened, "\(options.clientName) MIDI In", UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE),
            UInt32(
                SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_SYNTHESIZER | SND_SEQ_PORT_TYPE_SOFTWARE
                    | SND_SEQ_PORT_TYPE_APPLICATION),
            timestampQueue)
        let echo = aulos_seq_create_port(
            opened, "\(options.clientName) MIDI Out", UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ),
            UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION), -1)
        guard input >= 0, echo >= 0 else {
            snd_midi_event_free(decoder)
            snd_seq_close(opened)
            throw SequencerError(
                "cannot create the ALSA sequencer ports: \(String(cString: snd_strerror(min(input, echo))))")
        }
        inputPort = Int(input)
        echoPort = Int(echo)
        let ownPort = Int32(input)
        nonisolated(unsafe) let sequencer = opened
        let arrivals = ArrivalOrder()
        self.arrivals = arrivals
        connections = LiveConnections(
            manager: ConnectionManager(ownClient: client, autoconnect: options.autoconnect, requests: options.requests),
            connect: { port in
                aulos_seq_connect_from(sequencer, ownPort, Int32(port.address.client), Int32(port.address.port))
            },
            // Releases are stamped now, never before an event already delivered: placement relies on order.
            release: { source in receiver.sourceEnded(source.midiSource, arrivalNanos: arrivals.now()) })
        // System:Announce tells us about clients and ports coming and going (hot-plug).
        _ = aulos_seq_connect_from(
            opened, input, Int32(SequencerAddress.systemClient), Int32(SND_SEQ_PORT_SYSTEM_ANNOUNCE))
    }

    deinit {
        stop()
        snd_midi_event_free(decoder)
        snd_seq_close(handle)
    }

    /// Sends what `output` produces (MIDI clock, Start/Stop/Continue, Song Position) on the readable port,
    /// each scheduled on the sequencer queue for its host time. Call before `start`. The MIDI thread then
    /// wakes every 2 ms to pass ticks on well before they are due (the audio they belong to is rendered a
    /// buffer ahead).
    public func sendClock(from output: MIDIClockOutput) {
        precondition(!threadStarted, "sendClock before start")
        clockOutput = output
    }

    /// Whether the MIDI thread runs (between `start` and `stop`). Control thread.
    public var isStarted: Bool { threadStarted }

    /// Connects to the ports present now, then starts the MIDI thread.
    public func start() throws(SequencerError) {
        guard !threadStarted else { return }
        updateQueueOffset(now: monotonicNanoseconds())
        apply(connections.start(with: SequencerPort.list(handle)))
        post(
            .listening(
                SequencerAddress(client: client, port: inputPort), connected: connections.manager.connected.count))
        running.store(true, ordering: .releasing)
        // Real-time priority just below the audio thread's where allowed (as a2jmidid and JACK do): arrival
        // stamps come from the kernel, so this only matters for --lowest-latency and for the notes an
        // unplug releases. Refused, it runs at normal priority, quietly: the audio thread already warned.
        let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
            Unmanaged<SequencerInput>.fromOpaque(raw!).takeUnretainedValue().run()
            return nil
        }
        do {
            thread = try RealtimeThread.start(
                priority: options.realtimePriority, body, argument: Unmanaged.passUnretained(self).toOpaque())
        } catch {
            running.store(false, ordering: .releasing)
            throw SequencerError("cannot start the MIDI thread: \(error.message)")
        }
        threadStarted = true
    }

    /// Stops the MIDI thread and releases every note still held by any source (the receiver is told, on
    /// this thread).
    public func stop() {
        guard threadStarted else { return }
        running.store(false, ordering: .releasing)
        thread?.join()
        thread = nil
        threadStarted = false
        connections.endAll()
    }

    /// The longest an event waited between its kernel arrival stamp and the MIDI thread reading it (ns).
    public var worstReadDelayNanos: Int64 { worstReadDelay.load(ordering: .relaxed) }

    /// Notices since the last call (control thread).
    public func takeNotices() -> [Notice] {
        noticeBox.withLock { notices in
            defer { notices.removeAll() }
            return notices
        }
    }

    /// Addresses connected now (MIDI thread's view; for status and tests after `stop`).
    public var connectedPorts: [SequencerPort] {
        connections.manager.connected.values.sorted { $0.address < $1.address }
    }

    // MARK: MIDI thread

    private func run() {
        var input = AulosSeqInput()
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        while running.load(ordering: .acquiring) {
            // Wake at least every 100 ms to notice stop(), every 2 ms when sending clock.
            let ready = aulos_seq_wait(handle, clockOutput == nil ? 100 : 2)
            if let clockOutput { sendClock(clockOutput) }
            guard ready > 0 else { continue }
            while true {
                let status = bytes.withUnsafeMutableBufferPointer { buffer in
                    aulos_seq_read(
                        handle, decoder, &input, buffer.baseAddress, buffer.count, options.echo ? Int32(echoPort) : -1)
                }
                if status == 0 { break }
                if status == -ENOSPC {
                    let now = monotonicNanoseconds()
                    if now - lastOverflowNotice > 1_000_000_000 {
                        lastOverflowNotice = now
                        post(.inputOverflow)
                    }
                    continue
                }
                if status < 0 { break }
                process(input, bytes)
            }
        }
    }

    private func process(_ input: AulosSeqInput, _ bytes: [UInt8]) {
        switch input.kind {
        case AULOS_SEQ_CHANNEL, AULOS_SEQ_MIDI:
            let now = monotonicNanoseconds()
            if now - lastOffsetUpdate > 1_000_000_000 { updateQueueOffset(now: now) }
            let stamped = input.has_timestamp != 0 && timestampQueue >= 0 ? input.timestamp_ns + queueOffsetNanos : now
            // Never before an earlier event, nor in the future (a stale offset): placement relies on order.
            let arrival = arrivals.stamp(stamped, now: now)
            // How long the event waited for this thread: if that exceeds the placement's latency budget,
            // the event is late however good the clock is. Kept as a statistic to tell the two apart.
            if now - arrival > worstReadDelay.load(ordering: .relaxed) {
                worstReadDelay.store(now - arrival, ordering: .relaxed)
            }
            let source = SequencerAddress(client: Int(input.source_client), port: Int(input.source_port))
            if input.kind == AULOS_SEQ_CHANNEL {
                connections.played(from: source)
                for index in 0..<Int(input.channel_count) {
                    receiver.receive(input.channelMessage(index), from: source.midiSource, arrivalNanos: arrival)
                }
            } else if input.length > 0 {
                parser.reset()
                parser.parse(bytes[0..<Int(input.length)]) { message in
                    receiver.receive(system: message, from: source.midiSource, arrivalNanos: arrival)
                }
            }
        case AULOS_SEQ_PORT_START, AULOS_SEQ_PORT_CHANGE:
            var port = AulosSeqPort()
            guard aulos_seq_port(handle, input.client, input.port, &port) >= 0 else { return }
            apply(connections.portAppeared(SequencerPort(port)))
        case AULOS_SEQ_PORT_EXIT:
            apply(connections.portExited(SequencerAddress(client: Int(input.client), port: Int(input.port))))
        case AULOS_SEQ_CLIENT_EXIT:
            apply(connections.clientExited(Int(input.client)))
        case AULOS_SEQ_PORT_UNSUBSCRIBED where Int(input.dest_client) == client && Int(input.dest_port) == inputPort:
            let sender = SequencerAddress(client: Int(input.client), port: Int(input.port))
            subscribers.remove(sender)
            apply(connections.unsubscribed(sender))
        case AULOS_SEQ_PORT_SUBSCRIBED where Int(input.dest_client) == client && Int(input.dest_port) == inputPort:
            let sender = SequencerAddress(client: Int(input.client), port: Int(input.port))
            guard connections.manager.connected[sender] == nil, sender.client != SequencerAddress.systemClient,
                subscribers.insert(sender).inserted
            else { return }
            var port = AulosSeqPort()
            let name =
                aulos_seq_port(handle, input.client, input.port, &port) >= 0 ? SequencerPort(port).clientName : ""
            post(.subscribed(sender, name: name))
        default:
            return
        }
    }

    /// Posts the notices (releases already went to the receiver).
    private func apply(_ outcome: LiveConnections.Outcome) {
        for notice in outcome.notices { post(notice) }
    }

    /// Schedules every queued clock message on the timestamping queue at its host time (its queue time is
    /// the host time minus the queue's offset), or sends it at once without a queue.
    private func sendClock(_ output: MIDIClockOutput) {
        while let event = output.pop() {
            var bytes: [UInt8] = [event.status, event.data1, event.data2]
            let length = event.status == 0xF2 ? 3 : 1
            let queueTime = timestampQueue >= 0 ? event.hostNanos - queueOffsetNanos : 0
            _ = aulos_seq_send_at(handle, Int32(echoPort), timestampQueue, queueTime, &bytes, length)
        }
    }

    private func post(_ notice: Notice) { noticeBox.withLock { $0.append(notice) } }

    /// Measures the timestamp queue's offset from CLOCK_MONOTONIC, bracketing the query between two clock
    /// reads; a slow query (preempted) is ignored.
    private func updateQueueOffset(now: Int64) {
        lastOffsetUpdate = now
        guard timestampQueue >= 0 else { return }
        var queueTime: Int64 = 0
        let before = monotonicNanoseconds()
        guard aulos_seq_queue_time(handle, timestampQueue, &queueTime) >= 0 else { return }
        let after = monotonicNanoseconds()
        if after - before < 500_000 || queueOffsetNanos == 0 { queueOffsetNanos = (before + after) / 2 - queueTime }
    }
}

extension SequencerInput {
    /// Converts one sequencer event the way the MIDI thread does (channel events from their fields, system
    /// events through alsa-lib's decoder and our parser), as messages: for tests and tools. Nil for events
    /// that are not MIDI.
    public static func convert(_ event: snd_seq_event_t) -> [MIDIMessage]? {
        guard let decoder = aulos_seq_decoder_new() else { return nil }
        defer { snd_midi_event_free(decoder) }
        var event = event
        var input = AulosSeqInput()
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        bytes.withUnsafeMutableBufferPointer { aulos_seq_convert(decoder, &event, &input, $0.baseAddress, $0.count) }
        if input.kind == AULOS_SEQ_CHANNEL {
            return (0..<Int(input.channel_count)).map { input.channelMessage($0).message }
        }
        guard input.kind == AULOS_SEQ_MIDI, input.length > 0 else { return nil }
        var parser = MIDIParser()
        var messages: [MIDIMessage] = []
        parser.parse(bytes[0..<Int(input.length)]) { messages.append($0) }
        return messages
    }
}

extension AulosSeqInput {
    /// The `index`th channel message the shim read from the event's fields.
    func channelMessage(_ index: Int) -> ChannelMessage {
        let raw = withUnsafeBytes(of: channel) {
            $0.load(fromByteOffset: index * MemoryLayout<AulosChannelMessage>.stride, as: AulosChannelMessage.self)
        }
        return ChannelMessage(status: raw.status, data1: raw.data1, data2: raw.data2)
    }
}

/// Arrival stamps kept in order: never before the last one handed out, never in the future.
///
/// Threads: the MIDI thread (the control thread once it has stopped).
final class ArrivalOrder: @unchecked Sendable {
    private var last: Int64 = 0

    /// A kernel stamp (or the read time), clamped between the last stamp and `now`.
    func stamp(_ stamped: Int64, now: Int64) -> Int64 {
        last = min(max(stamped, last), now)
        return last
    }

    /// Now, or the last stamp if the clock reads earlier.
    func now() -> Int64 {
        last = max(monotonicNanoseconds(), last)
        return last
    }
}

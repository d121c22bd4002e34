import AulosCore
import AulosMIDI
import CALSA
import Synchronization
import Testing

@testable import AulosALSA

/// A sequencer event as a sending client builds it, converted the way the MIDI thread converts it.
func converted(_ type: snd_seq_event_type, channel: Int = 0, _ a: Int = 0, _ b: Int = 0, sysex: [UInt8] = [])
    -> [MIDIMessage]?
{
    var event = snd_seq_event_t()
    sysex.withUnsafeBytes {
        aulos_seq_make_event(
            &event, Int32(type.rawValue), Int32(channel), Int32(a), Int32(b), $0.baseAddress, UInt32($0.count))
    }
    return SequencerInput.convert(event)
}

@Suite struct SequencerEventConversionTests {
    @Test func channelMessages() {
        #expect(converted(SND_SEQ_EVENT_NOTEON, channel: 3, 60, 100) == [.noteOn(channel: 3, note: 60, velocity: 100)])
        #expect(converted(SND_SEQ_EVENT_NOTEON, channel: 3, 60, 0) == [.noteOn(channel: 3, note: 60, velocity: 0)])
        #expect(
            converted(SND_SEQ_EVENT_NOTEOFF, channel: 15, 127, 64) == [.noteOff(channel: 15, note: 127, velocity: 64)])
        #expect(
            converted(SND_SEQ_EVENT_KEYPRESS, channel: 1, 61, 33) == [.polyPressure(channel: 1, note: 61, pressure: 33)]
        )
        #expect(
            converted(SND_SEQ_EVENT_CONTROLLER, channel: 2, 64, 127) == [
                .controlChange(channel: 2, controller: 64, value: 127)
            ])
        #expect(converted(SND_SEQ_EVENT_PGMCHANGE, channel: 9, 0, 42) == [.programChange(channel: 9, program: 42)])
        #expect(converted(SND_SEQ_EVENT_CHANPRESS, channel: 4, 0, 99) == [.channelPressure(channel: 4, pressure: 99)])
        // The sequencer's bend is signed (−8192…8191); MIDI's is 0…16383 with 8192 centred.
        #expect(converted(SND_SEQ_EVENT_PITCHBEND, channel: 0, 0, -8192) == [.pitchBend(channel: 0, value: 0)])
        #expect(converted(SND_SEQ_EVENT_PITCHBEND, channel: 0, 0, 0) == [.pitchBend(channel: 0, value: 8192)])
        #expect(converted(SND_SEQ_EVENT_PITCHBEND, channel: 0, 0, 8191) == [.pitchBend(channel: 0, value: 16383)])
    }

    /// 14-bit controllers and (N)RPNs arrive as one sequencer event and become the MIDI controller sequence.
    @Test func compoundControllers() {
        #expect(
            converted(SND_SEQ_EVENT_CONTROL14, channel: 0, 7, 0x3FFF) == [
                .controlChange(channel: 0, controller: 7, value: 0x7F),
                .controlChange(channel: 0, controller: 39, value: 0x7F),
            ])
        #expect(
            converted(SND_SEQ_EVENT_REGPARAM, channel: 1, 0, 12 << 7) == [
                .controlChange(channel: 1, controller: 101, value: 0),
                .controlChange(channel: 1, controller: 100, value: 0),
                .controlChange(channel: 1, controller: 6, value: 12),
                .controlChange(channel: 1, controller: 38, value: 0),
            ])
        #expect(
            converted(SND_SEQ_EVENT_NONREGPARAM, channel: 1, 0x0105, 0x40)?.first
                == .controlChange(channel: 1, controller: 99, value: 2))
    }

    @Test func systemMessages() {
        #expect(converted(SND_SEQ_EVENT_SONGPOS, 0, 1000) == [.songPosition(1000)])
        #expect(converted(SND_SEQ_EVENT_SONGSEL, 0, 5) == [.songSelect(5)])
        #expect(converted(SND_SEQ_EVENT_QFRAME, 0, 0x35) == [.timeCodeQuarterFrame(0x35)])
        #expect(converted(SND_SEQ_EVENT_TUNE_REQUEST) == [.tuneRequest])
        #expect(converted(SND_SEQ_EVENT_CLOCK) == [.timingClock])
        #expect(converted(SND_SEQ_EVENT_START) == [.start])
        #expect(converted(SND_SEQ_EVENT_CONTINUE) == [.continue])
        #expect(converted(SND_SEQ_EVENT_STOP) == [.stop])
        #expect(converted(SND_SEQ_EVENT_SENSING) == [.activeSensing])
        #expect(converted(SND_SEQ_EVENT_RESET) == [.systemReset])
    }

    @Test func systemExclusive() {
        // MIDI Machine Control play (what HostTransport acts on), and a GM reset.
        #expect(
            converted(SND_SEQ_EVENT_SYSEX, sysex: [0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7]) == [
                .systemExclusive([0x7F, 0x7F, 0x06, 0x02])
            ])
        #expect(
            converted(SND_SEQ_EVENT_SYSEX, sysex: [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]) == [
                .systemExclusive([0x7E, 0x7F, 0x09, 0x01])
            ])
        let long = [0xF0] + (0..<5000).map { UInt8($0 % 128) } + [0xF7]
        #expect(converted(SND_SEQ_EVENT_SYSEX, sysex: long) == [.systemExclusive(Array(long[1..<5001]))])
    }

    /// Events that are not MIDI (queue control, echo, user data) are ignored, not misread.
    @Test func nonMIDIEventsAreIgnored() {
        #expect(converted(SND_SEQ_EVENT_ECHO) == nil)
        #expect(converted(SND_SEQ_EVENT_USR0) == nil)
        #expect(converted(SND_SEQ_EVENT_TEMPO) == nil)
    }

    /// Announcements, a channel event and the kernel's arrival stamp come through as they are.
    @Test func announcementsAndTimestamps() throws {
        let decoder = try #require(aulos_seq_decoder_new())
        defer { snd_midi_event_free(decoder) }
        var bytes = [UInt8](repeating: 0, count: 16)
        var event = snd_seq_event_t()
        var input = AulosSeqInput()
        event.type = UInt8(SND_SEQ_EVENT_PORT_START.rawValue)
        event.data.addr.client = 24
        event.data.addr.port = 1
        aulos_seq_convert(decoder, &event, &input, &bytes, bytes.count)
        #expect(input.kind == AULOS_SEQ_PORT_START && input.client == 24 && input.port == 1)
        event.type = UInt8(SND_SEQ_EVENT_CLIENT_EXIT.rawValue)
        aulos_seq_convert(decoder, &event, &input, &bytes, bytes.count)
        #expect(input.kind == AULOS_SEQ_CLIENT_EXIT && input.client == 24)
        event.type = UInt8(SND_SEQ_EVENT_PORT_UNSUBSCRIBED.rawValue)
        event.data.connect.sender = snd_seq_addr_t(client: 20, port: 0)
        event.data.connect.dest = snd_seq_addr_t(client: 128, port: 0)
        aulos_seq_convert(decoder, &event, &input, &bytes, bytes.count)
        #expect(input.kind == AULOS_SEQ_PORT_UNSUBSCRIBED && input.client == 20 && input.dest_client == 128)

        aulos_seq_make_event(&event, Int32(SND_SEQ_EVENT_NOTEON.rawValue), 0, 60, 90, nil, 0)
        event.flags = UInt8(SND_SEQ_TIME_STAMP_REAL | SND_SEQ_TIME_MODE_ABS)
        event.queue = 1
        event.time.time = snd_seq_real_time_t(tv_sec: 12, tv_nsec: 345_678_901)
        event.source = snd_seq_addr_t(client: 20, port: 0)
        aulos_seq_convert(decoder, &event, &input, &bytes, bytes.count)
        // A channel event becomes its channel message straight from the event's fields (no bytes).
        #expect(input.kind == AULOS_SEQ_CHANNEL && input.channel_count == 1)
        #expect(input.channelMessage(0) == .noteOn(channel: 0, note: 60, velocity: 90))
        #expect(input.has_timestamp == 1 && input.timestamp_ns == 12_345_678_901)
        #expect(input.source_client == 20)
    }
}

/// Ports as `aconnect -l` would show them on a machine with a USB keyboard.
enum Ports {
    static func port(
        _ client: Int, _ port: Int, _ clientName: String, _ portName: String, readable: Bool = true,
        kernel: Bool = true, midi: Bool = true
    ) -> SequencerPort {
        SequencerPort(
            address: SequencerAddress(client: client, port: port), clientName: clientName, portName: portName,
            isReadable: readable, isWritable: true, isKernelClient: kernel, isMIDI: midi)
    }
    static let announce = port(0, 1, "System", "Announce", midi: false)
    static let through = port(14, 0, "Midi Through", "Midi Through Port-0")
    static let keystation = port(20, 0, "Keystation 49 MK3", "Keystation 49 MK3 MIDI 1")
    static let keystationOut = port(20, 1, "Keystation 49 MK3", "Keystation 49 MK3 MIDI 2", readable: false)
    static let vmpk = port(130, 0, "VMPK Output", "out", kernel: false)
    static let own = port(128, 1, "Aulos", "Aulos MIDI Out", kernel: false)
    static let all = [announce, through, keystation, keystationOut, vmpk, own]

    /// The same keyboard re-plugged: same names, another client number.
    static func replugged(_ port: SequencerPort, client: Int) -> SequencerPort {
        var copy = port
        copy.address.client = client
        return copy
    }
}

@Suite struct SequencerConnectionTests {
    func connections(
        autoconnect: Bool = true, requests: [ConnectionRequest] = [], refusing: Set<Int> = [],
        release: @escaping @Sendable (SequencerAddress) -> Int = { _ in 0 }
    ) -> LiveConnections {
        LiveConnections(
            manager: ConnectionManager(ownClient: 128, autoconnect: autoconnect, requests: requests),
            connect: { port in refusing.contains(port.address.client) ? -EPERM : 0 }, release: release)
    }

    @Test func autoconnectTakesKeyboardsOnly() {
        var live = connections()
        let outcome = live.start(with: Ports.all)
        #expect(outcome.notices == [.connected(Ports.keystation)])
        #expect(live.manager.connected.keys.sorted() == [Ports.keystation.address])
    }

    @Test func noAutoconnectTakesNothingUnlessAsked() {
        var live = connections(autoconnect: false)
        #expect(live.start(with: Ports.all).notices.isEmpty)
        var asked = connections(
            autoconnect: false, requests: [.name("midi through"), .address(SequencerAddress(client: 130, port: 0))])
        #expect(asked.start(with: Ports.all).notices == [.connected(Ports.through), .connected(Ports.vmpk)])
    }

    /// Unplugged mid-chord: the receiver releases what the keyboard held, once (it says how many notes, and
    /// the notice says so); the exits that follow find nothing more; another source is left alone. (Which
    /// notes and pedals a release ends is the router's business: AulosRigTests.)
    @Test func unplugReleasesWhatTheKeyboardHeld() {
        let released = Mutex<[SequencerAddress]>([])
        var live = connections { source in
            released.withLock { $0.append(source) }
            return source == Ports.keystation.address ? 3 : 1
        }
        _ = live.start(with: Ports.all)
        live.played(from: Ports.keystation.address)
        live.played(from: Ports.vmpk.address)  // another source
        let gone = live.clientExited(20)
        #expect(gone.notices == [.disconnected(Ports.keystation, releasedNotes: 3)])
        #expect(live.clientExited(20).notices.isEmpty)  // the port exit that follows finds nothing
        #expect(live.portExited(Ports.keystation.address).notices.isEmpty)
        #expect(released.withLock { $0 } == [Ports.keystation.address], "released once")
        #expect(live.playing == [Ports.vmpk.address])
    }

    /// Appear, disappear, reappear under a new client number: connected again, by itself.
    @Test func aReplugIsConnectedAgain() {
        var live = connections()
        _ = live.start(with: Ports.all)
        _ = live.portExited(Ports.keystation.address)
        #expect(live.manager.connected.isEmpty)
        let back = Ports.replugged(Ports.keystation, client: 24)
        #expect(live.portAppeared(back).notices == [.connected(back)])
        #expect(live.portAppeared(back).notices.isEmpty)  // PORT_CHANGE of a connected port: nothing to do
    }

    /// Asked for by client:port, remembered by name: the re-plugged keyboard under client 24 is taken
    /// again even with auto-connect off, and a different device that now has client 20 is not.
    @Test func anAddressRequestIsRememberedByName() {
        var live = connections(autoconnect: false, requests: [ConnectionRequest(parsing: "20:0")])
        #expect(live.start(with: Ports.all).notices == [.connected(Ports.keystation)])
        _ = live.clientExited(20)
        let stranger = Ports.port(20, 0, "Launchkey Mini", "Launchkey Mini MIDI 1")
        #expect(live.portAppeared(stranger).notices.isEmpty)
        let back = Ports.replugged(Ports.keystation, client: 24)
        #expect(live.portAppeared(back).notices == [.connected(back)])
    }

    @Test func aNameRequestMatchesClientOrPortNameInAnyCase() {
        var live = connections(autoconnect: false, requests: [ConnectionRequest(parsing: "KEYSTATION")])
        #expect(live.start(with: Ports.all).notices == [.connected(Ports.keystation)])
        #expect(ConnectionRequest(parsing: "24") == .address(SequencerAddress(client: 24, port: 0)))
        #expect(ConnectionRequest(parsing: "Keystation 49") == .name("Keystation 49"))
    }

    /// A refused subscription is reported and retried when the port shows up again.
    @Test func aRefusedConnectionIsReportedNotRecorded() {
        var live = connections(refusing: [20])
        let outcome = live.start(with: Ports.all)
        guard case .connectFailed(let port, _) = outcome.notices.first else {
            Issue.record("\(outcome.notices)")
            return
        }
        #expect(port == Ports.keystation)
        #expect(live.manager.connected.isEmpty)
    }

    /// `aconnect -d` from us, or a program that played into us disconnecting: its notes stop too.
    @Test func unsubscribingReleasesNotes() {
        let released = Mutex<[SequencerAddress]>([])
        var live = connections { source in
            released.withLock { $0.append(source) }
            return 1
        }
        _ = live.start(with: Ports.all)
        live.played(from: Ports.keystation.address)
        let aplaymidi = SequencerAddress(client: 129, port: 0)
        live.played(from: aplaymidi)
        #expect(
            live.unsubscribed(Ports.keystation.address).notices == [.disconnected(Ports.keystation, releasedNotes: 1)])
        let outcome = live.unsubscribed(aplaymidi)
        #expect(outcome.notices.isEmpty)
        #expect(released.withLock { $0 } == [Ports.keystation.address, aplaymidi])
        #expect(
            live.unsubscribed(aplaymidi).notices.isEmpty && released.withLock { $0.count } == 2,
            "nothing held: nothing released")
    }
}

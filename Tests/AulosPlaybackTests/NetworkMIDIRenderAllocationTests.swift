import AulosCore
import AulosMIDI
import AulosNetworkMIDI
import AulosRig
import AulosTestSupport
import Glibc
import Synchronization
import Testing

@testable import AulosPlayback

/// Network MIDI flowing into a live rig: an `AppleMIDIHost` on loopback, its network thread handing each session's
/// notes and controllers to the live MIDI path (as `aulos play --network-midi` wires it), while the test thread
/// renders the rig slice after slice. The render thread allocates nothing, however the packets fall.
///
/// Threads: the test's renders (the counted thread); the host's network thread receives; a sender thread sends.
@Suite(.serialized) struct NetworkMIDIRenderAllocationTests {
    /// A UDP socket on 127.0.0.1 sending to the host's control port or data port (the next one up).
    final class Sender: @unchecked Sendable {
        let fd: Int32
        let hostPort: UInt16

        init(hostPort: UInt16) {
            fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            self.hostPort = hostPort
            var address = Self.loopback(port: 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }

        deinit { close(fd) }

        static func loopback(port: UInt16) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            address.sin_port = port.bigEndian
            return address
        }

        func send(_ bytes: [UInt8], toData: Bool) {
            var address = Self.loopback(port: toData ? hostPort + 1 : hostPort)
            _ = bytes.withUnsafeBytes { raw in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }

        /// The next session packet within a second.
        func receive() -> AppleMIDIPacket? {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 1_000) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 2048)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            return try? AppleMIDIPacket(parsing: Array(buffer[0..<count]))
        }
    }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Renders counted slices while `stream` sends (at least 4,000, and until it has finished), then says
    /// goodbye and renders until the session has ended (2 s at most) and 1,000 slices more. Returns the slices
    /// counted and those in which network events reached the parts (the stream flows while slices are counted).
    static func renderCounted(
        _ harness: RenderHarness, live: LiveMIDIInput, while finished: borrowing Atomic<Bool>,
        streamedBy stream: TestThread, goodbye: () -> Void, sessionsOpen: () -> Bool
    ) -> (slices: Int, withEvents: Int) {
        var (slices, withEvents) = (0, 0)
        while !finished.load(ordering: .acquiring) || slices < 4_000 {
            let before = live.deliveredCount
            harness.renderSlice(256, counting: true)
            slices += 1
            if live.deliveredCount != before { withEvents += 1 }
        }
        stream.join()
        goodbye()
        let deadline = now() + 2_000_000_000
        while sessionsOpen() && now() < deadline {
            harness.renderSlice(256, counting: true)
            slices += 1
        }
        for _ in 0..<1_000 { harness.renderSlice(256, counting: true) }
        return (slices + 1_000, withEvents)
    }

    @Test func renderingAllocatesNothingWhileNetworkMIDIFlows() throws {
        // The live path as `aulos play` has it (lowest latency: no device clock is needed offline).
        let (playback, live, path) = try LiveMIDIPathTests.livePath(capacity: 65_536)
        defer { playback.close() }
        let sockets = try AppleMIDISockets(AppleMIDIEndpoint(address: "127.0.0.1", port: 0))
        let host = AppleMIDIHost(sockets: sockets, receiver: path)
        try host.start()
        defer { host.stop() }
        let sender = Sender(hostPort: sockets.port)
        let ssrc: UInt32 = 0x5EED_0035
        for toData in [false, true] {  // IN on both ports, from one socket (a port pair is not required)
            let invitation = AppleMIDIPacket.invitation(AppleMIDIExchange(initiatorToken: 7, ssrc: ssrc, name: "test"))
            sender.send(invitation.bytes, toData: toData)
            guard case .accept = sender.receive() else {
                Issue.record("the host did not accept the session")
                return
            }
        }
        var sequence: UInt16 = 0
        func sendMIDI(_ messages: [MIDIMessage]) {
            let packet = RTPMIDIPacket(
                header: RTPHeader(sequenceNumber: sequence, timestamp: 0, ssrc: ssrc),
                commands: messages.map { RTPMIDITimedCommand(.message($0)) })
            sender.send(try! packet.encoded(), toData: true)
            sequence &+= 1
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        // Warm up, uncounted: the first notes of both parts, and the rig's first slices.
        sendMIDI([.noteOn(channel: 0, note: 40, velocity: 100), .noteOn(channel: 1, note: 72, velocity: 100)])
        for _ in 0..<200 { harness.renderSlice(256) }
        sendMIDI([.noteOff(channel: 0, note: 40, velocity: 0), .noteOff(channel: 1, note: 72, velocity: 0)])
        for _ in 0..<200 { harness.renderSlice(256) }
        let warmDelivered = live.deliveredCount
        #expect(warmDelivered >= 4, "the warm-up notes arrived: \(warmDelivered)")

        let packets = 2_000
        let finished = Atomic<Bool>(false)
        let stream = TestThread {
            for index in 0..<packets {
                let note = UInt8(36 + index % 60)
                sendMIDI([
                    .noteOn(channel: UInt8(index % 2), note: note, velocity: UInt8(40 + index % 80)),
                    .controlChange(channel: 1, controller: 1, value: UInt8(index % 128)),  // mapped in the rig
                    .controlChange(channel: UInt8(index % 2), controller: 64, value: index % 16 < 8 ? 127 : 0),
                    .pitchBend(channel: 1, value: UInt16(8192 + (index % 64) * 32)),
                    .noteOff(channel: UInt8(index % 2), note: note, velocity: 0),
                ])
                usleep(1_000)  // about 1 ms apart: the stream spans thousands of slices
            }
            finished.store(true, ordering: .releasing)
        }
        let (slices, slicesWithEvents) = Self.renderCounted(
            harness, live: live, while: finished, streamedBy: stream,
            goodbye: {
                // Whatever is still on its way, and the BY that ends the session and releases its notes.
                sender.send(AppleMIDIPacket.bye(AppleMIDIExchange(initiatorToken: 7, ssrc: ssrc)).bytes, toData: false)
            }, sessionsOpen: { !host.sessionStatuses.isEmpty })

        let status = try #require(host.takeNotices().last)
        let delivered = live.deliveredCount - warmDelivered
        print(
            "network MIDI while rendering: \(slices) slices counted (\(slicesWithEvents) with network events), "
                + "\(packets) packets sent, \(delivered) events "
                + "delivered, \(live.droppedCount) dropped, \(harness.allocations.allocations) allocations; \(status)")
        #expect(host.sessionStatuses.isEmpty, "BY ended the session")
        #expect(live.droppedCount == 0)
        #expect(delivered >= packets * 2, "the stream reached the parts while the slices were counted: \(delivered)")
        // The slices render as fast as the machine allows, so on a loaded one the events bunch into fewer of
        // them (98 seen beside three builds; ~640 when quiet): what matters is that many counted slices
        // delivered, not how many.
        #expect(slicesWithEvents >= 20, "events arrived in \(slicesWithEvents) of the counted slices")
        #expect(playback.activeVoices == 0, "no note left sounding")
        try expectNoAllocations(harness.allocations, "rendering with network MIDI flowing")
    }

    /// Network MIDI 2.0 into the same rig: UMP from a client on loopback through `NetworkMIDI2Host` and its decoder,
    /// MIDI 2.0 at full resolution — 16-bit velocities, a 32-bit controller mapped to a parameter, 32-bit pitch bend,
    /// per-note pitch bends and per-note controllers on one of two notes held on a channel (and their stand-ins when
    /// one note is left) — while the counted renders play it. Nothing allocates.
    @Test func renderingAllocatesNothingWhileNetworkMIDI2Flows() throws {
        let (playback, live, path) = try LiveMIDIPathTests.livePath(capacity: 65_536)
        defer { playback.close() }
        let host = NetworkMIDI2Host(socket: try NetworkMIDI2Socket(address: "127.0.0.1", port: 0), receiver: path)
        try host.start()
        defer { host.stop() }
        let client = MIDI2TestClient(hostPort: host.port)
        guard client.invite().first?.code == 0x10 else {
            Issue.record("the host did not accept the session")
            return
        }
        var sequence: UInt16 = 0
        func send(_ words: [UInt32]) {
            client.send(MIDI2TestClient.ump(sequence, words))
            sequence &+= 1
        }
        // MIDI 2.0 channel voice words (M2-104-UM §7.4): type 4, group 0, status · channel, two bytes, then the data.
        func note(_ on: Bool, _ channel: UInt32, _ key: UInt32, _ velocity: UInt32) -> [UInt32] {
            [(on ? 0x4090_0000 : 0x4080_0000) | channel << 16 | key << 8, velocity << 16]
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        // Warm up, uncounted: both parts' first notes, a per-note bend, and the rig's first slices.
        send(note(true, 0, 40, 0x8000) + note(true, 0, 72, 0xFFFF) + [0x4060_4800, 0x9000_0000])
        for _ in 0..<200 { harness.renderSlice(256) }
        send(note(false, 0, 40, 0) + note(false, 0, 72, 0))
        for _ in 0..<200 { harness.renderSlice(256) }
        let warmDelivered = live.deliveredCount
        #expect(warmDelivered >= 4, "the warm-up notes arrived: \(warmDelivered)")

        let datagrams = 2_000
        let finished = Atomic<Bool>(false)
        let stream = TestThread {
            for index in 0..<datagrams {
                let low = UInt32(36 + index % 20)  // the Bass part's keys
                let high = UInt32(60 + index % 30)  // the Lead part's
                let varying = UInt32(truncatingIfNeeded: index &* 2_654_435_761)
                send(
                    note(true, 0, low, varying >> 16) + note(true, 0, high, 0x4000 + UInt32(index))
                        + [0x40B0_0100, varying]  // CC 1, mapped to Lead.cutoff, at 32 bits
                        + [0x4060_0000 | high << 8, varying]  // per-note pitch bend on one of the two notes
                        + [0x4000_0000 | low << 8 | 74, varying]  // per-note brightness on the other
                        + [0x4000_0000 | high << 8 | 7, 0xC000_0000]  // per-note volume
                        + [0x40E1_0000, varying] + [0x40D1_0000, varying]  // pitch bend, pressure on channel 2
                        + note(false, 0, low, 0x1234)
                        + [0x4060_0000 | high << 8, 0x8000_0000]  // alone now: with its stand-in
                        + note(false, 0, high, 0))
                usleep(1_000)  // about 1 ms apart: the stream spans thousands of slices
            }
            finished.store(true, ordering: .releasing)
        }
        let (slices, slicesWithEvents) = Self.renderCounted(
            harness, live: live, while: finished, streamedBy: stream,
            goodbye: { client.send(MIDI2TestClient.command(0xF0, 1)) }, sessionsOpen: { !host.sessionStatuses.isEmpty })

        let delivered = live.deliveredCount - warmDelivered
        print(
            "network MIDI 2.0 while rendering: \(slices) slices counted (\(slicesWithEvents) with network events), "
                + "\(datagrams) datagrams sent, \(delivered) events delivered, \(live.droppedCount) dropped, "
                + "\(harness.allocations.allocations) allocations")
        #expect(host.sessionStatuses.isEmpty, "bye ended the session")
        #expect(live.droppedCount == 0)
        #expect(delivered >= datagrams * 8, "the stream reached the parts while the slices were counted: \(delivered)")
        #expect(slicesWithEvents >= 20, "events arrived in \(slicesWithEvents) of the counted slices")
        #expect(playback.activeVoices == 0, "no note left sounding")
        try expectNoAllocations(harness.allocations, "rendering with network MIDI 2.0 flowing")
    }
}

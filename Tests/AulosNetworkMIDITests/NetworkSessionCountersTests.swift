import AulosIO
import AulosMIDI
import Testing

@testable import AulosNetworkMIDI

/// What `aulos status` and the panel show of a session, as the network MIDI input reports it: the host's
/// counters for a session with a gap, a journal repair and clock exchanges, in the units the status uses.
/// Threads: the test's; the host runs its network thread.
@Suite(.serialized) struct NetworkSessionCountersTests {
    @Test func aSessionsCountersReachTheStatusInMilliseconds() throws {
        let receiver = RecordingReceiver()
        let host = try AppleMIDIHostTests.host(receiver)
        defer { host.stop() }
        let source = NetworkMIDISource(host)
        #expect(source.networkSessions == [], "no session yet, but a network input")
        let peer = LoopbackPeer(hostPort: host.sockets.port, ssrc: 0x5150_0001)
        #expect(peer.join(name: "Studio Mac"))
        // One clock exchange whose CK2 says 2 ms passed on the peer's clock between CK0 and CK2 (20 ticks).
        let t1 = peer.nowTicks
        peer.send(.clockSync(AppleMIDIClockSync(ssrc: peer.ssrc, count: 0, timestamp1: t1)), toData: true)
        guard case .clockSync(let answer) = peer.receive(fromData: true) else {
            Issue.record("no CK1")
            return
        }
        peer.send(
            .clockSync(
                AppleMIDIClockSync(
                    ssrc: peer.ssrc, count: 2, timestamp1: t1, timestamp2: answer.timestamp2, timestamp3: t1 + 20)),
            toData: true)
        #expect(receiver.wait { _ in host.sessionStatuses.first?.clockSamples == 1 })
        // Packets 0 and 2: 1 (the note-off) is lost; 2's journal repairs it.
        let ticks = UInt32(truncatingIfNeeded: peer.nowTicks)
        var journal = RecoveryJournalSender(firstSequence: 0)
        let noteOn = ChannelMessage.noteOn(channel: 0, note: 60, velocity: 100)
        peer.sendMIDI(
            [noteOn], sequence: 0, timestamp: ticks, journal: journal.journal(forSequence: 0, timestamp: ticks))
        journal.record(noteOn, sequence: 0, timestamp: ticks)
        journal.record(.noteOff(channel: 0, note: 60), sequence: 1, timestamp: ticks &+ 5)
        peer.sendMIDI(
            [.controlChange(channel: 0, controller: 1, value: 3)], sequence: 2, timestamp: ticks &+ 10,
            journal: journal.journal(forSequence: 2, timestamp: ticks &+ 10))
        #expect(receiver.wait { _ in host.sessionStatuses.first?.packets == 2 })
        let sessions = try #require(source.networkSessions)
        #expect(sessions.count == 1)
        let session = try #require(sessions.first)
        #expect(session.peerName == "Studio Mac")
        #expect(session.address == "127.0.0.1:\(AppleMIDIHostTests.port(of: peer.control))")
        #expect(session.kind == "AppleMIDI")
        #expect(session.packets == 2)
        #expect(session.lost == 1)
        #expect(session.repaired == 1)
        #expect(session.clockRoundTripMs == 2.0)
        let status = try #require(host.sessionStatuses.first)
        #expect(session.latencyMs == status.lastTransitMicros.map { Double($0) / 1000 })
        #expect(session.latencyMs != nil)
    }
}

import Testing

@testable import AulosNetworkMIDI

/// The initiator's state machine on a simulated clock: no sockets, the time and the peer's packets given by the
/// test, what it asks the host to do read back.
///
/// Threads: the test's.
@Suite struct AppleMIDIInvitationTests {
    static let second: Int64 = 1_000_000_000
    static let start: Int64 = 1_000 * second

    static func machine(now: Int64 = start) -> AppleMIDIInvitation {
        AppleMIDIInvitation(peer: "AppleMIDI 10.0.0.2:5004", ssrc: 0xA0A0_0001, name: "Aulos", sessionCap: 16, now: now)
    }

    /// What `actions` send on the control and data ports, and say.
    static func sent(_ actions: [AppleMIDIInvitation.Action]) -> (control: [AppleMIDIPacket], data: [AppleMIDIPacket]) {
        var control: [AppleMIDIPacket] = []
        var data: [AppleMIDIPacket] = []
        for action in actions {
            if case .sendControl(let packet) = action { control.append(packet) }
            if case .sendData(let packet) = action { data.append(packet) }
        }
        return (control, data)
    }

    static func notices(_ actions: [AppleMIDIInvitation.Action]) -> [String] {
        actions.compactMap { if case .notice(let text) = $0 { text } else { nil } }
    }

    static func isInvitation(_ packet: AppleMIDIPacket) -> Bool {
        if case .invitation = packet { true } else { false }
    }

    static func isBye(_ packet: AppleMIDIPacket) -> Bool {
        if case .bye = packet { true } else { false }
    }

    static func ok(_ token: UInt32, ssrc: UInt32 = 0xBEEF, name: String? = "stage Mac") -> AppleMIDIPacket {
        .accept(AppleMIDIExchange(initiatorToken: token, ssrc: ssrc, name: name))
    }

    /// Ticks every 100 ms from `from` to `to` (ns), collecting every action with its time.
    static func run(
        _ machine: inout AppleMIDIInvitation, from: Int64, to: Int64, hasRoom: Bool = true
    ) -> [(at: Int64, action: AppleMIDIInvitation.Action)] {
        var out: [(Int64, AppleMIDIInvitation.Action)] = []
        var now = from
        while now <= to {
            for action in machine.tick(now: now, hasRoom: hasRoom) { out.append((now, action)) }
            now += second / 10
        }
        return out
    }

    /// A peer that never answers: IN at 0, 1, 3, 7, 15, 31, 61, 91 s (the wait doubling from 1 s to 30 s), the same
    /// token each time, each repeat withdrawn with BY first, and the log told once.
    @Test func anUnansweredInvitationBacksOff() {
        var machine = Self.machine()
        let actions = Self.run(&machine, from: Self.start, to: Self.start + 100 * Self.second)
        let invitations = actions.filter {
            if case .sendControl(let packet) = $0.action { Self.isInvitation(packet) } else { false }
        }
        #expect(invitations.map { ($0.at - Self.start) / Self.second } == [0, 1, 3, 7, 15, 31, 61, 91])
        let tokens = Set(
            invitations.compactMap {
                if case .sendControl(.invitation(let exchange)) = $0.action { exchange.initiatorToken } else { nil }
            })
        #expect(tokens.count == 1)
        let byes = actions.filter { if case .sendControl(let packet) = $0.action { Self.isBye(packet) } else { false } }
        #expect(byes.count == 7)
        #expect(byes.map(\.at) == invitations.dropFirst().map(\.at))
        #expect(
            Self.notices(actions.map(\.action)) == [
                "does not answer the invitation on its control port; inviting again less often (up to every 30 s)"
            ])
        #expect(actions.allSatisfy { if case .sendData = $0.action { false } else { true } })
        #expect(machine.phase == .invitingControl)
        #expect(machine.retryNanos == 30 * Self.second)
    }

    /// NO is said with where it came from and when the next invitation goes, once while the peer keeps refusing;
    /// the invitation follows after the wait (1 s, then 2 s), and a peer that then accepts opens the session.
    @Test func aRefusalIsSaidAndRetried() throws {
        var machine = Self.machine()
        var now = Self.start
        let first = Self.sent(machine.tick(now: now, hasRoom: true)).control
        guard case .invitation(let invitation) = first.first else {
            Issue.record("no IN: \(first)")
            return
        }
        #expect(invitation.name == "Aulos" && invitation.ssrc == 0xA0A0_0001 && invitation.protocolVersion == 2)
        now += Self.second / 100
        let refused = machine.received(
            .reject(AppleMIDIExchange(initiatorToken: invitation.initiatorToken, ssrc: 9, name: "busy")), onData: false,
            now: now)
        #expect(
            Self.notices(refused) == [
                "declined the invitation (NO on its control port, as \"busy\"); it is invited again in 1 s, "
                    + "inviting again less often (up to every 30 s)"
            ])
        #expect(machine.phase == .waiting)
        // A NO with another token is not this invitation's.
        #expect(machine.tick(now: now + Self.second - 1, hasRoom: true).isEmpty)
        let again = Self.sent(machine.tick(now: now + Self.second, hasRoom: true)).control
        #expect(again.count == 1 && again.allSatisfy(Self.isInvitation))
        guard case .invitation(let second) = again.first else { return }
        now += Self.second
        // Refused again: not said again, and the wait is 2 s now.
        let refusedAgain = machine.received(
            .reject(AppleMIDIExchange(initiatorToken: second.initiatorToken, ssrc: 9)), onData: false, now: now)
        #expect(Self.notices(refusedAgain).isEmpty)
        #expect(machine.tick(now: now + 2 * Self.second - 1, hasRoom: true).isEmpty)
        let third = Self.sent(machine.tick(now: now + 2 * Self.second, hasRoom: true)).control
        guard case .invitation(let accepted) = third.first else {
            Issue.record("no third IN")
            return
        }
        now += 2 * Self.second
        // OK on the control port: IN on the data port, same token; a stray OK with another token changes nothing.
        #expect(machine.received(Self.ok(accepted.initiatorToken &+ 1), onData: false, now: now).isEmpty)
        let toData = Self.sent(machine.received(Self.ok(accepted.initiatorToken), onData: false, now: now))
        #expect(toData.data == [.invitation(accepted)] && toData.control.isEmpty)
        #expect(machine.phase == .invitingData)
        // OK on the data port: the session opens (the control port's name, the data port's SSRC); the first CK0 goes.
        let open = machine.received(
            Self.ok(accepted.initiatorToken, ssrc: 0xDA7A, name: "other"), onData: true, now: now + 1_000_000)
        #expect(open.first == .open(name: "stage Mac", ssrc: 0xDA7A))
        guard case .clockSync(let ck0) = Self.sent(open).data.first else {
            Issue.record("no CK0 at once: \(open)")
            return
        }
        #expect(ck0.count == 0 && ck0.ssrc == 0xA0A0_0001)
        #expect(machine.phase == .connected)
        #expect(machine.retryNanos == Self.second)
    }

    /// NO on the data port: the control port's half of the session is withdrawn (BY) before the wait.
    @Test func aRefusalOnTheDataPortWithdrawsTheControlPort() {
        var machine = Self.machine()
        guard case .sendControl(.invitation(let invitation)) = machine.tick(now: Self.start, hasRoom: true).first else {
            Issue.record("no IN")
            return
        }
        _ = machine.received(Self.ok(invitation.initiatorToken), onData: false, now: Self.start)
        let refused = machine.received(
            .reject(AppleMIDIExchange(initiatorToken: invitation.initiatorToken, ssrc: 9)), onData: true,
            now: Self.start)
        #expect(Self.sent(refused).control.allSatisfy(Self.isBye) && Self.sent(refused).control.count == 1)
        #expect(Self.notices(refused).first?.hasPrefix("declined the invitation (NO on its data port)") == true)
        #expect(machine.phase == .waiting && machine.nextAttemptNanos == Self.start + Self.second)
    }

    /// OK on the control port and silence on the data port: withdrawn after the wait (BY), said once, and invited
    /// again from the start after the next wait.
    @Test func anUnansweredDataPortIsWithdrawn() {
        var machine = Self.machine()
        guard case .sendControl(.invitation(let invitation)) = machine.tick(now: Self.start, hasRoom: true).first else {
            Issue.record("no IN")
            return
        }
        _ = machine.received(Self.ok(invitation.initiatorToken), onData: false, now: Self.start)
        let actions = Self.run(&machine, from: Self.start + Self.second / 10, to: Self.start + 3 * Self.second)
        #expect(
            Self.notices(actions.map(\.action)) == [
                "accepted the invitation on its control port but does not answer on its data port; inviting again "
                    + "less often (up to every 30 s)"
            ])
        let control = actions.compactMap {
            if case .sendControl(let packet) = $0.action { ($0.at, packet) } else { nil }
        }
        #expect(control.count == 2)
        #expect(control.first.map { Self.isBye($0.1) } == true && control.first?.0 == Self.start + Self.second)
        #expect(control.last.map { Self.isInvitation($0.1) } == true && control.last?.0 == Self.start + 2 * Self.second)
    }

    /// Connected: CK0 at once and twice more 250 ms apart, then every 10 s; each CK1 that answers the latest CK0 is
    /// answered with CK2 (t1 and t3 ours in 100 µs ticks, t2 the peer's) and becomes a sample of the clock model.
    @Test func theClockIsSynchronisedAsTheInitiator() throws {
        var machine = Self.machine()
        var now = Self.start
        let open = try Self.connect(&machine, at: now)
        var ck0Times: [Int64] = []
        if !Self.sent(open).data.isEmpty { ck0Times.append(now) }
        // The peer's clock runs 123,456 ticks ahead; each answer comes 2 ms (20 ticks) after the CK0.
        var samples: [AppleMIDIClockSample] = []
        while now < Self.start + 25 * Self.second {
            now += Self.second / 100
            for action in machine.tick(now: now, hasRoom: true) {
                guard case .sendData(.clockSync(let ck0)) = action else { continue }
                ck0Times.append(now)
                let answerAt = now + 2_000_000
                let ck1 = AppleMIDIClockSync(
                    ssrc: 0xDA7A, count: 1, timestamp1: ck0.timestamp1,
                    timestamp2: UInt64((now + 1_000_000) / 100_000) + 123_456)
                // A CK1 that answers another CK0 is not this exchange's.
                #expect(
                    machine.received(
                        .clockSync(AppleMIDIClockSync(ssrc: 0xDA7A, count: 1, timestamp1: ck0.timestamp1 &- 1)),
                        onData: true, now: answerAt
                    ).isEmpty)
                let answered = machine.received(.clockSync(ck1), onData: true, now: answerAt)
                #expect(
                    Self.sent(answered).data == [
                        .clockSync(
                            AppleMIDIClockSync(
                                ssrc: 0xA0A0_0001, count: 2, timestamp1: ck0.timestamp1, timestamp2: ck1.timestamp2,
                                timestamp3: UInt64(answerAt / 100_000)))
                    ])
                for case .clockSample(let sample) in answered { samples.append(sample) }
            }
        }
        // The CK0 sent at open time was not answered above: the first exchange is the second CK0's.
        let offsets = ck0Times.map { Double($0 - Self.start) / 1e9 }
        #expect(offsets == [0, 0.25, 0.5, 10.5, 20.5], "\(offsets)")
        #expect(samples.count == 4 && machine.syncsCompleted == 4)
        var model = AppleMIDIClockModel(role: .initiator)
        for sample in samples { model.add(sample) }
        #expect(samples.allSatisfy { $0.roundTripTicks == 20 })
        // Ours minus the peer's: −123,456 ticks, so the peer's time plus that is ours.
        #expect(model.peerToLocalTicks == -123_456)
    }

    /// Opens a session at `now`; the actions of the data port's OK.
    static func connect(_ machine: inout AppleMIDIInvitation, at now: Int64) throws -> [AppleMIDIInvitation.Action] {
        guard case .sendControl(.invitation(let invitation)) = machine.tick(now: now, hasRoom: true).first else {
            throw Failure("no IN")
        }
        _ = machine.received(ok(invitation.initiatorToken), onData: false, now: now)
        let open = machine.received(ok(invitation.initiatorToken, ssrc: 0xDA7A), onData: true, now: now)
        guard machine.phase == .connected else { throw Failure("not connected: \(open)") }
        return open
    }

    /// A step of a test that did not happen. Threads: a value.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ text: String) { description = text }
    }

    /// The peer's BY (the host ends the session): nothing said back, and a new invitation with a new token after
    /// 5 s; silence (the host ends it and asks for a goodbye): BY first.
    @Test func aSessionThatEndsIsInvitedAgain() throws {
        var machine = Self.machine()
        _ = try Self.connect(&machine, at: Self.start)
        let token = machine.token
        #expect(machine.ended(now: Self.start + Self.second, sayGoodbye: false).isEmpty)
        #expect(machine.phase == .waiting)
        let waiting = Self.run(&machine, from: Self.start + Self.second, to: Self.start + 6 * Self.second - 1)
        #expect(waiting.isEmpty)
        let again = Self.sent(machine.tick(now: Self.start + 6 * Self.second, hasRoom: true)).control
        guard case .invitation(let next) = again.first else {
            Issue.record("not invited again: \(again)")
            return
        }
        #expect(next.initiatorToken != token)
        _ = machine.received(Self.ok(next.initiatorToken), onData: false, now: Self.start + 6 * Self.second)
        _ = machine.received(Self.ok(next.initiatorToken), onData: true, now: Self.start + 6 * Self.second)
        #expect(machine.phase == .connected)
        let silent = machine.ended(now: Self.start + 40 * Self.second, sayGoodbye: true)
        #expect(
            Self.sent(silent).control == [.bye(AppleMIDIExchange(initiatorToken: machine.token, ssrc: 0xA0A0_0001))])
        // A peer's BY before its data port answered starts over too (no session to end yet).
        _ = Self.run(&machine, from: Self.start + 40 * Self.second, to: Self.start + 45 * Self.second)
        #expect(machine.phase == .invitingControl)
        _ = machine.received(Self.ok(machine.token), onData: false, now: Self.start + 45 * Self.second)
        _ = machine.received(
            .bye(AppleMIDIExchange(initiatorToken: 0, ssrc: 0xBEEF)), onData: false, now: Self.start + 46 * Self.second)
        #expect(machine.phase == .waiting)
    }

    /// Every session slot taken: nobody is invited, the log is told once, and the invitation goes when one frees.
    @Test func noInvitationWithoutRoom() {
        var machine = Self.machine()
        let full = Self.run(&machine, from: Self.start, to: Self.start + 60 * Self.second, hasRoom: false)
        #expect(
            full.map(\.action) == [
                .notice("is not invited: all 16 network MIDI sessions are taken; it is invited when one ends")
            ])
        let room = Self.sent(machine.tick(now: Self.start + 61 * Self.second, hasRoom: true))
        #expect(room.control.count == 1 && room.control.allSatisfy(Self.isInvitation))
    }

    /// Stopping says BY to a peer that accepted (half open or connected), nothing otherwise, and nothing after.
    @Test func stoppingSaysGoodbyeToAPeerThatAccepted() throws {
        var idle = Self.machine()
        #expect(idle.stop().isEmpty)
        #expect(idle.tick(now: Self.start, hasRoom: true).isEmpty)
        var half = Self.machine()
        guard case .sendControl(.invitation(let invitation)) = half.tick(now: Self.start, hasRoom: true).first else {
            Issue.record("no IN")
            return
        }
        _ = half.received(Self.ok(invitation.initiatorToken), onData: false, now: Self.start)
        #expect(Self.sent(half.stop()).control.count == 1)
        var connected = Self.machine()
        _ = try Self.connect(&connected, at: Self.start)
        #expect(Self.sent(connected.stop()).control.allSatisfy(Self.isBye))
        #expect(Self.run(&connected, from: Self.start, to: Self.start + 60 * Self.second).isEmpty)
    }
}

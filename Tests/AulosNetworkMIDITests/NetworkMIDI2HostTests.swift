import AulosCore
import AulosIO
import AulosMIDI
import AulosTestSupport
import Glibc
import Testing

@testable import AulosNetworkMIDI

@Suite(.serialized) struct NetworkMIDI2HostTests {
    private func host(_ configure: (inout NetworkMIDI2Host.Options) -> Void = { _ in }) throws
        -> (NetworkMIDI2Host, RecordingReceiver, MIDI2TestClient)
    {
        var options = NetworkMIDI2Host.Options()
        configure(&options)
        let receiver = RecordingReceiver()
        let host = NetworkMIDI2Host(
            socket: try NetworkMIDI2Socket(address: "127.0.0.1", port: 0), receiver: receiver, options: options)
        try host.start()
        return (host, receiver, MIDI2TestClient(hostPort: host.port))
    }

    private func notes(_ receiver: RecordingReceiver) -> [String] {
        receiver.deliveries.map { "\($0.message.isNoteOn ? "on" : "off") \($0.message.data1)" }
    }

    @Test func inviteAnswerPingsPlayNotesAndSayGoodbye() throws {
        let (host, receiver, client) = try host()
        defer { host.stop() }
        let accepted = client.invite()
        // Invitation Reply: Accepted, name "Aulos" (2 words: "Aulo" "s\0\0\0"), product id "aulos" (2 words).
        #expect(accepted.map(\.code) == [0x10])
        #expect(accepted.first?.specific == 0x0200)
        #expect(accepted.first?.payload == Array("Aulos\0\0\0aulos\0\0\0".utf8))
        client.send(MIDI2TestClient.command(0x20, 0, 0, MIDI2TestClient.word(0xCAFE_F00D)))
        #expect(client.receive() == [.init(code: 0x21, specific: 0, payload: MIDI2TestClient.word(0xCAFE_F00D))])
        client.send(MIDI2TestClient.ump(7, MIDI2TestClient.noteOn(60)))
        client.send(MIDI2TestClient.ump(8, MIDI2TestClient.noteOff(60)))
        _ = client.barrier()
        #expect(notes(receiver) == ["on 60", "off 60"])
        #expect(
            receiver.deliveries.first?.message == ChannelMessage(midi2: 0x90, data1: 60, data2: 127, wide: 0xFFFF))
        #expect(receiver.deliveries.first?.source == .network(0x8000))
        #expect(host.sessionStatuses.first?.peerName == "Test")
        client.send(MIDI2TestClient.command(0xF0, 1))
        #expect(client.receive().map(\.code) == [0xF1])
        #expect(receiver.wait { $0.ended.count == 1 })
        let notices = host.takeNotices()
        #expect(
            notices.contains(
                .connected(
                    NetworkMIDI2Host.portName(
                        .init(source: .network(0x8000), peerName: "Test", peer: "127.0.0.1:\(portOf(client.fd))")))))
        #expect(host.sessionStatuses.isEmpty)
    }

    @Test func aDroppedDatagramIsRecoveredFromTheNextOnesCopies() throws {
        let (host, receiver, client) = try host()
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        // The sender repeats its two previous UMP data commands in every datagram (FEC). The datagram carrying
        // sequence 1 (note on 62) is dropped; the next carries 0 and 1 again before 2.
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        // (dropped: ump(0) copy, ump(1, noteOn(62)))
        client.send(
            MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)), MIDI2TestClient.ump(1, MIDI2TestClient.noteOn(62)),
            MIDI2TestClient.ump(2, MIDI2TestClient.noteOff(60)))
        let answers = client.barrier()
        #expect(notes(receiver) == ["on 60", "on 62", "off 60"])
        #expect(!answers.contains { $0.code == 0x80 })  // nothing to ask for
        #expect(host.sessionStatuses.first?.duplicates == 1)
        #expect(host.sessionStatuses.first?.retransmitRequests == 0)
    }

    @Test func aGapNotCoveredByCopiesIsAskedForAndFilled() throws {
        let (host, receiver, client) = try host()
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(0xFFFF, MIDI2TestClient.noteOn(60)))
        // Sequence 0 (note off 60) is lost, 1 (note on 64) arrives: held back, 0 asked for.
        client.send(MIDI2TestClient.ump(1, MIDI2TestClient.noteOn(64)))
        let request = client.receive(until: 0x80).first { $0.code == 0x80 }
        // Retransmit Request: sequence 0 in the specific bytes; one command in the payload's high half.
        #expect(request == .init(code: 0x80, specific: 0, payload: [0, 1, 0, 0]))
        #expect(notes(receiver) == ["on 60"])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOff(60)))
        _ = client.barrier()
        #expect(notes(receiver) == ["on 60", "off 60", "on 64"])
        #expect(host.sessionStatuses.first?.recoveredByRetransmit == 1)
        #expect(receiver.ended.isEmpty)
        // As `aulos status` and the panel show it.
        let shown = NetworkMIDISource(host).networkSessions?.first
        #expect(shown?.kind == "Network MIDI 2.0" && shown?.peerName == "Test")
        #expect(shown?.packets == 3)
        #expect(shown?.lost == 0 && shown?.repaired == 1)
    }

    @Test func aGapTheSenderCannotFillEndsTheSessionsNotes() throws {
        let (host, receiver, client) = try host()
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        client.send(MIDI2TestClient.ump(2, MIDI2TestClient.noteOn(64)))  // 1 (note off 60) lost for good
        #expect(client.receive(until: 0x80).contains { $0.code == 0x80 })
        // Retransmit Error: reason 1 (no longer buffered), sequence 1.
        client.send(MIDI2TestClient.command(0x81, 1, 0, [0, 1, 0, 0]))
        _ = client.barrier()
        // Note 60's off never came: the session's notes were ended, then the held-back note on played.
        #expect(receiver.ended.map(\.0) == [.network(0x8000)])
        #expect(receiver.ended.first?.1 == 1)
        #expect(notes(receiver) == ["on 60", "on 64"])
        #expect(host.sessionStatuses.first?.lostCommands == 1)
    }

    @Test func aGapNobodyAnswersIsGivenUpAfterItsRequests() throws {
        let (host, receiver, client) = try host {
            $0.retransmitTimeoutNanos = 20_000_000
            $0.retransmitAttempts = 2
        }
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        client.send(MIDI2TestClient.ump(2, MIDI2TestClient.noteOn(64)))
        #expect(client.receive(until: 0x80).contains { $0.code == 0x80 })
        #expect(client.receive(until: 0x80).contains { $0.code == 0x80 })  // asked again
        #expect(receiver.wait { $0.ended.count == 1 })
        #expect(notes(receiver) == ["on 60", "on 64"])
        #expect(receiver.heldNotes == 1)  // 64, played after the gap; 60 ended
    }

    @Test func theSharedSecretAdmitsTheRightDigestOnly() throws {
        let (host, receiver, client) = try host { $0.secret = "s3cret" }
        defer { host.stop() }
        // A client that cannot authenticate is told so (BYE, no matching authentication method).
        #expect(client.invite(capabilities: 0).map(\.code) == [0xF0])
        // One that can gets "authentication required": name words 2, state 0, a 16-byte nonce first.
        let required = client.invite(capabilities: 1)
        #expect(required.map(\.code) == [0x12])
        #expect(required.first?.specific == 0x0200)
        let nonce = Array(required.first?.payload.prefix(16) ?? [])
        // UMP data before authenticating is refused (BYE, session not established).
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        #expect(client.receive().map(\.code) == [0xF0])
        // A wrong digest: asked again (state 1, a new nonce).
        client.send(MIDI2TestClient.command(0x02, 0, 0, SHA256.digest(nonce + Array("guess".utf8))))
        let again = client.receive()
        #expect(again.map(\.code) == [0x12])
        #expect(again.first?.specific == 0x0201)
        let second = Array(again.first?.payload.prefix(16) ?? [])
        #expect(second != nonce)
        // The right one: SHA-256 over the nonce then the secret.
        client.send(MIDI2TestClient.command(0x02, 0, 0, SHA256.digest(second + Array("s3cret".utf8))))
        #expect(client.receive().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        _ = client.barrier()
        #expect(notes(receiver) == ["on 60"])
    }

    @Test func wrongSecretsEndTheAttempt() throws {
        let (host, receiver, client) = try host { $0.secret = "s3cret" }
        defer { host.stop() }
        #expect(client.invite(capabilities: 1).map(\.code) == [0x12])
        for attempt in 0..<3 {
            client.send(MIDI2TestClient.command(0x02, 0, 0, [UInt8](repeating: 0, count: 32)))
            let answer = client.receive()
            #expect(answer.map(\.code) == (attempt < 2 ? [0x12] : [0xF0]), "attempt \(attempt)")
            if attempt == 2 { #expect(answer.first?.specific == 0x4300) }  // BYE: authentication failed
        }
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        #expect(client.receive().map(\.code) == [0xF0])
        #expect(receiver.deliveries.isEmpty)
        #expect(host.takeNotices().contains { if case .connectFailed = $0 { true } else { false } })
    }

    /// Invitation with User Authentication's payload: the digest, then the user name padded to whole words.
    private static func userAnswer(_ nonce: [UInt8], _ user: String, _ password: String) -> [UInt8] {
        var name = Array(user.utf8)
        while name.count % 4 != 0 { name.append(0) }
        return MIDI2TestClient.command(
            0x03, UInt8(name.count / 4), 0, SHA256.digest(nonce + Array(user.utf8) + Array(password.utf8)) + name)
    }

    @Test func userAccountsAdmitAKnownUserWithItsPasswordOnly() throws {
        let (host, receiver, client) = try host {
            $0.users = ["alice": "pw-1", "bob": "pw-2"]
            $0.secret = "s3cret"
        }
        defer { host.stop() }
        // A client that can name a user is asked for one (user authentication required, 0x13), not the secret.
        let required = client.invite(capabilities: 0x03)
        #expect(required.map(\.code) == [0x13])
        #expect(required.first?.specific == 0x0200)
        var nonce = Array(required.first?.payload.prefix(16) ?? [])
        // The secret's answer is not the method it was offered: NAK (not expected), still waiting.
        client.send(MIDI2TestClient.command(0x02, 0, 0, SHA256.digest(nonce + Array("s3cret".utf8))))
        #expect(client.receive().map(\.code) == [0x8F])
        // Another user's password, and a user nobody knows: asked again the same way (state 1, a new nonce), so an
        // answer never says which names exist.
        for (user, password) in [("alice", "pw-2"), ("carol", "pw-1")] {
            client.send(Self.userAnswer(nonce, user, password))
            let again = client.receive()
            #expect(again.map(\.code) == [0x13], "\(user)")
            #expect(again.first?.specific == 0x0201, "\(user)")
            let next = Array(again.first?.payload.prefix(16) ?? [])
            #expect(next != nonce)
            nonce = next
        }
        // The right one: SHA-256 over the nonce, the user name, then the password.
        client.send(Self.userAnswer(nonce, "bob", "pw-2"))
        #expect(client.receive().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        _ = client.barrier()
        #expect(notes(receiver) == ["on 60"])

        // A client that can answer only the secret is asked for it, beside the users.
        let other = MIDI2TestClient(hostPort: host.port)
        #expect(other.invite(capabilities: 0x01).map(\.code) == [0x12])
    }

    @Test func usersAloneRefuseAClientThatCannotNameOne() throws {
        let (host, receiver, client) = try host { $0.users = ["alice": "pw-1"] }
        defer { host.stop() }
        // The secret's method only, and no secret set: BYE, no matching authentication method.
        let refused = client.invite(capabilities: 0x01)
        #expect(refused.map(\.code) == [0xF0])
        #expect(refused.first?.specific == 0x4500)
        #expect(host.takeNotices().contains { if case .connectFailed = $0 { true } else { false } })
        // Three wrong passwords end the attempt: BYE, authentication failed.
        let again = MIDI2TestClient(hostPort: host.port)
        var nonce = Array(again.invite(capabilities: 0x02).first?.payload.prefix(16) ?? [])
        for attempt in 0..<3 {
            again.send(Self.userAnswer(nonce, "alice", "guess \(attempt)"))
            let answer = again.receive()
            #expect(answer.map(\.code) == (attempt < 2 ? [0x13] : [0xF0]), "attempt \(attempt)")
            if attempt == 2 { #expect(answer.first?.specific == 0x4300) }
            nonce = Array(answer.first?.payload.prefix(16) ?? [])
        }
        again.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        #expect(again.receive().map(\.code) == [0xF0])
        #expect(receiver.deliveries.isEmpty)
    }

    @Test func endpointDiscoveryIsAnsweredAsUMPData() throws {
        let (host, _, client) = try host { $0.name = "Stage" }
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        // Endpoint Discovery, UMP 1.1, filter: info and name.
        client.send(MIDI2TestClient.ump(0, [0xF000_0101, 0x0000_0005, 0, 0]))
        let answers = client.receive()
        #expect(answers.map(\.code) == [0xFF, 0xFF])
        #expect(answers.map(\.specific) == [0, 1])  // our own sequence numbers, one UMP per command
        #expect(
            answers.last?.payload == [0xF0, 0x03, 0x53, 0x74, 0x61, 0x67, 0x65, 0] + [UInt8](repeating: 0, count: 8))
    }

    /// What Aulos sends (stream answers) is kept: the two commands before a new one ride along as forward error
    /// correction, and a retransmit request is answered from the history, or with an error for what it lacks.
    @Test func itsOwnUMPDataIsProtectedAndResent() throws {
        let (host, _, client) = try host { $0.name = "Stage" }
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        let discovery: [UInt32] = [0xF000_0101, 0x0000_0005, 0, 0]
        client.send(MIDI2TestClient.ump(0, discovery))
        let first = client.receive()
        #expect(first.map(\.specific) == [0, 1])  // nothing sent before: no copies
        client.send(MIDI2TestClient.ump(1, discovery))
        let second = client.receive()
        try #require(first.count == 2 && second.count == 4, "\(first) \(second)")
        #expect(second.map(\.code) == [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(second.map(\.specific) == [0, 1, 2, 3])  // 0 and 1 again before the new 2 and 3
        #expect(second.prefix(2).map(\.payload) == first.map(\.payload))
        // Retransmit request (0x80): from 1, two commands; then from 2, all that is kept.
        client.send(MIDI2TestClient.command(0x80, 0, 1, MIDI2TestClient.word(2 << 16)))
        let resent = client.receive()
        #expect(resent.map(\.specific) == [1, 2])
        #expect(resent.map(\.payload) == [first[1].payload, second[2].payload])
        client.send(MIDI2TestClient.command(0x80, 0, 2, MIDI2TestClient.word(0)))
        #expect(client.receive().map(\.specific) == [2, 3])
        // A number never sent: retransmit error (0x81), reason 0, the number asked for.
        client.send(MIDI2TestClient.command(0x80, 0, 9, MIDI2TestClient.word(0)))
        let error = client.receive()
        #expect(error.map(\.code) == [0x81])
        #expect(error.first?.specific == 0x0000)
        #expect(error.first?.payload == MIDI2TestClient.word(9 << 16))
        // A session reset starts our numbers over: the old ones are gone.
        client.send(MIDI2TestClient.command(0x82))
        #expect(client.receive().map(\.code) == [0x83])
        client.send(MIDI2TestClient.command(0x80, 0, 0, MIDI2TestClient.word(0)))
        #expect(client.receive().map(\.code) == [0x81])
    }

    @Test func unknownAndMalformedCommandsAreRefusedWithNAK() throws {
        let (host, _, client) = try host()
        defer { host.stop() }
        client.send(MIDI2TestClient.command(0x55, 1, 2))
        // NAK: reason 1 (not supported), the refused header as the payload.
        #expect(client.receive() == [.init(code: 0x8F, specific: 0x0100, payload: [0x55, 0, 1, 2])])
        client.send(MIDI2TestClient.command(0x20))  // a ping without its id
        #expect(client.receive() == [.init(code: 0x8F, specific: 0x0300, payload: [0x20, 0, 0, 0])])
    }

    @Test func sessionResetStartsOverAndEndsNotes() throws {
        let (host, receiver, client) = try host()
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(40, MIDI2TestClient.noteOn(60)))
        client.send(MIDI2TestClient.command(0x82))
        #expect(client.receive().map(\.code) == [0x83])
        #expect(receiver.wait { $0.ended.count == 1 })
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(61)))  // sequence 0 again: not a copy
        _ = client.barrier()
        #expect(notes(receiver) == ["on 60", "on 61"])
    }

    @Test func aClientInvitingAgainStartsOver() throws {
        let (host, receiver, client) = try host()
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(500, MIDI2TestClient.noteOn(60)))
        _ = client.barrier()
        // Restarted on the same port: invites again and counts from 0, which is not a copy of an old command.
        #expect(client.invite().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(62)))
        _ = client.barrier()
        #expect(notes(receiver) == ["on 60", "on 62"])
        #expect(receiver.ended.first?.1 == 1)
    }

    @Test func stoppingSaysGoodbyeAndEndsNotes() throws {
        let (host, receiver, client) = try host()
        #expect(client.invite().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        _ = client.barrier()
        host.stop()
        #expect(client.receive().map(\.code) == [0xF0])
        #expect(receiver.ended.first?.1 == 1)
    }

    @Test func aSilentSessionEndsWithItsNotes() throws {
        let (host, receiver, client) = try host { $0.silenceTimeoutNanos = 100_000_000 }
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0x10])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        // BYE, reason 4 (timeout), once nothing has been heard for the silence timeout.
        #expect(client.receive(until: 0xF0).last == .init(code: 0xF0, specific: 0x0400, payload: []))
        #expect(receiver.wait { $0.ended.count == 1 })
        #expect(receiver.ended.first?.1 == 1)
        #expect(host.sessionStatuses.isEmpty)
    }

    @Test func aPeerOutsideTheAllowListIsRefused() throws {
        let (host, receiver, client) = try host { $0.allowList = [NetworkPrefix("10.0.0.0/8")!] }
        defer { host.stop() }
        #expect(client.invite().map(\.code) == [0xF0])
        client.send(MIDI2TestClient.ump(0, MIDI2TestClient.noteOn(60)))
        #expect(client.receive().map(\.code) == [0xF0])
        #expect(receiver.deliveries.isEmpty)
    }
}

/// The local port `fd` is bound to.
private func portOf(_ fd: Int32) -> UInt16 {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}

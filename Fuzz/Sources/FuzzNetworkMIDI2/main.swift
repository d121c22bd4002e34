// libFuzzer entry: any datagram through the Network MIDI 2.0 readers as the host reads it: the framing, each
// command's fields (what reads must build back and read again as the same command, but for texts cut at the
// name limit), and the UMP data commands through a sequence tracker (copies, gaps, giving up), the UMP decoder
// and the stream responder, as one session would take them.
import AulosNetworkMIDI
import FuzzSupport

/// The texts a command carries (a text with bad UTF-8 or near the limit may change when written again).
func texts(_ command: NetworkMIDI2Command) -> [String] {
    switch command {
    case .invitation(let name, let product, _), .invitationAccepted(let name, let product),
        .invitationPending(let name, let product):
        [name, product]
    case .authenticationRequired(_, _, let name, let product), .userAuthenticationRequired(_, _, let name, let product):
        [name, product]
    case .invitationWithUserAuthentication(_, let user): [user]
    case .nak(_, _, let text), .bye(_, let text): [text]
    default: []
    }
}

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let datagram = try? NetworkMIDI2Datagram(parsing: bytes) else { return 0 }
    precondition(datagram.bytes == bytes, "framing rewritten")
    var tracker = UMPSequenceTracker()
    var decoder = UMPDecoder()
    var responder = UMPStreamResponder(endpointName: "Aulos", productInstanceId: "fuzz")
    var events: [UMPEvent] = []
    for (index, packet) in datagram.packets.enumerated() {
        guard let command = try? NetworkMIDI2Command(packet) else { continue }
        let again = try? NetworkMIDI2Command(command.packet)
        let safe = texts(command).allSatisfy { $0.utf8.count < 250 && !$0.unicodeScalars.contains("\u{FFFD}") }
        precondition(!safe || again == command, "\(command) rewritten as \(String(describing: again))")
        guard case .umpData(let sequence, let words) = command else { continue }
        var outcome = tracker.receive(sequence, words, now: Int64(index))
        _ = tracker.requestNewGap(now: Int64(index))
        if index % 7 == 6 { outcome.deliver += tracker.tick(now: Int64(index) * 100, timeout: 50, attempts: 2).deliver }
        for delivered in outcome.deliver {
            for message in UMPMessage.wholeMessages(delivered[...]) { decoder.decode(message, into: &events) }
        }
        if outcome.gaveUp { decoder.reset() }
    }
    for event in events {
        if case .stream(let words) = event { _ = responder.answer(words) }
    }
    precondition(tracker.pending.count <= NetworkMIDILimits.maximumPendingUMPCommands, "held back beyond the limit")
    return 0
}

// libFuzzer entry: any datagram through both network MIDI readers, as the data port would hand it over (a
// session packet or an RTP-MIDI packet). Whatever reads must write back and read again as the same value
// (journals re-encode byte for byte; SysEx with Real-Time inside may grow past LEN's 12 bits, then the writer
// refuses), and every RTP-MIDI packet goes through a receiver after a loss, so its journal is applied.
import AulosNetworkMIDI
import FuzzSupport

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let packet = try? AppleMIDIPacket(parsing: bytes) {
        let again = try? AppleMIDIPacket(parsing: packet.bytes)
        switch (packet, again) {
        case (.invitation(let a), .invitation(let b)?), (.accept(let a), .accept(let b)?),
            (.reject(let a), .reject(let b)?),
            (.bye(let a), .bye(let b)?):
            // A name of bad UTF-8 reads as U+FFFD (3 bytes each) and may then be cut when written.
            precondition(a.initiatorToken == b.initiatorToken && a.ssrc == b.ssrc, "\(packet) rewritten as \(b)")
            precondition((a.name?.utf8.count ?? 0) > 255 || a.name == b.name, "name of \(packet) rewritten as \(b)")
        default:
            precondition(again == packet, "\(packet) rewritten as \(String(describing: again))")
        }
    }
    if var packet = try? RTPMIDIPacket(parsing: bytes) {
        var receiver = RTPMIDIReceiver(maximumSysExBytes: 1024)
        let previous = RTPHeader(sequenceNumber: packet.header.sequenceNumber &- 3, timestamp: 0, ssrc: 1)
        _ = receiver.receive(
            RTPMIDIPacket(
                header: previous, commands: [RTPMIDITimedCommand(.message(.noteOn(channel: 0, note: 60, velocity: 1)))])
        )
        _ = receiver.receive(packet)
        _ = receiver.releaseAll()
        if packet.journal == nil {
            packet.section.hasJournal = false
            packet.journalError = nil
        }
        if let written = try? packet.encoded() {
            let again = try? RTPMIDIPacket(parsing: written)
            precondition(again == packet, "\(packet) rewritten as \(String(describing: again))")
        }
    }
    return 0
}

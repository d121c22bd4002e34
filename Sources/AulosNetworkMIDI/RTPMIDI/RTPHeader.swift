/// The 12-byte RTP header (RFC 3550 §5.1) as RTP-MIDI sessions use it: version 2, payload type 0x61 (dynamic
/// 97, Apple's), a 16-bit sequence number, a 32-bit timestamp on the session's 10 kHz clock, and the SSRC.
///
/// Threads: a value.
public struct RTPHeader: Equatable, Sendable {
    /// RFC 6295 §2.1 asks for M = 1 when the command section is not empty, but Apple sends 0 and Windows'
    /// rtpMIDI ignores packets with 1 (rtpmidid's notes): receivers ignore it and Aulos sends 0.
    public var marker: Bool
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32

    /// Apple's dynamic payload type for RTP-MIDI.
    public static let appleMIDIPayloadType: UInt8 = 0x61

    public init(
        sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32, marker: Bool = false,
        payloadType: UInt8 = RTPHeader.appleMIDIPayloadType
    ) {
        self.marker = marker
        self.payloadType = payloadType & 0x7F
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
    }

    /// Reads the header, its CSRC list and extension (skipped: RTP-MIDI peers send none, but RFC 3550 allows
    /// them), and returns the payload's bounds: padding (P) is cut from the end.
    static func read(_ bytes: [UInt8]) throws(NetworkMIDIError) -> (header: RTPHeader, payload: Range<Int>) {
        var reader = WireReader(bytes)
        let first = try reader.byte("RTP version")
        guard first >> 6 == 2 else {
            throw .invalid(field: "RTP version", offset: 0, reason: "\(first >> 6), where RTP is version 2")
        }
        let second = try reader.byte("RTP payload type")
        let sequence = try reader.uint16("RTP sequence number")
        let timestamp = try reader.uint32("RTP timestamp")
        let ssrc = try reader.uint32("RTP SSRC")
        try reader.skip("RTP CSRC list", count: Int(first & 0x0F) * 4)
        if first & 0x10 != 0 {
            try reader.skip("RTP extension profile", count: 2)
            let words = try reader.uint16("RTP extension length")
            try reader.skip("RTP extension", count: Int(words) * 4)
        }
        var end = bytes.count
        if first & 0x20 != 0 {
            // The last byte counts the padding bytes, itself included.
            let padding = Int(bytes[end - 1])
            guard padding >= 1, padding <= end - reader.offset else {
                throw .invalid(field: "RTP padding", offset: end - 1, reason: "\(padding) bytes do not fit the packet")
            }
            end -= padding
        }
        let header = RTPHeader(
            sequenceNumber: sequence, timestamp: timestamp, ssrc: ssrc, marker: second & 0x80 != 0,
            payloadType: second & 0x7F)
        return (header, reader.offset..<end)
    }

    func append(to out: inout [UInt8]) {
        out.append(0x80)  // V = 2, no padding, no extension, no CSRC
        out.append((marker ? 0x80 : 0) | payloadType)
        out.appendBigEndian(sequenceNumber)
        out.appendBigEndian(timestamp)
        out.appendBigEndian(ssrc)
    }
}

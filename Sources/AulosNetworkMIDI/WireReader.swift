/// A bounds-checked big-endian reader over a datagram's bytes: every read either returns the value or throws
/// `NetworkMIDIError.truncated` naming the field, so a parser built on it cannot read past the end or trap.
///
/// Threads: a value.
struct WireReader {
    let bytes: [UInt8]
    /// The next byte to read.
    private(set) var offset: Int
    /// One past the last byte this reader may read (a sub-structure's LENGTH narrows it).
    let end: Int

    init(_ bytes: [UInt8], from offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var remaining: Int { max(0, end - offset) }
    var isAtEnd: Bool { offset >= end }

    mutating func byte(_ field: String) throws(NetworkMIDIError) -> UInt8 {
        guard offset < end else { throw .truncated(field: field, offset: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The next byte without consuming it.
    func peek(_ field: String) throws(NetworkMIDIError) -> UInt8 {
        guard offset < end else { throw .truncated(field: field, offset: offset) }
        return bytes[offset]
    }

    mutating func uint16(_ field: String) throws(NetworkMIDIError) -> UInt16 {
        UInt16(try unsigned(field, width: 2))
    }

    mutating func uint32(_ field: String) throws(NetworkMIDIError) -> UInt32 {
        UInt32(try unsigned(field, width: 4))
    }

    mutating func uint64(_ field: String) throws(NetworkMIDIError) -> UInt64 {
        try unsigned(field, width: 8)
    }

    mutating func bytes(_ field: String, count: Int) throws(NetworkMIDIError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw .truncated(field: field, offset: offset) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func skip(_ field: String, count: Int) throws(NetworkMIDIError) {
        _ = try bytes(field, count: count)
    }

    private mutating func unsigned(_ field: String, width: Int) throws(NetworkMIDIError) -> UInt64 {
        guard width <= remaining else { throw .truncated(field: field, offset: offset) }
        var value: UInt64 = 0
        for index in offset..<offset + width { value = value << 8 | UInt64(bytes[index]) }
        offset += width
        return value
    }
}

/// Big-endian appends for the encoders.
extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt16) {
        append(UInt8(value >> 8))
        append(UInt8(value & 0xFF))
    }

    mutating func appendBigEndian(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(value >> UInt32(shift) & 0xFF)) }
    }

    mutating func appendBigEndian(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(value >> UInt64(shift) & 0xFF)) }
    }
}

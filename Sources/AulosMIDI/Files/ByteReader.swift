/// Big-endian reading of a file's bytes with bounds checks: every read past `end` throws instead of trapping.
/// Positions are offsets into the whole file, so an error can name the byte a person finds with a hex dump.
///
/// Threads: a value, used by one reader at a time.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int
    /// Where reading stops: the end of the file, or of the chunk being read.
    var end: Int

    init(bytes: [UInt8], from position: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.position = position
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var remaining: Int { end - position }

    mutating func uint8() throws(MIDIFileError) -> UInt8 {
        guard position < end else { throw MIDIFileError("unexpected end of data") }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next byte without reading it, or nil at the end.
    func peek() -> UInt8? { position < end ? bytes[position] : nil }

    mutating func uint16() throws(MIDIFileError) -> UInt16 { UInt16(try uint8()) << 8 | UInt16(try uint8()) }

    mutating func uint32() throws(MIDIFileError) -> UInt32 { UInt32(try uint16()) << 16 | UInt32(try uint16()) }

    mutating func tag() throws(MIDIFileError) -> String { String(decoding: try bytes(4), as: UTF8.self) }

    mutating func bytes(_ count: Int) throws(MIDIFileError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw MIDIFileError("unexpected end of data") }
        defer { position += count }
        return Array(bytes[position..<(position + count)])
    }

    mutating func skip(_ count: Int) throws(MIDIFileError) { _ = try bytes(count) }

    /// The largest variable-length quantity the SMF spec allows: four bytes, 28 bits.
    static let largestVariableLength = 0x0FFF_FFFF

    /// A variable-length quantity of at most four bytes (28 bits), as the SMF spec allows. With
    /// `allowingOverlong`, a longer one is read to its last byte and its value held at 28 bits (a forgiving
    /// reader's choice: some writers pad with 0x80 bytes); `wasOverlong` says it happened.
    mutating func variableLength(allowingOverlong: Bool = false) throws(MIDIFileError) -> (
        value: Int, wasOverlong: Bool
    ) {
        var value = 0
        var count = 0
        while true {
            let byte = try uint8()
            count += 1
            value = min(value << 7 | Int(byte & 0x7F), Self.largestVariableLength + 1)
            if byte & 0x80 == 0 { break }
            if count == 4 && !allowingOverlong {
                throw MIDIFileError("variable-length quantity longer than 4 bytes")
            }
        }
        return (min(value, Self.largestVariableLength), count > 4)
    }
}

/// An Open Sound Control 1.0 message: an address pattern and typed arguments (int32 `i`, float32 `f`,
/// string `s`, blob `b`, and the argument-less `T`, `F`, `N`). A packet is a message or a bundle of them
/// (nested up to 8 deep; the time tag is read and ignored: everything is done on arrival).
///
/// Every reader has its limits: a packet of at most 8 KB, an address of at most 256 bytes, at most 64
/// arguments, at most 256 messages in a packet. Anything malformed — a string without its terminator,
/// padding missing, a type the reader does not know, a size beyond the packet — is an `OSCError` naming it.
///
/// Threads: a plain value; parsed on the OSC thread, answered on the control thread.
public struct OSCMessage: Equatable, Sendable {
    public enum Argument: Equatable, Sendable {
        case int(Int32)
        case float(Float)
        case string(String)
        case blob([UInt8])
        case bool(Bool)
        case null
    }

    public var address: String
    public var arguments: [Argument]

    public init(_ address: String, _ arguments: [Argument] = []) {
        self.address = address
        self.arguments = arguments
    }

    public static let packetLimit = 8192
    static let addressLimit = 256
    static let argumentLimit = 64
    static let messageLimit = 256
    static let bundleDepthLimit = 8

    /// Why a packet of `count` bytes is refused.
    static func oversized(_ count: Int) -> OSCError {
        OSCError("a packet of \(count) bytes is over the \(packetLimit)-byte limit")
    }

    /// The messages in one packet, in order (a bundle's flattened).
    public static func parse(_ bytes: [UInt8]) throws(OSCError) -> [OSCMessage] {
        guard bytes.count <= packetLimit else { throw oversized(bytes.count) }
        var messages: [OSCMessage] = []
        try parse(bytes[...], depth: 0, into: &messages)
        return messages
    }

    private static func parse(_ bytes: ArraySlice<UInt8>, depth: Int, into messages: inout [OSCMessage])
        throws(OSCError)
    {
        guard bytes.count % 4 == 0, !bytes.isEmpty else {
            throw OSCError("a packet's size must be a non-zero multiple of 4, not \(bytes.count)")
        }
        var reader = Reader(bytes: bytes)
        if bytes.first == UInt8(ascii: "#") {
            guard try reader.string() == "#bundle" else { throw OSCError("a '#' packet that is not a #bundle") }
            guard depth < bundleDepthLimit else { throw OSCError("bundles nested more than \(bundleDepthLimit) deep") }
            _ = try reader.take(8)  // the time tag
            while !reader.isAtEnd {
                let size = Int(try reader.int32())
                guard size > 0, size <= reader.remaining else {
                    throw OSCError("a bundle element of \(size) bytes where \(reader.remaining) remain")
                }
                try parse(try reader.take(size), depth: depth + 1, into: &messages)
            }
            return
        }
        guard messages.count < messageLimit else { throw OSCError("more than \(messageLimit) messages in a packet") }
        let address = try reader.string()
        guard address.hasPrefix("/"), address.utf8.count <= addressLimit else {
            throw OSCError("an address must start with '/' and be at most \(addressLimit) bytes")
        }
        var arguments: [Argument] = []
        if !reader.isAtEnd {
            let tags = try reader.string()
            guard tags.hasPrefix(",") else { throw OSCError("the type tags of \(address) do not start with ','") }
            guard tags.count - 1 <= argumentLimit else {
                throw OSCError("\(address) has more than \(argumentLimit) arguments")
            }
            for tag in tags.dropFirst() {
                switch tag {
                case "i": arguments.append(.int(try reader.int32()))
                case "f": arguments.append(.float(Float(bitPattern: UInt32(bitPattern: try reader.int32()))))
                case "s": arguments.append(.string(try reader.string()))
                case "b":
                    let size = Int(try reader.int32())
                    guard size >= 0, size <= reader.remaining else {
                        throw OSCError("a blob of \(size) bytes in \(address) where \(reader.remaining) remain")
                    }
                    arguments.append(.blob(Array(try reader.take(size))))
                    _ = try reader.take((4 - size % 4) % 4)
                case "T": arguments.append(.bool(true))
                case "F": arguments.append(.bool(false))
                case "N": arguments.append(.null)
                default: throw OSCError("\(address): argument type '\(tag)' is not one Aulos reads (i f s b T F N)")
                }
            }
        }
        guard reader.isAtEnd else { throw OSCError("\(address) has bytes after its arguments") }
        messages.append(OSCMessage(address, arguments))
    }

    /// The message as a packet.
    public func encoded() -> [UInt8] {
        var bytes = Self.padded(Array(address.utf8))
        var tags = ","
        var data: [UInt8] = []
        for argument in arguments {
            switch argument {
            case .int(let value):
                tags += "i"
                data += Self.bigEndian(UInt32(bitPattern: value))
            case .float(let value):
                tags += "f"
                data += Self.bigEndian(value.bitPattern)
            case .string(let value):
                tags += "s"
                data += Self.padded(Array(value.utf8))
            case .blob(let value):
                tags += "b"
                data +=
                    Self.bigEndian(UInt32(value.count)) + value
                    + [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
            case .bool(let value): tags += value ? "T" : "F"
            case .null: tags += "N"
            }
        }
        bytes += Self.padded(Array(tags.utf8)) + data
        return bytes
    }

    /// A string's bytes, its terminator and zeros to a multiple of four.
    static func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: 4 - bytes.count % 4) }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// Reads a packet's fields in order, every read checked against what remains.
    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var position: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        var remaining: Int { bytes.endIndex - position }
        var isAtEnd: Bool { position >= bytes.endIndex }

        mutating func take(_ count: Int) throws(OSCError) -> ArraySlice<UInt8> {
            guard count >= 0, count <= remaining else { throw OSCError("a field runs past the end of the packet") }
            defer { position += count }
            return bytes[position..<(position + count)]
        }

        mutating func int32() throws(OSCError) -> Int32 {
            let field = try take(4)
            return Int32(bitPattern: field.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }

        /// A NUL-terminated string padded to four bytes; UTF-8 (invalid bytes are replaced).
        mutating func string() throws(OSCError) -> String {
            guard let end = bytes[position...].firstIndex(of: 0) else { throw OSCError("a string without its end") }
            let text = String(decoding: bytes[position..<end], as: UTF8.self)
            let length = end - position + 1
            let padding = (4 - length % 4) % 4
            guard length + padding <= remaining else { throw OSCError("a string's padding runs past the packet") }
            guard bytes[(end + 1)..<(end + 1 + padding)].allSatisfy({ $0 == 0 }) else {
                throw OSCError("a string padded with something other than zeros")
            }
            position = end + 1 + padding
            return text
        }
    }
}

/// A malformed OSC packet or a request Aulos cannot carry out, in one line.
public struct OSCError: Error, Equatable, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

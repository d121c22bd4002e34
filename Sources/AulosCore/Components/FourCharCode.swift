/// A Core Audio four-character code (OSType): four ASCII bytes packed big-endian into a UInt32.
///
/// Threads: a plain value, usable anywhere. `0` is the wildcard in component matching.
public struct FourCharCode: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Parses exactly four printable ASCII characters; returns nil otherwise.
    public init?(string text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        rawValue = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    public init(stringLiteral value: String) {
        guard let code = FourCharCode(string: value) else {
            preconditionFailure("'\(value)' is not a four-character ASCII code")
        }
        self = code
    }

    public static let any = FourCharCode(rawValue: 0)

    public var isWildcard: Bool { rawValue == 0 }

    /// The four characters, or the hex value when they are not printable (as Core Audio's tools print them).
    public var description: String {
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: rawValue >> UInt32($0)) }
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "0x" + String(rawValue, radix: 16, uppercase: false)
    }

    public static func < (lhs: FourCharCode, rhs: FourCharCode) -> Bool { lhs.rawValue < rhs.rawValue }
}

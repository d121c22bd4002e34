/// Why a datagram was not read as a network MIDI packet. Each case's `description` is one line that names the
/// packet part and the offset, so a session's log says what a peer sent wrong without a hex dump.
///
/// Threads: a value.
public enum NetworkMIDIError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes end before the field `field` (which starts at `offset`) is whole.
    case truncated(field: String, offset: Int)
    /// A field holds a value the format does not allow.
    case invalid(field: String, offset: Int, reason: String)
    /// The input is larger than a limit in `NetworkMIDILimits` allows.
    case tooLarge(what: String, limit: Int)

    public var description: String {
        switch self {
        case .truncated(let field, let offset): "truncated: \(field) at byte \(offset) is cut off"
        case .invalid(let field, let offset, let reason): "invalid \(field) at byte \(offset): \(reason)"
        case .tooLarge(let what, let limit): "too large: \(what) exceeds the limit of \(limit)"
        }
    }
}

/// How a Standard MIDI File is read.
public enum MIDIFileReading: Sendable {
    /// As a player reads: what deviates from the specification is read past, the way other players do, and
    /// reported as a recovery. A file the strict reader accepts is read exactly as the strict reader reads it.
    case forgiving
    /// As a validator reads: the first deviation is an error naming the track and byte.
    case strict
}

/// What a forgiving read of a MIDI file did to get past deviations from the specification, counted so each
/// kind is reported once: "track 1, byte 188: skipped illegal system message 0xF1 (×3)".
///
/// Threads: a value.
public struct MIDIFileRecoveries: Equatable, Sendable {
    /// One kind of recovery in one track (or the header, when `track` is nil), where it first happened,
    /// what it was done to (the status bytes skipped, say) and how often.
    public struct Recovery: Equatable, Sendable {
        public var track: Int?
        /// The file offset just past the first byte that needed it, as in the strict reader's errors.
        public var byte: Int
        public var what: String
        /// Distinct details in the order met ("0xF1", "0xF2"), at most `detailLimit`.
        public var details: [String]
        public var count: Int

        static let detailLimit = 16

        /// "track 1, byte 188: skipped illegal system message 0xF1 (×3)"
        public var description: String {
            let place = track.map { "track \($0 + 1), byte \(byte)" } ?? "byte \(byte)"
            let detail = details.isEmpty ? "" : " " + details.joined(separator: ", ")
            return "\(place): \(what)\(detail)" + (count > 1 ? " (×\(count))" : "")
        }
    }

    /// In the order first met.
    public private(set) var all: [Recovery] = []
    private var index: [Key: Int] = [:]

    private struct Key: Hashable {
        var track: Int?
        var what: String
    }

    public init() {}

    public var isEmpty: Bool { all.isEmpty }

    mutating func note(_ what: String, detail: String? = nil, track: Int?, byte: Int) {
        let key = Key(track: track, what: what)
        let details = detail.map { [$0] } ?? []
        guard let existing = index[key] else {
            index[key] = all.count
            all.append(Recovery(track: track, byte: byte, what: what, details: details, count: 1))
            return
        }
        all[existing].count += 1
        if let detail, all[existing].details.count < Recovery.detailLimit, !all[existing].details.contains(detail) {
            all[existing].details.append(detail)
        }
    }

    /// The recoveries as summary lines, at most `limit` of them and then how many more (a file of 65,535
    /// broken tracks must not print 65,535 lines).
    public func lines(limit: Int = 8) -> [String] {
        guard all.count > limit else { return all.map(\.description) }
        return all.prefix(limit).map(\.description) + [
            "… and \(all.count - limit) more (aulos check FILE lists them all)"
        ]
    }
}

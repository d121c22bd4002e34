/// What DNS-SD accepts as a service's instance name and type, checked before Avahi sees them: an instance name
/// is one DNS label (at most 63 bytes of UTF-8), a type is `_name._udp` or `_name._tcp` (RFC 6763 §4.1, §7).
/// Threads: pure functions.
public enum DNSServiceName {
    /// The longest instance name, in bytes.
    public static let maximumNameBytes = 63

    /// The network MIDI service types: AppleMIDI (RTP-MIDI) and Network MIDI 2.0.
    public static let appleMIDI = "_apple-midi._udp"
    public static let networkMIDI2 = "_midi2._udp"

    /// `name` cut to what one DNS label holds, at a character's boundary; empty (or only spaces) is "Aulos".
    public static func instanceName(_ name: String) -> String {
        let trimmed = name.trimmingSpaces
        guard !trimmed.isEmpty else { return "Aulos" }
        var kept = ""
        var bytes = 0
        for character in trimmed {
            let size = String(character).utf8.count
            guard bytes + size <= maximumNameBytes else { break }
            kept.append(character)
            bytes += size
        }
        return kept.trimmingSpaces
    }

    /// Whether `type` is a service type Avahi can publish: `_` and 1–15 letters, digits and hyphens (not at
    /// either end), then `._udp` or `._tcp`.
    public static func isValidType(_ type: String) -> Bool {
        let parts = type.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1] == "_udp" || parts[1] == "_tcp" else { return false }
        let label = parts[0]
        guard label.first == "_" else { return false }
        let name = label.dropFirst()
        guard (1...15).contains(name.count), name.first != "-", name.last != "-" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}

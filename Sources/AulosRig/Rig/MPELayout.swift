/// A synth part's MPE zones, as a rig writes them: `lower` (15 member channels, manager channel 1), `upper`
/// (manager channel 16), `lower 7, upper 7`, or `off`.
public struct MPELayout: Equatable, Sendable {
    /// Member channels of each zone (0: the zone is off).
    public var lower: Int
    public var upper: Int

    public init(lower: Int, upper: Int) {
        (self.lower, self.upper) = (lower, upper)
    }

    /// Reads the rig's (or the command line's) text, or says what is wrong with it.
    public static func parse(_ text: String) -> Result<MPELayout, RigError> {
        var layout = MPELayout(lower: 0, upper: 0)
        let terms = text.lowercased().split(separator: ",").map { $0.split(separator: " ") }
        guard text.lowercased() != "off" else { return .success(layout) }
        for words in terms {
            guard let zone = words.first, zone == "lower" || zone == "upper", words.count <= 2,
                let members = words.count == 2 ? Int(words[1]) : 15, (1...15).contains(members)
            else {
                let expected = "lower, upper, 'lower 7, upper 7' with 1…15 members, off"
                return .failure(RigError("'\(text)' is not an MPE layout (\(expected))"))
            }
            if zone == "lower" { layout.lower = members } else { layout.upper = members }
        }
        guard layout.lower == 0 || layout.upper == 0 || layout.lower + layout.upper <= 14 else {
            return .failure(
                RigError(
                    "MPE zones of \(layout.lower) and \(layout.upper) member channels overlap (at most 14 together)"))
        }
        return .success(layout)
    }

    /// As the rig writes it.
    public var text: String {
        let zones = [lower > 0 ? "lower \(lower)" : nil, upper > 0 ? "upper \(upper)" : nil].compactMap { $0 }
        return zones.isEmpty ? "off" : zones.joined(separator: ", ")
    }
}

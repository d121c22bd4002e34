/// Core Audio's AudioComponentDescription: identifies a kind of audio unit by type, subtype and
/// manufacturer. A zero field is a wildcard when the description is used to search.
///
/// Threads: a plain value, usable anywhere.
public struct ComponentDescription: Hashable, Sendable, CustomStringConvertible {
    public var type: FourCharCode
    public var subtype: FourCharCode
    public var manufacturer: FourCharCode
    /// Reserved, as in Core Audio: must be 0 (`flags & flagsMask` must match when searching).
    public var flags: UInt32
    public var flagsMask: UInt32

    public init(
        type: FourCharCode, subtype: FourCharCode = .any, manufacturer: FourCharCode = .any,
        flags: UInt32 = 0, flagsMask: UInt32 = 0
    ) {
        self.type = type
        self.subtype = subtype
        self.manufacturer = manufacturer
        self.flags = flags
        self.flagsMask = flagsMask
    }

    /// Matches every component (Core Audio's all-zero description).
    public static let any = ComponentDescription(type: .any)

    /// Whether `self`, read as a search pattern with zero fields as wildcards, matches a concrete description.
    public func matches(_ concrete: ComponentDescription) -> Bool {
        (type.isWildcard || type == concrete.type)
            && (subtype.isWildcard || subtype == concrete.subtype)
            && (manufacturer.isWildcard || manufacturer == concrete.manufacturer)
            && (concrete.flags & flagsMask) == (flags & flagsMask)
    }

    /// `type/subtype/manufacturer`, e.g. `auou/genr/appl`.
    public var description: String { "\(type)/\(subtype)/\(manufacturer)" }

    /// Parses `type/subtype/manufacturer`; a missing or `*`/`0` part is a wildcard.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard (1...3).contains(parts.count) else { return nil }
        var codes: [FourCharCode] = []
        for part in parts {
            if part == "*" || part == "0" || part.isEmpty {
                codes.append(.any)
            } else if let code = FourCharCode(string: part) {
                codes.append(code)
            } else {
                return nil
            }
        }
        while codes.count < 3 { codes.append(.any) }
        self.init(type: codes[0], subtype: codes[1], manufacturer: codes[2])
    }
}

extension FourCharCode {
    // Unit types (Core Audio's kAudioUnitType_*).
    public static let output: FourCharCode = "auou"
    public static let musicDevice: FourCharCode = "aumu"
    public static let generator: FourCharCode = "augn"
    public static let effect: FourCharCode = "aufx"
    /// A unit that takes MIDI and processes it (Core Audio's kAudioUnitType_MusicEffect).
    public static let musicEffect: FourCharCode = "aumf"
    public static let mixer: FourCharCode = "aumx"
    public static let formatConverter: FourCharCode = "aufc"

    // Subtypes of the units carried over from Core Audio.
    public static let genericOutput: FourCharCode = "genr"
    public static let remoteIO: FourCharCode = "rioc"
    public static let auConverter: FourCharCode = "conv"
    public static let multiChannelMixer: FourCharCode = "mcmx"
    public static let iPodEQ: FourCharCode = "ipeq"

    /// Core Audio's kAudioUnitManufacturer_Apple: the manufacturer in the Core Audio descriptions that
    /// Aulos's reimplementations answer to as aliases.
    public static let apple: FourCharCode = "appl"
    /// The manufacturer code of every unit Aulos wrote.
    public static let aulos: FourCharCode = "Auls"

    /// Linear PCM, the only format ID audio units process.
    public static let linearPCM: FourCharCode = "lpcm"
}

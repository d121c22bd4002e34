// The vocabulary of an SFZ file as written: where something is, the headers, and an opcode with its value.

/// A place in an SFZ file, printed as `file:line` at the start of every error and warning.
///
/// Threads: a value.
public struct SFZLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file as the library names it: the root folder as given, then the path inside it.
    public var file: String
    /// From 1.
    public var line: Int

    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    public var description: String { "\(file):\(line)" }
}

/// The headers SFZ v2 (ARIA) defines that this parser knows, in order of inheritance: a region inherits from
/// its group, master, global and control; a new header of a level resets the levels below it.
///
/// Threads: a value.
public enum SFZHeader: String, Sendable, CaseIterable {
    case control, global, master, group, region, curve, effect

    /// Inheritance level (0 control … 4 region); curve and effect stand outside the chain.
    var level: Int? {
        switch self {
        case .control: 0
        case .global: 1
        case .master: 2
        case .group: 3
        case .region: 4
        case .curve, .effect: nil
        }
    }
}

/// One `name=value` as written, after `#define` substitution, with where it was written.
///
/// Threads: a value.
public struct SFZOpcode: Sendable, Hashable {
    public var name: String
    public var value: String
    public var location: SFZLocation

    public init(_ name: String, _ value: String, at location: SFZLocation) {
        self.name = name
        self.value = value
        self.location = location
    }
}

/// A `<region>` with what it inherits: `inherited` is the control, global, master and group opcodes in force
/// (in that order, shared between the regions of one group: one copy in memory), `opcodes` the region's own.
/// Later opcodes override earlier ones, so applying `inherited` then `opcodes` in order gives the effective
/// values.
///
/// Threads: a value.
public struct SFZParsedRegion: Sendable {
    public var location: SFZLocation
    public var inherited: [SFZOpcode]
    /// Changes whenever `inherited` does: regions with the same value share their inherited opcodes, so a
    /// reader can build what they inherit once.
    public var inheritedVersion: Int
    public var opcodes: [SFZOpcode]

    /// Every opcode in force for this region, lowest level first.
    public var effectiveOpcodes: [SFZOpcode] { inherited + opcodes }
}

/// A `<curve>` or `<effect>` header with its opcodes.
///
/// Threads: a value.
public struct SFZParsedSection: Sendable {
    public var header: SFZHeader
    public var location: SFZLocation
    public var opcodes: [SFZOpcode]
}

/// Something a library has that is read but not played: an opcode or header, once per library, with the place
/// it first appears and how often it appears.
///
/// Threads: a value.
public struct SFZWarning: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case unsupportedOpcode = "opcode"
        case unknownHeader = "header"
        /// A `<region>` with no `sample=`: it plays nothing.
        case regionWithoutSample = "region"
    }

    public var kind: Kind
    /// The opcode's name with a trailing number written N (`foo_cc7` and `foo_cc12` are one `foo_ccN`), or
    /// the header's name in angle brackets.
    public var name: String
    public var first: SFZLocation
    public var count: Int

    public var description: String {
        let times = count > 1 ? " (\(count) times)" : ""
        switch kind {
        case .unsupportedOpcode: return "\(first): opcode \(name) is not supported and is ignored\(times)"
        case .unknownHeader: return "\(first): header \(name) is not supported; its opcodes are ignored\(times)"
        case .regionWithoutSample: return "\(first): a region without sample= plays nothing\(times)"
        }
    }
}

/// Collects warnings once per name, keeping the first place and the order they were first met.
///
/// Threads: owned by one loading thread.
struct SFZWarningList {
    private(set) var warnings: [SFZWarning] = []
    private var index: [String: Int] = [:]

    mutating func add(_ kind: SFZWarning.Kind, _ name: String, at location: SFZLocation) {
        let key = kind.rawValue + " " + name
        if let position = index[key] {
            warnings[position].count += 1
        } else {
            index[key] = warnings.count
            warnings.append(SFZWarning(kind: kind, name: name, first: location, count: 1))
        }
    }
}

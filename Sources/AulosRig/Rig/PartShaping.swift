import Foundation

/// How a part turns the velocity a key is struck with into the velocity its instrument hears: a power
/// curve between a floor and a ceiling, or one fixed velocity (organ-style). Soft makes quiet playing
/// louder (for a heavy keyboard), hard the opposite.
///
/// Threads: a value; read on the MIDI thread through `PartRoute`'s table.
public struct VelocityCurve: Equatable, Sendable {
    /// Output = low + (high − low) · (v / 127)^exponent.
    public var exponent: Double = 1
    public var low = 1
    public var high = 127
    /// Every note at this velocity (1…127).
    public var fixed: Int?

    public static let linear = VelocityCurve()
    public static let soft = VelocityCurve(exponent: 0.6)
    public static let hard = VelocityCurve(exponent: 1.7)
    static let named: [(String, VelocityCurve)] = [("linear", .linear), ("soft", .soft), ("hard", .hard)]

    public init(exponent: Double = 1, low: Int = 1, high: Int = 127, fixed: Int? = nil) {
        self.exponent = exponent
        self.low = low
        self.high = high
        self.fixed = fixed
    }

    /// The velocity a struck velocity (1…127) becomes, never 0 (that would be a note-off).
    public func map(_ velocity: UInt8) -> UInt8 {
        if let fixed { return UInt8(fixed) }
        guard velocity > 0 else { return 0 }
        let shaped = Double(low) + Double(high - low) * pow(Double(velocity) / 127, exponent)
        return UInt8(min(127, max(1, shaped.rounded())))
    }

    /// All 128 answers, so the MIDI thread looks velocities up rather than computing powers.
    var table: [UInt8] { (0...127).map { map(UInt8($0)) } }
}

/// A controller routed to a unit parameter: CC `controller` (on `channel`, or any channel) sweeps the
/// target from `minimum` (CC 0) to `maximum` (CC 127); both default to the parameter's own range.
///
/// Threads: a value.
public struct ControlMapping: Equatable, Sendable {
    public var controller: Int
    /// 1…16, or nil for every channel.
    public var channel: Int?
    /// `PART.PARAMETER` or `output.volume` / `output.eq` (see `ControlTarget`).
    public var target: String
    public var minimum: Float?
    public var maximum: Float?
    /// Where the mapping was read from, for errors found when the rig is built.
    public var source = SourceLocation.none

    public init(controller: Int, channel: Int? = nil, target: String, minimum: Float? = nil, maximum: Float? = nil) {
        self.controller = controller
        self.channel = channel
        self.target = target
        self.minimum = minimum
        self.maximum = maximum
    }
}

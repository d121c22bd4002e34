import AulosCore
import AulosMIDI
import Foundation
import Glibc
import Yams

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

    /// The rig-file spelling: a name, a fixed number, or {curve, min, max}.
    var yamlValue: String {
        if let fixed { return String(fixed) }
        if let name = Self.named.first(where: { $0.1 == self })?.0 { return name }
        return "{curve: \(exponent), min: \(low), max: \(high)}"
    }
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

    public init(controller: Int, channel: Int? = nil, target: String, minimum: Float? = nil, maximum: Float? = nil) {
        self.controller = controller
        self.channel = channel
        self.target = target
        self.minimum = minimum
        self.maximum = maximum
    }

    var yamlLines: [String] {
        var lines = ["  - cc: \(controller)"]
        if let channel { lines.append("    channel: \(channel)") }
        lines.append("    target: \(Rig.quoted(target))")
        if let minimum { lines.append("    min: \(minimum)") }
        if let maximum { lines.append("    max: \(maximum)") }
        return lines
    }
}

extension RigReader {
    /// `soft`, `hard`, `linear`, a fixed velocity 1…127, or `{curve: 0.6, min: 20, max: 127}`.
    func velocityCurve(_ node: Node, _ key: String) throws(AudioUnitError) -> VelocityCurve {
        if let mapping = node.mapping {
            let keys = try keys(mapping, allowed: ["curve", "min", "max"], at: key + ".")
            var curve = VelocityCurve()
            if let n = keys["curve"] { curve.exponent = try number(n, key + ".curve", in: 0.1...10) }
            if let n = keys["min"] { curve.low = Int(try number(n, key + ".min", in: 1...127)) }
            if let n = keys["max"] { curve.high = Int(try number(n, key + ".max", in: 1...127)) }
            guard curve.low <= curve.high else { throw error(node, key, "min \(curve.low) is above max \(curve.high)") }
            return curve
        }
        guard let text = node.scalar?.string else { throw error(node, key, "must be soft, hard, linear, a velocity or {curve, min, max}") }
        if let fixed = Int(text) {
            guard (1...127).contains(fixed) else { throw error(node, key, "a fixed velocity is 1…127, not \(fixed)") }
            return VelocityCurve(fixed: fixed)
        }
        guard let named = VelocityCurve.named.first(where: { $0.0 == text.lowercased() }) else {
            throw error(node, key, "unknown curve '\(text)' (soft, hard, linear, a velocity 1…127, or {curve, min, max})")
        }
        return named.1
    }

    /// `C2-B4`, `36-71` or `[36, 71]`: the lowest and highest note a part plays.
    func keyRange(_ node: Node, _ key: String) throws(AudioUnitError) -> ClosedRange<Int> {
        var notes: [Int] = []
        if let sequence = node.sequence, sequence.count == 2 {
            for item in sequence {
                let text = try string(item, key)
                do { notes.append(Int(try Score.parseNote(text))) } catch { throw self.error(item, key, error.message) }
            }
        } else {
            // Split at the dash between the two notes; with a negative octave (C-1-G2) try each dash.
            let text = try string(node, key)
            for dash in text.indices where text[dash] == "-" && dash != text.startIndex {
                if let low = try? Score.parseNote(text[..<dash].trimmingCharacters(in: .whitespaces)),
                   let high = try? Score.parseNote(text[text.index(after: dash)...].trimmingCharacters(in: .whitespaces)) {
                    notes = [Int(low), Int(high)]
                    break
                }
            }
            guard notes.count == 2 else { throw error(node, key, "'\(text)' must be LOW-HIGH notes, like C2-B4 or 36-71") }
        }
        guard notes[0] <= notes[1] else { throw error(node, key, "the low note \(notes[0]) is above the high note \(notes[1])") }
        return notes[0]...notes[1]
    }

    func controls(_ node: Node) throws(AudioUnitError) -> [ControlMapping] {
        guard let sequence = node.sequence else { throw error(node, "controls", "must be a list of {cc, target}") }
        var mappings: [ControlMapping] = []
        for (index, item) in sequence.enumerated() {
            let at = "controls[\(index)]"
            guard let mapping = item.mapping else { throw error(item, at, "must be a mapping with cc and target") }
            let keys = try keys(mapping, allowed: ["cc", "channel", "target", "min", "max"], at: at + ".")
            guard let ccNode = keys["cc"] else { throw error(item, at, "missing 'cc' (0…127)") }
            guard let targetNode = keys["target"] else { throw error(item, at, "missing 'target' (PART.PARAMETER, output.volume, output.eq)") }
            let target = try string(targetNode, at + ".target")
            guard target.contains(".") else { throw error(targetNode, at + ".target", "'\(target)' is not UNIT.PARAMETER") }
            var control = ControlMapping(controller: Int(try number(ccNode, at + ".cc", in: 0...127)), target: target)
            if let n = keys["channel"] { control.channel = Int(try number(n, at + ".channel", in: 1...16)) }
            if let n = keys["min"] { control.minimum = Float(try number(n, at + ".min", in: -1e6...1e6)) }
            if let n = keys["max"] { control.maximum = Float(try number(n, at + ".max", in: -1e6...1e6)) }
            mappings.append(control)
        }
        return mappings
    }
}

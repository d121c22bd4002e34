/// A curve a controller's value goes through before it modulates (`*_curveccN=INDEX`): 128 values, one per
/// controller position. Indices 0…6 are built in, as v2 players number them: 0 linear 0→1 (the default),
/// 1 bipolar −1→1, 2 linear 1→0, 3 bipolar 1→−1, 4 x² (slow start), 5 √x (fast start), 6 √(1−x).
/// A `<curve>` section with `curve_index=N` (0…255) and points `vNNN=value` (v000…v127) defines or replaces
/// one; the points between those written are joined by straight lines, and v000 and v127 default to 0 and 1.
///
/// Threads: a value.
public struct SFZCurve: Sendable, Hashable {
    public private(set) var values: [Float]

    /// The highest `curve_index`.
    public static let maximumIndex = 255

    public init(values: [Float]) {
        precondition(values.count == 128)
        self.values = values
    }

    /// The curve through `points` (inputs 0…127), joined by straight lines.
    public init(points: [SFZCurvePoint]) {
        var known = [Float?](repeating: nil, count: 128)
        known[0] = 0
        known[127] = 1
        for point in points where (0...127).contains(point.input) { known[point.input] = point.value }
        var values = [Float](repeating: 0, count: 128)
        var previous = 0
        for index in 1...127 where known[index] != nil {
            let from = known[previous]!
            let to = known[index]!
            for position in previous...index {
                values[position] = from + (to - from) * Float(position - previous) / Float(index - previous)
            }
            previous = index
        }
        self.values = values
    }

    /// The curve's value at a controller position (clamped to 0…127).
    public subscript(position: Int) -> Float { values[min(127, max(0, position))] }

    /// The built-in curve `index` (0…6), or nil.
    public static func builtIn(_ index: Int) -> SFZCurve? {
        func make(_ shape: (Float) -> Float) -> SFZCurve {
            SFZCurve(values: (0..<128).map { shape(Float($0) / 127) })
        }
        switch index {
        case 0: return make { $0 }
        case 1: return make { 2 * $0 - 1 }
        case 2: return make { 1 - $0 }
        case 3: return make { 1 - 2 * $0 }
        case 4: return make { $0 * $0 }
        case 5: return make { $0.squareRoot() }
        case 6: return make { (1 - $0).squareRoot() }
        default: return nil
        }
    }
}

/// The gains the model defines from a region's opcodes alone (no audio): velocity, crossfades, key tracking.
/// The voices multiply them into their amplitude; tests check them against the specification.
///
/// Threads: pure functions, allocation-free (usable on the render thread).
public enum SFZGain {
    /// The amplitude factor for a velocity (1…127): through `amp_velcurve_N` points when the region has any
    /// (joined by straight lines from (0, 0) to (127, 1) unless those are written), else v1's default curve
    /// (velocity/127)², scaled by `amp_veltrack`: at 100 % the curve, at 0 % always 1, negative tracks invert
    /// it (soft notes loud).
    public static func velocity(_ region: SFZRegion, _ velocity: Int) -> Float {
        let position = Float(min(127, max(0, velocity)))
        let curve: Float
        if region.ampVelcurve.isEmpty {
            curve = (position / 127) * (position / 127)
        } else {
            curve = interpolate(region.ampVelcurve, at: position)
        }
        let track = region.ampVeltrack / 100
        return track >= 0 ? 1 - track + track * curve : 1 + track * curve
    }

    private static func interpolate(_ points: [SFZCurvePoint], at position: Float) -> Float {
        var lowerInput: Float = 0
        var lowerValue: Float = 0
        for point in points {
            let input = Float(point.input)
            if input >= position {
                if input == lowerInput { return point.value }
                return lowerValue + (point.value - lowerValue) * (position - lowerInput) / (input - lowerInput)
            }
            lowerInput = input
            lowerValue = point.value
        }
        // Past the last point written: towards (127, 1).
        guard lowerInput < 127 else { return lowerValue }
        return lowerValue + (1 - lowerValue) * (position - lowerInput) / (127 - lowerInput)
    }

    /// How far `value` is into a fade from `low` to `high`: 0 below, 1 at or above `high` (a step at `low` when
    /// the range is empty or backwards).
    static func fadeIn(_ value: Int, _ span: SFZSpan) -> Float {
        if value < span.low { return 0 }
        if value >= span.high { return 1 }
        return Float(value - span.low) / Float(span.high - span.low)
    }

    /// How far `value` is into a fade-out from `low` to `high`: 0 at or below `low`, 1 at or above `high` (so the
    /// default xfout range 127…127 fades nothing).
    static func fadeOut(_ value: Int, _ span: SFZSpan) -> Float {
        if value <= span.low { return 0 }
        if value >= span.high { return 1 }
        return Float(value - span.low) / Float(span.high - span.low)
    }

    static func shape(_ fraction: Float, _ curve: SFZCrossfadeCurve) -> Float {
        curve == .power ? fraction.squareRoot() : fraction
    }

    /// The product of the region's crossfade gains at this key, velocity and controller values (`controller`
    /// gives a controller's value 0…127). With `power` curves two regions crossfading over the same range
    /// keep gain₁² + gain₂² = 1; with `gain` curves gain₁ + gain₂ = 1.
    public static func crossfade(
        _ region: SFZRegion, key: Int, velocity: Int, controller: (Int) -> Int
    ) -> Float {
        var gain = shape(fadeIn(key, region.crossfadeInKeys), region.crossfadeKeyCurve)
        gain *= shape(1 - fadeOut(key, region.crossfadeOutKeys), region.crossfadeKeyCurve)
        gain *= shape(fadeIn(velocity, region.crossfadeInVelocities), region.crossfadeVelocityCurve)
        gain *= shape(1 - fadeOut(velocity, region.crossfadeOutVelocities), region.crossfadeVelocityCurve)
        for range in region.crossfadeInControllers {
            let span = SFZSpan(low: range.low, high: range.high)
            gain *= shape(fadeIn(controller(range.controller), span), region.crossfadeControllerCurve)
        }
        for range in region.crossfadeOutControllers {
            let span = SFZSpan(low: range.low, high: range.high)
            gain *= shape(1 - fadeOut(controller(range.controller), span), region.crossfadeControllerCurve)
        }
        return gain
    }
}

/// How Aulos writes numbers for people — in messages, status lines, rig files: whole numbers without a
/// trailing ".0", everything else as Swift prints it, or rounded to a fixed number of decimals. One place,
/// so a value reads the same wherever it appears.
extension BinaryFloatingPoint where Self: LosslessStringConvertible {
    /// `20000`, `0.5`, `-6`: whole numbers without ".0".
    public var clean: String { self == rounded() && abs(self) < 1e9 ? String(Int(self)) : String(self) }

    /// Rounded to `decimals` places (half away from zero), always with that many: `20.70`, `0.5` → `0.50`.
    public func fixed(_ decimals: Int) -> String {
        var scale: Self = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((self * scale).rounded())
        let whole = scaled.magnitude / Int(scale).magnitude
        let fraction = String(scaled.magnitude % Int(scale).magnitude)
        let sign = scaled < 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(whole) }
        return sign + String(whole) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}

/// How Aulos writes numbers for people — in messages, status lines, rig files: whole numbers without a
/// trailing ".0", everything else as Swift prints it, or rounded to a fixed number of decimals. One place,
/// so a value reads the same wherever it appears.
extension BinaryFloatingPoint where Self: LosslessStringConvertible {
    /// `20000`, `0.5`, `-6`: whole numbers without ".0".
    public var clean: String { self == rounded() && abs(self) < 1e9 ? String(Int(self)) : String(self) }

    /// Rounded to `decimals` places (half away from zero), always with that many: `20.70`, `0.5` → `0.50`.
    /// Values too large to scale (and NaN, infinities) are written as Swift prints them.
    public func fixed(_ decimals: Int) -> String {
        var scale: Self = 1
        for _ in 0..<decimals { scale *= 10 }
        guard (self * scale).magnitude < 1e15 else { return String(self) }
        let scaled = Int((self * scale).rounded())
        let whole = scaled.magnitude / Int(scale).magnitude
        let fraction = String(scaled.magnitude % Int(scale).magnitude)
        let sign = scaled < 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(whole) }
        return sign + String(whole) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// A duration as `H:MM:SS` (`24:00:00`, `745:39:12`, `0:03:20`), rounded to the second.
    public var hoursMinutesSeconds: String {
        guard isFinite, self >= 0, self < 1e15 else { return String(self) + " s" }
        let total = Int(rounded())
        let (minutes, seconds) = (total / 60 % 60, total % 60)
        return "\(total / 3600):" + (minutes < 10 ? "0" : "") + "\(minutes):" + (seconds < 10 ? "0" : "") + "\(seconds)"
    }
}

extension BinaryInteger {
    /// A size in decimal units, as disks and memory are sold: `978.0 kB`, `16.8 GB`, `512 bytes`.
    public var bytesText: String {
        let bytes = Double(self)
        for (unit, scale) in [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)] where bytes >= scale {
            return (bytes / scale).fixed(1) + " " + unit
        }
        return "\(self) bytes"
    }
}

import AulosUnits

/// Looks up iPod-EQ presets by name or number for rigs and the command line.
public enum IPodEQCurves {
    public static func index(of nameOrNumber: String) -> Int? {
        IPodEQUnit.curves.firstIndex { $0.name.lowercased() == nameOrNumber.lowercased() }
            ?? Int(nameOrNumber).flatMap { (0..<IPodEQUnit.curves.count).contains($0) ? $0 : nil }
    }
}

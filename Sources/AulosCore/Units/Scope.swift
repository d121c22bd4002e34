/// Core Audio's AudioUnitScope: the context inside a unit that a property or parameter belongs to.
/// Audio enters at the input scope and leaves at the output scope; the global scope is the unit as a whole
/// and has exactly one element, 0.
public enum Scope: UInt32, Sendable, CaseIterable, CustomStringConvertible {
    case global = 0
    case input = 1
    case output = 2

    public var description: String {
        switch self {
        case .global: "global"
        case .input: "input"
        case .output: "output"
        }
    }
}

/// Core Audio's AudioUnitElement: a zero-based bus number within a scope ("element" and "bus" are the same).
public typealias Element = UInt32

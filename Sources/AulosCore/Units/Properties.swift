/// Core Audio's AudioUnitPropertyID, with Apple's numbers for the properties carried over.
/// Aulos-specific properties use 64000 and above, the range Core Audio leaves to third parties.
public struct PropertyID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let makeConnection = PropertyID(rawValue: 1)
    public static let sampleRate = PropertyID(rawValue: 2)
    public static let parameterList = PropertyID(rawValue: 3)
    public static let streamFormat = PropertyID(rawValue: 8)
    public static let elementCount = PropertyID(rawValue: 11)
    public static let latency = PropertyID(rawValue: 12)
    public static let maximumFramesPerSlice = PropertyID(rawValue: 14)
    public static let tailTime = PropertyID(rawValue: 20)
    public static let lastRenderError = PropertyID(rawValue: 22)
    public static let setRenderCallback = PropertyID(rawValue: 23)
    public static let factoryPresets = PropertyID(rawValue: 24)
    public static let presentPreset = PropertyID(rawValue: 36)
    public static let enableIO = PropertyID(rawValue: 2003)
    public static let isRunning = PropertyID(rawValue: 2001)
    public static let hostCallbacks = PropertyID(rawValue: 27)
    public static let meteringMode = PropertyID(rawValue: 3007)

    public var name: String {
        switch self {
        case .makeConnection: "MakeConnection"
        case .sampleRate: "SampleRate"
        case .parameterList: "ParameterList"
        case .streamFormat: "StreamFormat"
        case .elementCount: "ElementCount"
        case .latency: "Latency"
        case .maximumFramesPerSlice: "MaximumFramesPerSlice"
        case .tailTime: "TailTime"
        case .lastRenderError: "LastRenderError"
        case .setRenderCallback: "SetRenderCallback"
        case .factoryPresets: "FactoryPresets"
        case .presentPreset: "PresentPreset"
        case .enableIO: "EnableIO"
        case .isRunning: "IsRunning"
        case .hostCallbacks: "HostCallbacks"
        case .meteringMode: "MeteringMode"
        default: "Property(\(rawValue))"
        }
    }

    public var description: String { name }
}

/// A property ID bound to the Swift type of its value, so `unit.get(.streamFormat, ...)` returns a
/// `StreamFormat` and `unit.set(.maximumFramesPerSlice, 4096)` only accepts a UInt32.
public struct PropertyKey<Value>: Sendable {
    public let id: PropertyID
    public init(_ id: PropertyID) { self.id = id }
}

extension PropertyKey where Value == AudioUnitConnection {
    public static var makeConnection: Self { .init(.makeConnection) }
}
extension PropertyKey where Value == Double {
    public static var sampleRate: Self { .init(.sampleRate) }
    /// Seconds of delay the unit adds (read-only).
    public static var latency: Self { .init(.latency) }
    /// Seconds the unit keeps sounding after its input goes silent (read-only).
    public static var tailTime: Self { .init(.tailTime) }
}
extension PropertyKey where Value == [ParameterID] {
    public static var parameterList: Self { .init(.parameterList) }
}
extension PropertyKey where Value == StreamFormat {
    public static var streamFormat: Self { .init(.streamFormat) }
}
extension PropertyKey where Value == UInt32 {
    public static var elementCount: Self { .init(.elementCount) }
    public static var maximumFramesPerSlice: Self { .init(.maximumFramesPerSlice) }
    public static var enableIO: Self { .init(.enableIO) }
    public static var isRunning: Self { .init(.isRunning) }
    public static var meteringMode: Self { .init(.meteringMode) }
}
extension PropertyKey where Value == AulosStatus {
    public static var lastRenderError: Self { .init(.lastRenderError) }
}
extension PropertyKey where Value == RenderCallbackStruct? {
    public static var setRenderCallback: Self { .init(.setRenderCallback) }
}
extension PropertyKey where Value == HostCallbackInfo? {
    public static var hostCallbacks: Self { .init(.hostCallbacks) }
}
extension PropertyKey where Value == [Preset] {
    public static var factoryPresets: Self { .init(.factoryPresets) }
}
extension PropertyKey where Value == Preset {
    public static var presentPreset: Self { .init(.presentPreset) }
}

/// Core Audio's AudioUnitGetPropertyInfo answer.
public struct PropertyInfo: Equatable, Sendable {
    /// Bytes of the value in Core Audio's C layout, where it has one (0 for variable-size values).
    public var dataSize: Int
    public var isWritable: Bool
    /// True for the seeds' named exceptions (e.g. an EQ's PresentPreset): writable while initialized.
    public var isWritableWhileInitialized: Bool

    public init(dataSize: Int, isWritable: Bool, isWritableWhileInitialized: Bool = false) {
        self.dataSize = dataSize
        self.isWritable = isWritable
        self.isWritableWhileInitialized = isWritableWhileInitialized
    }
}

/// Core Audio's AudioUnitConnection: the value of MakeConnection, set on the destination's input scope
/// at element `destinationInput`.
public struct AudioUnitConnection: @unchecked Sendable {
    public var source: AudioUnit?
    public var sourceOutput: Element
    public var destinationInput: Element

    public init(source: AudioUnit?, sourceOutput: Element, destinationInput: Element) {
        self.source = source
        self.sourceOutput = sourceOutput
        self.destinationInput = destinationInput
    }
}

/// Core Audio's AUPreset: a numbered, named set of parameter values (factory presets are numbered ≥ 0).
public struct Preset: Hashable, Sendable, CustomStringConvertible {
    public var number: Int32
    public var name: String
    public init(number: Int32, name: String) {
        self.number = number
        self.name = name
    }
    public var description: String { "\(number): \(name)" }
}

/// Identifies one installed property listener, for removal.
public struct PropertyListenerToken: Hashable, Sendable {
    let value: Int
}

/// A property listener: called on the control thread after the property changed.
public typealias PropertyListener = (AudioUnit, PropertyID, Scope, Element) -> Void

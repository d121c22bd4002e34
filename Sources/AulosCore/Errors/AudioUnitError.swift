/// An error from an audio unit, a graph or a component, in Core Audio's status-code convention.
///
/// Threads: thrown on the control thread only. The render path returns the raw `code` as an
/// `AulosStatus` instead (it must not allocate the `detail` string), and units record it in
/// `lastRenderError`.
public struct AudioUnitError: Error, Equatable, CustomStringConvertible, Sendable {
    /// Core Audio's status codes (kAudioUnitErr_*, kAUGraphErr_*, kAudioComponentErr_*), same numbers.
    public enum Code: Int32, Sendable, CaseIterable {
        case invalidProperty = -10879
        case invalidParameter = -10878
        case invalidElement = -10877
        case noConnection = -10876
        case failedInitialization = -10875
        case tooManyFramesToProcess = -10874
        case invalidFile = -10871
        case formatNotSupported = -10868
        case uninitialized = -10867
        case invalidScope = -10866
        case propertyNotWritable = -10865
        case cannotDoInCurrentContext = -10863
        case invalidPropertyValue = -10851
        case propertyNotInUse = -10850
        case initialized = -10849
        case invalidOfflineRender = -10848
        case invalidParameterValue = -66743
        // Graph errors (kAUGraphErr_*).
        case nodeNotFound = -10860
        case invalidConnection = -10861
        case outputNodeError = -10862
        case invalidAudioUnit = -10864
        // Component errors (kAudioComponentErr_*).
        case componentNotFound = -66748
        case instanceInvalidated = -66749

        /// The Core Audio constant's short name, for messages.
        public var name: String {
            switch self {
            case .invalidProperty: "InvalidProperty"
            case .invalidParameter: "InvalidParameter"
            case .invalidElement: "InvalidElement"
            case .noConnection: "NoConnection"
            case .failedInitialization: "FailedInitialization"
            case .tooManyFramesToProcess: "TooManyFramesToProcess"
            case .invalidFile: "InvalidFile"
            case .formatNotSupported: "FormatNotSupported"
            case .uninitialized: "Uninitialized"
            case .invalidScope: "InvalidScope"
            case .propertyNotWritable: "PropertyNotWritable"
            case .cannotDoInCurrentContext: "CannotDoInCurrentContext"
            case .invalidPropertyValue: "InvalidPropertyValue"
            case .propertyNotInUse: "PropertyNotInUse"
            case .initialized: "Initialized"
            case .invalidOfflineRender: "InvalidOfflineRender"
            case .invalidParameterValue: "InvalidParameterValue"
            case .nodeNotFound: "NodeNotFound"
            case .invalidConnection: "InvalidConnection"
            case .outputNodeError: "OutputNodeErr"
            case .invalidAudioUnit: "InvalidAudioUnit"
            case .componentNotFound: "ComponentNotFound"
            case .instanceInvalidated: "InstanceInvalidated"
            }
        }
    }

    public let code: Code
    /// What went wrong and where, for a person: one line, naming the unit, scope, element or value.
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var status: AulosStatus { code.rawValue }

    public var description: String { "\(detail) (\(code.name), \(code.rawValue))" }

    /// Equality compares codes only: tests and callers branch on what happened, not on the wording.
    public static func == (lhs: AudioUnitError, rhs: AudioUnitError) -> Bool { lhs.code == rhs.code }
}

/// Lets `catch AudioUnitError.Code.invalidScope` style patterns match a thrown AudioUnitError.
public func ~= (code: AudioUnitError.Code, error: any Error) -> Bool {
    (error as? AudioUnitError)?.code == code
}

import AulosRealtime
import CAulosRender

/// An I/O unit (Core Audio's AUHAL/RemoteIO/GenericOutput family): the one unit in a graph that starts and
/// stops audio flow and is the head every render cycle is pulled from.
///
/// Element 0 is the output element (audio goes out of the graph through its input scope); element 1, when
/// the unit has input, is the input element. EnableIO defaults to output on, input off, as in Core Audio.
///
/// Threads: control thread, like every unit. The render thread sees only `renderEntry`.
open class IOUnit: AudioUnit, @unchecked Sendable {
    public private(set) var isRunning = false
    private var outputEnabled = true
    private var inputEnabled = false
    /// Whether this kind of I/O unit has an input element (hardware capture) at all.
    public let hasInputElement: Bool
    /// Set by the graph this unit heads, so `render` and `renderEntry` pull the graph's published plan.
    package var hostExchange: HazardExchange?

    public init(
        description: ComponentDescription, aliases: [ComponentDescription] = [], name: String,
        version: UInt32 = 0x0001_0000,
        hasInputElement: Bool, format: StreamFormat = .canonical(channels: 2, sampleRate: AudioUnit.defaultSampleRate)
    ) {
        self.hasInputElement = hasInputElement
        super.init(
            description: description, aliases: aliases, name: name, version: version, inputs: 1, outputs: 1,
            format: format)
    }

    /// The input side is the graph's processing format; the output side (the device's, or the caller's for a
    /// generic output) may be any supported PCM layout with the same channel count and rate, which the I/O
    /// unit's kernel converts to (checked at initialize, when both are known). The same for every I/O unit.
    open override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        if scope == .output {
            try format.validate()
        } else {
            try super.validateFormat(format, scope: scope, element: element)
        }
    }

    /// The real-time way to pull the graph this unit heads: a value a driver thread can hold.
    public var renderEntry: RenderEntry? { hostExchange.map(RenderEntry.init(exchange:)) }

    /// Core Audio's AudioOutputUnitStart. Requires a successful initialize first.
    public func start() throws(AudioUnitError) {
        try checkAlive()
        guard isInitialized else {
            throw AudioUnitError(.uninitialized, "\(name) must be initialized before it starts")
        }
        guard !isRunning else { throw AudioUnitError(.cannotDoInCurrentContext, "\(name) is already running") }
        try startIO()
        isRunning = true
        notifyListeners(.isRunning, scope: .global, element: 0)
    }

    /// Core Audio's AudioOutputUnitStop. Stopping a stopped unit does nothing (so cleanup paths can call it).
    public func stop() throws(AudioUnitError) {
        try checkAlive()
        guard isRunning else { return }
        try stopIO()
        isRunning = false
        notifyListeners(.isRunning, scope: .global, element: 0)
    }

    /// Hooks for units that drive hardware (the ALSA I/O unit starts its thread here).
    open func startIO() throws(AudioUnitError) {}
    open func stopIO() throws(AudioUnitError) {}

    open override func willUninitialize() throws(AudioUnitError) {
        guard !isRunning else {
            throw AudioUnitError(.cannotDoInCurrentContext, "\(name) is running; stop it before uninitializing")
        }
    }

    open override func willDispose() throws(AudioUnitError) {
        try stop()
    }

    open override func customPropertyInfo(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> PropertyInfo?
    {
        switch id {
        case .enableIO:
            try requireIOElement(scope: scope, element: element)
            return PropertyInfo(dataSize: 4, isWritable: true)
        case .isRunning:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: false)
        default:
            return nil
        }
    }

    open override func customGetProperty(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> Any?
    {
        switch id {
        case .enableIO: return UInt32(element == 0 ? (outputEnabled ? 1 : 0) : (inputEnabled ? 1 : 0))
        case .isRunning: return UInt32(isRunning ? 1 : 0)
        default: return nil
        }
    }

    open override func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any)
        throws(AudioUnitError) -> Bool
    {
        guard id == .enableIO else { return false }
        guard let flag = value as? UInt32, flag <= 1 else {
            throw AudioUnitError(.invalidPropertyValue, "EnableIO takes a UInt32 0 or 1")
        }
        if element == 0 { outputEnabled = flag == 1 } else { inputEnabled = flag == 1 }
        return true
    }

    public var isOutputEnabled: Bool { outputEnabled }
    public var isInputEnabled: Bool { inputEnabled }

    /// EnableIO lives on the output scope of element 0 and the input scope of element 1 (Core Audio's
    /// "O looks like 0, I looks like 1").
    private func requireIOElement(scope: Scope, element: Element) throws(AudioUnitError) {
        switch (scope, element) {
        case (.output, 0): return
        case (.input, 1) where hasInputElement: return
        case (.input, 1): throw AudioUnitError(.invalidElement, "\(name) has no input element")
        case (.global, _):
            throw AudioUnitError(
                .invalidScope, "EnableIO is set on the output scope of element 0 or the input scope of element 1")
        default:
            throw AudioUnitError(
                .invalidElement,
                "EnableIO is set on output scope element 0 or input scope element 1, not \(scope) element \(element)")
        }
    }

    open override func renderStandalone(
        flags: inout RenderActionFlags, timeStamp: AudioTimeStamp, bus: Element, frameCount: UInt32,
        ioData: UnsafeMutablePointer<AudioBufferList>
    ) throws(AudioUnitError) -> AulosStatus {
        guard let entry = renderEntry else {
            return try super.renderStandalone(
                flags: &flags, timeStamp: timeStamp, bus: bus, frameCount: frameCount, ioData: ioData)
        }
        var stamp = timeStamp
        return entry.render(flags: &flags, timeStamp: &stamp, frameCount: frameCount, ioData: ioData)
    }
}

import AulosRealtime
import CAulosRender
import Synchronization

/// The lifecycle of a unit (Core Audio's: instantiate → configure → initialize → render → uninitialize →
/// dispose). I/O units add running/stopped on top of `initialized`.
public enum UnitState: String, Sendable {
    case uninitialized, initialized, disposed
}

/// A unit's render-side half: the C-convention entry the plan calls and the state it is called with.
///
/// Threads: created by the unit on the control thread at initialize, used by the render thread while the
/// unit is in a published plan, destroyed on the control thread at uninitialize.
public struct UnitKernel: @unchecked Sendable {
    public let render: KernelRenderFunction
    public let state: UnsafeMutableRawPointer
    let destroy: () -> Void

    /// Moves `state` into unmanaged memory; `release` runs on the control thread when the kernel is destroyed.
    public static func make<State>(
        _ state: State, render: KernelRenderFunction, release: @escaping (State) -> Void = { _ in }
    ) -> UnitKernel {
        let pointer = UnsafeMutablePointer<State>.allocate(capacity: 1)
        pointer.initialize(to: state)
        return UnitKernel(render: render, state: UnsafeMutableRawPointer(pointer)) {
            release(pointer.pointee)
            pointer.deinitialize(count: 1)
            pointer.deallocate()
        }
    }
}

/// An audio unit: Core Audio's AudioComponentInstance/AUBase, control side.
///
/// Threads: owned by one control thread at a time; nothing here may be called from the render thread.
/// The render thread only ever sees `kernel` (through a render plan). `@unchecked Sendable` so a unit can
/// be handed between control threads, not shared by them.
///
/// Subclasses describe their buses and parameters in `init`, may override `validateFormat`,
/// `canChangeElementCount`, `factoryPresets`/`applyPreset`, `latency`/`tailTime` and the `custom…Property`
/// hooks, and must override `makeKernel()`.
open class AudioUnit: @unchecked Sendable, CustomStringConvertible {
    public let componentDescription: ComponentDescription
    /// Core Audio's description of the unit this one reimplements, if any (see `Component.aliases`).
    public let aliases: [ComponentDescription]
    public let name: String
    public let version: UInt32
    public private(set) var state: UnitState = .uninitialized
    public private(set) var maximumFramesPerSlice: UInt32 = 1024
    /// The render-side half, present while initialized.
    public private(set) var kernel: UnitKernel?
    public let parameters = ParameterStore()
    /// Written by the render thread when a render fails; read through the LastRenderError property.
    public let lastRenderErrorCell: UnsafeMutablePointer<Atomic<Int32>>
    /// Counted by the render thread: output samples that were NaN, infinite or absurdly large, each slice of
    /// them played as silence by the render plan's guard.
    public let nonFiniteCell: UnsafeMutablePointer<Atomic<Int>>
    /// Nanoseconds the render thread spent in this unit's own render (its self time: what the units it pulls
    /// spend is theirs), summed since the unit was created; see `RenderPlan.renderNode`. Only the render
    /// thread writes it; the control thread reads differences to turn them into a load (`renderNanos`).
    public let renderNanosCell: UnsafeMutablePointer<Atomic<UInt64>>
    /// The unit's name as a C string for the render thread's watch (`aulos_watch_enter_unit`): interned, so it
    /// outlives every render plan that names it and the watchdog or a crash report can always read it.
    public let watchName: UnsafePointer<CChar>
    /// Set by a graph while a published render plan calls this unit: direct reconfiguration is then refused,
    /// as Core Audio asks ("units are not thread-safe while processing").
    package var isInFlow = false

    struct InputBus {
        var format: StreamFormat
        var callback: RenderCallbackStruct?
        var connection: AudioUnitConnection?
    }
    private var inputs: [InputBus]
    private var outputs: [StreamFormat]
    private var listeners: [PropertyListenerToken: (PropertyID, PropertyListener)] = [:]
    private var nextListener = 0
    private var kernelResources: [AnyObject] = []
    private var standalonePlan: RenderPlanStorage?
    private var parameterKernel: ParameterKernel?
    /// The host's callbacks (HostCallbacks property), for kernels that follow beat, tempo or transport.
    public private(set) var hostCallbackInfo: HostCallbackInfo?

    /// The sample rate units are created with until a host sets another.
    public static let defaultSampleRate = 48_000.0

    public init(
        description: ComponentDescription, aliases: [ComponentDescription] = [], name: String,
        version: UInt32 = 0x0001_0000,
        inputs: Int, outputs: Int,
        format: StreamFormat = .canonical(channels: 2, sampleRate: AudioUnit.defaultSampleRate),
        parameters: [ParameterInfo] = []
    ) {
        componentDescription = description
        self.aliases = aliases
        self.name = name
        self.version = version
        self.inputs = Array(repeating: InputBus(format: format), count: inputs)
        self.outputs = Array(repeating: format, count: outputs)
        lastRenderErrorCell = .allocate(capacity: 1)
        lastRenderErrorCell.initialize(to: Atomic(0))
        nonFiniteCell = .allocate(capacity: 1)
        nonFiniteCell.initialize(to: Atomic(0))
        renderNanosCell = .allocate(capacity: 1)
        renderNanosCell.initialize(to: Atomic(0))
        watchName = UnitWatchNames.interned(name)
        self.parameters.rebuild(parameters, elementCount: { [inputs, outputs] in $0 == .input ? inputs : outputs })
    }

    deinit {
        if let kernel {
            kernel.destroy()
            parameterKernel?.deallocate()
        }
        lastRenderErrorCell.deinitialize(count: 1)
        lastRenderErrorCell.deallocate()
        nonFiniteCell.deinitialize(count: 1)
        nonFiniteCell.deallocate()
        renderNanosCell.deinitialize(count: 1)
        renderNanosCell.deallocate()
    }

    /// Output samples the render plan's guard found NaN, infinite or beyond ±1024 (+60 dBFS) and played as
    /// silence, since the unit was created (`guardedSamples`).
    public var guardedSamples: Int { nonFiniteCell.pointee.load(ordering: .relaxed) }

    /// The render thread's time in this unit's own render since it was created (ns; never reset: a reader
    /// takes differences). Zero while unit timing is off (`UnitTiming`).
    public var renderNanos: UInt64 { renderNanosCell.pointee.load(ordering: .relaxed) }

    public var description: String { "\(name) (\(componentDescription))" }
    public var isInitialized: Bool { state == .initialized }
    public var inputBusCount: Int { inputs.count }
    public var outputBusCount: Int { outputs.count }
    public func inputFormat(_ bus: Int) -> StreamFormat { inputs[bus].format }
    public func outputFormat(_ bus: Int) -> StreamFormat { outputs[bus] }
    /// The render callback attached directly to an input bus (SetRenderCallback), if any.
    public func inputCallback(_ bus: Int) -> RenderCallbackStruct? { inputs[bus].callback }
    /// The direct connection on an input bus (MakeConnection), if any.
    public func inputConnection(_ bus: Int) -> AudioUnitConnection? { inputs[bus].connection }

    // MARK: - Subclass hooks

    /// Whether the host may change the number of buses in a scope (mixers may; most units may not).
    open func canChangeElementCount(_ scope: Scope) -> Bool { false }

    /// Accepts or rejects a format for a bus. The default accepts only the canonical format
    /// (Float32, non-interleaved), which is what every Aulos processing unit renders.
    open func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        try format.validate()
        guard format.isCanonical else {
            throw AudioUnitError(
                .formatNotSupported,
                "\(name) \(scope) bus \(element) needs Float32 non-interleaved, got \(format.compactDescription)")
        }
    }

    /// Creates the render-side half, allocating every buffer for `maximumFramesPerSlice`. Required.
    open func makeKernel() throws(AudioUnitError) -> UnitKernel {
        throw AudioUnitError(.failedInitialization, "\(name) has no render kernel")
    }

    /// Unit-specific settings saved with the unit's state (see `UnitClassInfo`), as text. The base unit saves its
    /// MaximumFramesPerSlice; subclasses add theirs and restore them in `restoreStateProperties`.
    open var stateProperties: [String: String] { ["maximumFramesPerSlice": String(maximumFramesPerSlice)] }

    open func restoreStateProperties(_ properties: [String: String]) throws(AudioUnitError) {
        if let text = properties["maximumFramesPerSlice"], let frames = UInt32(text), frames != maximumFramesPerSlice {
            try set(.maximumFramesPerSlice, frames)
        }
    }

    open var factoryPresets: [Preset] { [] }
    /// Applies a factory preset; called on the control thread, possibly while rendering.
    open func applyPreset(_ preset: Preset) throws(AudioUnitError) {
        throw AudioUnitError(.invalidProperty, "\(name) has no presets")
    }
    open var currentPreset: Preset? { nil }
    open var latency: Double { 0 }
    open var tailTime: Double { 0 }

    /// Info for a property this subclass adds; nil when it is not one of them.
    open func customPropertyInfo(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> PropertyInfo?
    { nil }
    open func customGetProperty(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError) -> Any? { nil }
    /// Returns false when the property is not one this subclass adds.
    open func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any) throws(AudioUnitError)
        -> Bool
    { false }

    // MARK: - Lifecycle

    /// Core Audio's AudioUnitInitialize: propagates formats from direct connections, validates every bus
    /// format, and allocates the render kernel. Not thread-safe; never call it on a unit in the flow.
    public func initialize() throws(AudioUnitError) {
        try checkAlive()
        guard state == .uninitialized else {
            throw AudioUnitError(.initialized, "\(name) is already initialized")
        }
        for bus in inputs.indices {
            if let connection = inputs[bus].connection, let source = connection.source {
                guard Int(connection.sourceOutput) < source.outputBusCount else {
                    throw AudioUnitError(
                        .invalidConnection,
                        "\(name) input \(bus): \(source.name) has no output \(connection.sourceOutput)")
                }
                inputs[bus].format = source.outputFormat(Int(connection.sourceOutput))
            }
            try validateFormat(inputs[bus].format, scope: .input, element: Element(bus))
        }
        for bus in outputs.indices {
            try validateFormat(outputs[bus], scope: .output, element: Element(bus))
        }
        let parameterKernel = ParameterKernel(store: parameters, smoothingFrames: smoothingFrames)
        self.parameterKernel = parameterKernel
        do {
            kernel = try makeKernel()
        } catch {
            parameterKernel.deallocate()
            self.parameterKernel = nil
            kernelResources.removeAll()
            throw error
        }
        lastRenderErrorCell.pointee.store(0, ordering: .relaxed)
        state = .initialized
    }

    /// Core Audio's AudioUnitUninitialize: frees what initialize allocated.
    public func uninitialize() throws(AudioUnitError) {
        try checkAlive()
        guard state == .initialized else {
            throw AudioUnitError(.uninitialized, "\(name) is not initialized")
        }
        guard !isInFlow else {
            throw AudioUnitError(
                .cannotDoInCurrentContext, "\(name) is being rendered by a graph; remove it from the graph first")
        }
        try willUninitialize()
        standalonePlan = nil
        kernel?.destroy()
        kernel = nil
        parameterKernel?.deallocate()
        parameterKernel = nil
        kernelResources.removeAll()
        state = .uninitialized
    }

    /// Hook for I/O units (refuse while running).
    open func willUninitialize() throws(AudioUnitError) {}

    /// Core Audio's AudioComponentInstanceDispose. Uninitializes first if needed; afterwards every call fails
    /// with `instanceInvalidated` instead of crashing.
    public func dispose() throws(AudioUnitError) {
        try checkAlive()
        guard !isInFlow else {
            throw AudioUnitError(
                .cannotDoInCurrentContext, "\(name) is being rendered by a graph; remove it from the graph first")
        }
        try willDispose()
        if state == .initialized { try uninitialize() }
        listeners.removeAll()
        state = .disposed
    }

    open func willDispose() throws(AudioUnitError) {}

    public func checkAlive() throws(AudioUnitError) {
        if state == .disposed { throw AudioUnitError(.instanceInvalidated, "\(name) has been disposed") }
    }

    /// Replaces the parameter definitions (a unit whose parameters depend on a property, like a band count).
    /// Values of parameters that remain are kept. Control thread, uninitialized.
    public func rebuildParameters(_ definitions: [ParameterInfo]) {
        precondition(state == .uninitialized, "parameters are rebuilt only while uninitialized")
        parameters.rebuild(definitions) { [inputs, outputs] in $0 == .input ? inputs.count : outputs.count }
    }

    /// Keeps an object (typically an `AudioBufferListStorage`) alive for as long as the kernel exists.
    public func retainForKernel(_ resource: AnyObject) { kernelResources.append(resource) }

    /// The render-side view of this unit's parameters. Valid inside `makeKernel()` and until uninitialize.
    public var renderParameters: ParameterKernel {
        guard let parameterKernel else { preconditionFailure("parameter kernel requested outside initialize") }
        return parameterKernel
    }

    /// De-zipper glide length: 5 ms at the output sample rate.
    var smoothingFrames: UInt32 {
        let rate = outputs.first?.sampleRate ?? inputs.first?.format.sampleRate ?? Self.defaultSampleRate
        return UInt32(max(1, (rate * 0.005).rounded()))
    }

    // MARK: - Properties

    /// Core Audio's AudioUnitGetPropertyInfo.
    public func propertyInfo(_ id: PropertyID, scope: Scope = .global, element: Element = 0) throws(AudioUnitError)
        -> PropertyInfo
    {
        try checkAlive()
        if let info = try customPropertyInfo(id, scope: scope, element: element) { return info }
        switch id {
        case .maximumFramesPerSlice:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: true)
        case .lastRenderError:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: false)
        case .latency, .tailTime:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 8, isWritable: false)
        case .streamFormat:
            try requireScope(id, scope, element, [.input, .output])
            return PropertyInfo(dataSize: 40, isWritable: true)
        case .sampleRate:
            try requireScope(id, scope, element, [.input, .output])
            return PropertyInfo(dataSize: 8, isWritable: true)
        case .elementCount:
            try requireScope(id, scope, element, [.global, .input, .output])
            return PropertyInfo(dataSize: 4, isWritable: scope != .global && canChangeElementCount(scope))
        case .makeConnection:
            try requireScope(id, scope, element, [.input])
            return PropertyInfo(dataSize: 16, isWritable: true)
        case .setRenderCallback:
            try requireScope(id, scope, element, [.input])
            return PropertyInfo(dataSize: 16, isWritable: true)
        case .hostCallbacks:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 32, isWritable: true)
        case .parameterList:
            try requireScope(id, scope, element, Scope.allCases)
            return PropertyInfo(
                dataSize: 4 * parameters.definitions.filter { $0.scope == scope }.count, isWritable: false)
        case .factoryPresets where !factoryPresets.isEmpty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 0, isWritable: false)
        case .presentPreset where !factoryPresets.isEmpty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 16, isWritable: true, isWritableWhileInitialized: true)
        default:
            throw AudioUnitError(.invalidProperty, "\(name) has no property \(id)")
        }
    }

    /// Core Audio's AudioUnitGetProperty, typed.
    public func get<Value>(_ key: PropertyKey<Value>, scope: Scope = .global, element: Element = 0)
        throws(AudioUnitError) -> Value
    {
        let value = try getProperty(key.id, scope: scope, element: element)
        guard let typed = value as? Value else {
            throw AudioUnitError(.invalidPropertyValue, "\(name) property \(key.id) is not a \(Value.self)")
        }
        return typed
    }

    /// Core Audio's AudioUnitSetProperty, typed.
    public func set<Value>(_ key: PropertyKey<Value>, _ value: Value, scope: Scope = .global, element: Element = 0)
        throws(AudioUnitError)
    {
        try setProperty(key.id, scope: scope, element: element, value: value)
    }

    /// The untyped form of `get`, for hosts that work from property IDs (CLI, rig files).
    public func getProperty(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError) -> Any {
        _ = try propertyInfo(id, scope: scope, element: element)
        if let value = try customGetProperty(id, scope: scope, element: element) { return value }
        switch id {
        case .maximumFramesPerSlice: return maximumFramesPerSlice
        case .lastRenderError: return lastRenderErrorCell.pointee.load(ordering: .relaxed)
        case .latency: return latency
        case .tailTime: return tailTime
        case .streamFormat: return scope == .input ? inputs[Int(element)].format : outputs[Int(element)]
        case .sampleRate:
            return scope == .input ? inputs[Int(element)].format.sampleRate : outputs[Int(element)].sampleRate
        case .elementCount: return UInt32(scope == .input ? inputs.count : scope == .output ? outputs.count : 1)
        case .makeConnection:
            return inputs[Int(element)].connection
                ?? AudioUnitConnection(source: nil, sourceOutput: 0, destinationInput: element)
        case .setRenderCallback: return inputs[Int(element)].callback as Any
        case .hostCallbacks: return hostCallbackInfo as Any
        case .parameterList: return parameters.definitions.filter { $0.scope == scope }.map(\.id)
        case .factoryPresets: return factoryPresets
        case .presentPreset:
            guard let preset = currentPreset else {
                throw AudioUnitError(.propertyNotInUse, "\(name) has no preset selected")
            }
            return preset
        default: throw AudioUnitError(.invalidProperty, "\(name) has no property \(id)")
        }
    }

    /// The untyped form of `set`. Enforces scope, element, writability and Core Audio's rule that most
    /// properties are settable only while uninitialized, then notifies listeners.
    public func setProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any) throws(AudioUnitError) {
        let info = try propertyInfo(id, scope: scope, element: element)
        guard info.isWritable else {
            throw AudioUnitError(.propertyNotWritable, "\(name) property \(id) is read-only in the \(scope) scope")
        }
        if state == .initialized && !info.isWritableWhileInitialized {
            throw AudioUnitError(.initialized, "\(name) property \(id) can only be set while the unit is uninitialized")
        }
        if try customSetProperty(id, scope: scope, element: element, value: value) {
            notifyListeners(id, scope: scope, element: element)
            return
        }
        func typed<T>(_: T.Type) throws(AudioUnitError) -> T {
            guard let typed = value as? T else {
                throw AudioUnitError(
                    .invalidPropertyValue, "\(name) property \(id) takes a \(T.self), not \(type(of: value))")
            }
            return typed
        }
        let bus = Int(element)
        switch id {
        case .maximumFramesPerSlice:
            let frames = try typed(UInt32.self)
            guard (1...65536).contains(frames) else {
                throw AudioUnitError(.invalidPropertyValue, "MaximumFramesPerSlice \(frames) is outside 1...65536")
            }
            maximumFramesPerSlice = frames
        case .streamFormat:
            let format = try typed(StreamFormat.self)
            try validateFormat(format, scope: scope, element: element)
            if scope == .input { inputs[bus].format = format } else { outputs[bus] = format }
        case .sampleRate:
            let rate = try typed(Double.self)
            var format = scope == .input ? inputs[bus].format : outputs[bus]
            format.sampleRate = rate
            try validateFormat(format, scope: scope, element: element)
            if scope == .input { inputs[bus].format = format } else { outputs[bus] = format }
        case .elementCount:
            let count = Int(try typed(UInt32.self))
            guard (1...1024).contains(count) else {
                throw AudioUnitError(.invalidPropertyValue, "ElementCount \(count) is outside 1...1024")
            }
            if scope == .input {
                let template = inputs.last?.format ?? .canonical(channels: 2, sampleRate: Self.defaultSampleRate)
                inputs = (0..<count).map { $0 < inputs.count ? inputs[$0] : InputBus(format: template) }
            } else {
                let template = outputs.last ?? .canonical(channels: 2, sampleRate: Self.defaultSampleRate)
                outputs = (0..<count).map { $0 < outputs.count ? outputs[$0] : template }
            }
            parameters.rebuild(parameters.definitions) { [inputs, outputs] in
                $0 == .input ? inputs.count : outputs.count
            }
        case .makeConnection:
            let connection = try typed(AudioUnitConnection.self)
            guard connection.destinationInput == element else {
                throw AudioUnitError(
                    .invalidPropertyValue,
                    "MakeConnection destinationInput \(connection.destinationInput) differs from element \(element)")
            }
            if let source = connection.source {
                guard source !== self else {
                    throw AudioUnitError(.invalidPropertyValue, "\(name) cannot be connected to itself")
                }
                guard Int(connection.sourceOutput) < source.outputBusCount else {
                    throw AudioUnitError(.invalidElement, "\(source.name) has no output bus \(connection.sourceOutput)")
                }
                let format = source.outputFormat(Int(connection.sourceOutput))
                try validateFormat(format, scope: .input, element: element)
                inputs[bus].format = format
                inputs[bus].connection = connection
                inputs[bus].callback = nil
            } else {
                inputs[bus].connection = nil
            }
        case .hostCallbacks:
            hostCallbackInfo = try typed(HostCallbackInfo?.self)
        case .setRenderCallback:
            let callback = try typed(RenderCallbackStruct?.self)
            inputs[bus].callback = callback
            if callback != nil { inputs[bus].connection = nil }
        case .presentPreset:
            let preset = try typed(Preset.self)
            guard let match = factoryPresets.first(where: { $0.number == preset.number }) else {
                throw AudioUnitError(.invalidPropertyValue, "\(name) has no preset number \(preset.number)")
            }
            try applyPreset(match)
        default:
            throw AudioUnitError(.propertyNotWritable, "\(name) property \(id) is not writable")
        }
        notifyListeners(id, scope: scope, element: element)
    }

    /// Checks that `scope` is one the property lives in and `element` exists there.
    public func requireScope(_ id: PropertyID, _ scope: Scope, _ element: Element, _ allowed: [Scope])
        throws(AudioUnitError)
    {
        guard allowed.contains(scope) else {
            throw AudioUnitError(.invalidScope, "\(name) property \(id) is not in the \(scope) scope")
        }
        let count = scope == .global ? 1 : scope == .input ? inputs.count : outputs.count
        if id == .elementCount || id == .parameterList {
            guard element == 0 else {
                throw AudioUnitError(
                    .invalidElement, "\(name) property \(id) applies to the whole \(scope) scope: use element 0")
            }
            return
        }
        guard Int(element) < count else {
            throw AudioUnitError(
                .invalidElement, "\(name) has no element \(element) in the \(scope) scope (it has \(count))")
        }
    }

    // MARK: - Listeners

    /// Core Audio's AudioUnitAddPropertyListener. The listener runs on the control thread, after the change.
    @discardableResult
    public func addPropertyListener(_ id: PropertyID, _ listener: @escaping PropertyListener) -> PropertyListenerToken {
        nextListener += 1
        let token = PropertyListenerToken(value: nextListener)
        listeners[token] = (id, listener)
        return token
    }

    public func removePropertyListener(_ token: PropertyListenerToken) {
        listeners[token] = nil
    }

    /// Tells listeners of `id` that it changed. Subclasses call it for changes they make themselves.
    public func notifyListeners(_ id: PropertyID, scope: Scope, element: Element) {
        for (_, entry) in listeners.sorted(by: { $0.key.value < $1.key.value }) where entry.0 == id {
            entry.1(self, id, scope, element)
        }
    }

    // MARK: - Parameters

    public func parameterInfo(_ id: ParameterID) throws(AudioUnitError) -> ParameterInfo {
        try checkAlive()
        guard let info = parameters.info(id) else {
            throw AudioUnitError(.invalidParameter, "\(name) has no parameter \(id)")
        }
        return info
    }

    /// Core Audio's AudioUnitGetParameter.
    public func getParameter(_ id: ParameterID, scope: Scope = .global, element: Element = 0) throws(AudioUnitError)
        -> Float
    {
        try checkAlive()
        if let value = try readOnlyParameter(id, scope: scope, element: element) { return value }
        return parameters.value(slot: try parameters.slot(id, scope: scope, element: element))
    }

    /// Values a unit computes rather than stores (a mixer's meter levels): return nil for ordinary parameters.
    open func readOnlyParameter(_ id: ParameterID, scope: Scope, element: Element) throws(AudioUnitError) -> Float? {
        nil
    }

    /// Core Audio's AudioUnitSetParameter. Safe while rendering: at offset 0 the value is stored atomically
    /// and the render thread glides to it; at a later offset it is queued and lands exactly on that frame of
    /// the next render cycle.
    public func setParameter(
        _ id: ParameterID, scope: Scope = .global, element: Element = 0, value: Float, bufferOffset: UInt32 = 0
    ) throws(AudioUnitError) {
        let slot = try checkedSlot(id, scope: scope, element: element, value: value)
        if bufferOffset == 0 || state != .initialized {
            parameters.store(value, slot: slot)
        } else {
            try enqueue(
                RenderParameterEvent(
                    slot: Int32(slot), startOffset: bufferOffset, duration: 0, startValue: value, endValue: value))
        }
    }

    /// The cell `setParameter` stores a parameter's value in at offset 0 (its float's bit pattern): a MIDI
    /// router on the render thread moves a mapped parameter with the same one atomic store, clamping the
    /// value to the parameter's range itself. Valid while the unit lives and its parameters are not laid out
    /// again (only while uninitialized).
    public func parameterCell(_ id: ParameterID, scope: Scope = .global, element: Element = 0) throws(AudioUnitError)
        -> UnsafeMutablePointer<Atomic<UInt32>>
    {
        try checkAlive()
        return parameters.cell(slot: try parameters.slot(id, scope: scope, element: element))
    }

    /// Core Audio's AudioUnitScheduleParameters: sample-exact immediate changes and linear ramps.
    public func scheduleParameters(_ events: [ParameterEvent]) throws(AudioUnitError) {
        var resolved: [RenderParameterEvent] = []
        for event in events {
            switch event {
            case .immediate(let id, let scope, let element, let offset, let value):
                let slot = try checkedSlot(id, scope: scope, element: element, value: value)
                resolved.append(
                    RenderParameterEvent(
                        slot: Int32(slot), startOffset: offset, duration: 0, startValue: value, endValue: value))
            case .ramp(let id, let scope, let element, let offset, let duration, let from, let to):
                let slot = try checkedSlot(id, scope: scope, element: element, value: from)
                _ = try checkedSlot(id, scope: scope, element: element, value: to)
                resolved.append(
                    RenderParameterEvent(
                        slot: Int32(slot), startOffset: offset, duration: duration, startValue: from, endValue: to))
            }
        }
        guard state == .initialized else {
            // Not rendering: nothing to schedule against, so the final values apply at once.
            for event in resolved { parameters.store(event.endValue, slot: Int(event.slot)) }
            return
        }
        for event in resolved { try enqueue(event) }
    }

    private func checkedSlot(_ id: ParameterID, scope: Scope, element: Element, value: Float) throws(AudioUnitError)
        -> Int
    {
        try checkAlive()
        let slot = try parameters.slot(id, scope: scope, element: element)
        let info = parameters.info(id)!
        guard value.isFinite, value >= info.minValue, value <= info.maxValue else {
            throw AudioUnitError(
                .invalidParameterValue, "\(name) \(info.name) = \(value) is outside \(info.minValue)...\(info.maxValue)"
            )
        }
        return slot
    }

    private func enqueue(_ event: RenderParameterEvent) throws(AudioUnitError) {
        guard parameters.enqueue(event) else {
            throw AudioUnitError(
                .cannotDoInCurrentContext,
                "\(name) parameter event queue is full (the render thread is not draining it)")
        }
    }

    // MARK: - Rendering from the control side

    /// Core Audio's AudioUnitRender, for a unit used on its own (tests, tools). Pulls the unit's direct
    /// connections and render callbacks. Real-time drivers use a graph's `RenderEntry` instead.
    public func render(
        flags: inout RenderActionFlags, timeStamp: AudioTimeStamp, bus: Element = 0, frameCount: UInt32,
        ioData: UnsafeMutablePointer<AudioBufferList>
    ) throws(AudioUnitError) {
        try checkAlive()
        guard state == .initialized else { throw AudioUnitError(.uninitialized, "\(name) is not initialized") }
        guard Int(bus) < outputs.count else {
            throw AudioUnitError(.invalidElement, "\(name) has no output bus \(bus)")
        }
        guard frameCount <= maximumFramesPerSlice else {
            throw AudioUnitError(
                .tooManyFramesToProcess,
                "\(name) was asked for \(frameCount) frames; MaximumFramesPerSlice is \(maximumFramesPerSlice)")
        }
        let status = try renderStandalone(
            flags: &flags, timeStamp: timeStamp, bus: bus, frameCount: frameCount, ioData: ioData)
        if status != 0 {
            let code = AudioUnitError.Code(rawValue: status) ?? .cannotDoInCurrentContext
            throw AudioUnitError(code, "\(name) render failed")
        }
    }

    open func renderStandalone(
        flags: inout RenderActionFlags, timeStamp: AudioTimeStamp, bus: Element, frameCount: UInt32,
        ioData: UnsafeMutablePointer<AudioBufferList>
    ) throws(AudioUnitError) -> AulosStatus {
        if standalonePlan == nil { standalonePlan = try buildStandalonePlan() }
        var stamp = timeStamp
        // Only the head's own output bus differs between calls; the plan is reused.
        return RenderPlan.renderNode(
            standalonePlan!.plan, index: 0, bus: bus, flags: &flags, timeStamp: &stamp, frameCount: frameCount,
            ioData: ioData)
    }

    /// A plan made of this unit and, transitively, the units its MakeConnection inputs name.
    private func buildStandalonePlan() throws(AudioUnitError) -> RenderPlanStorage {
        var order: [ObjectIdentifier: Int] = [:]
        var units: [AudioUnit] = []
        func collect(_ unit: AudioUnit) {
            guard order[ObjectIdentifier(unit)] == nil else { return }
            order[ObjectIdentifier(unit)] = units.count
            units.append(unit)
            for bus in 0..<unit.inputBusCount {
                if let source = unit.inputs[bus].connection?.source { collect(source) }
            }
        }
        collect(self)
        let specs = units.map { unit in
            RenderPlanStorage.NodeSpec(
                unit: unit,
                inputs: unit.inputs.map { input in
                    if let source = input.connection?.source {
                        return .node(order[ObjectIdentifier(source)]!, bus: input.connection!.sourceOutput)
                    }
                    if let callback = input.callback { return .callback(callback) }
                    return .silence
                })
        }
        return try RenderPlanStorage(nodes: specs, head: 0, notifies: [], retainsUnits: false)
    }
}

import AulosRealtime
import Synchronization

/// Core Audio's AudioUnitParameterID: unique within one unit (and scope), not globally.
public struct ParameterID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }
}

/// Core Audio's AudioUnitParameterUnit: what a parameter's number means.
public enum ParameterUnit: String, Sendable, CaseIterable {
    case generic, indexed, boolean, percent, seconds, sampleFrames, hertz, cents, decibels, linearGain, pan,
        milliseconds
}

/// Core Audio's AudioUnitParameterInfo, reduced to what a host needs to show and validate a parameter.
public struct ParameterInfo: Sendable, Equatable {
    public var id: ParameterID
    public var name: String
    public var unit: ParameterUnit
    public var minValue: Float
    public var maxValue: Float
    public var defaultValue: Float
    /// The scope the parameter lives in; it exists on every element of that scope.
    public var scope: Scope
    /// Changes made with `setParameter` at offset 0 glide over a few milliseconds instead of jumping,
    /// so a knob turned during a note does not click ("zipper noise"). Off for switches and indices.
    public var isSmoothed: Bool
    /// Names of the values of an indexed parameter (Core Audio's ParameterValueStrings), e.g. waveforms.
    public var valueNames: [String]
    /// Best shown on a logarithmic scale (Core Audio's kAudioUnitParameterFlag_DisplayLogarithmic): a
    /// frequency, a time.
    public var isLogarithmic = false

    public init(
        id: ParameterID, name: String, unit: ParameterUnit, range: ClosedRange<Float>, defaultValue: Float,
        scope: Scope = .global, isSmoothed: Bool = true, valueNames: [String] = []
    ) {
        precondition(range.contains(defaultValue), "default of \(name) outside its range")
        self.id = id
        self.name = name
        self.unit = unit
        self.minValue = range.lowerBound
        self.maxValue = range.upperBound
        self.defaultValue = defaultValue
        self.scope = scope
        self.isSmoothed = isSmoothed && unit != .boolean && unit != .indexed
        self.valueNames = valueNames
    }
}

/// A scheduled parameter change (Core Audio's AudioUnitParameterEvent). Offsets count frames from the start
/// of the next render cycle.
public enum ParameterEvent: Sendable, Equatable {
    /// The value changes exactly at `offset`.
    case immediate(ParameterID, scope: Scope, element: Element, offset: UInt32, value: Float)
    /// A linear ramp: `from` at `startOffset`, reaching `to` at `startOffset + duration`.
    case ramp(
        ParameterID, scope: Scope, element: Element, startOffset: UInt32, duration: UInt32, from: Float, to: Float)
}

/// A parameter change on its way to the render thread: resolved to a storage slot, trivially copyable.
public struct RenderParameterEvent: BitwiseCopyable, Sendable {
    public var slot: Int32
    public var startOffset: UInt32
    public var duration: UInt32
    public var startValue: Float
    public var endValue: Float
}

/// Render-thread state of one parameter: where it is now and where it is gliding to.
public struct ParameterRenderState: BitwiseCopyable {
    public var current: Float
    public var target: Float
    public var step: Float
    public var remaining: UInt32
    public var lastSeenBits: UInt32
    public var isSmoothed: Bool
}

/// The render side of a unit's parameters: reads the atomically stored values, applies scheduled events at
/// their exact frame, and advances ramps and de-zipper glides sample by sample.
///
/// Threads: render thread only (the `values` cells are shared with the control thread through atomics; the
/// event ring is fed by the control thread). A value handle over memory owned by `ParameterStore`.
public struct ParameterKernel: @unchecked Sendable {
    @usableFromInline let values: UnsafeMutablePointer<Atomic<UInt32>>
    @usableFromInline let states: UnsafeMutablePointer<ParameterRenderState>
    @usableFromInline let pending: UnsafeMutablePointer<RenderParameterEvent>
    @usableFromInline let pendingCount: UnsafeMutablePointer<Int>
    @usableFromInline let events: SPSCRing<RenderParameterEvent>
    public let slotCount: Int
    @usableFromInline let smoothingFrames: UInt32
    public static var pendingCapacity: Int { 256 }

    init(store: ParameterStore, smoothingFrames: UInt32) {
        values = store.values
        slotCount = store.slotCount
        events = store.events
        self.smoothingFrames = max(1, smoothingFrames)
        states = .allocate(capacity: max(1, slotCount))
        for slot in 0..<slotCount {
            let bits = values[slot].load(ordering: .relaxed)
            let value = Float(bitPattern: bits)
            states[slot] = ParameterRenderState(
                current: value, target: value, step: 0, remaining: 0, lastSeenBits: bits,
                isSmoothed: store.isSmoothed(slot: slot))
        }
        pending = .allocate(capacity: Self.pendingCapacity)
        pendingCount = .allocate(capacity: 1)
        pendingCount.initialize(to: 0)
    }

    func deallocate() {
        states.deallocate()
        pending.deallocate()
        pendingCount.deallocate()
    }

    /// Call once at the start of every render cycle.
    @_noAllocation @_noLocks
    public func beginSlice() {
        while pendingCount.pointee < Self.pendingCapacity, let event = events.pop() {
            pending[pendingCount.pointee] = event
            pendingCount.pointee += 1
        }
        for slot in 0..<slotCount {
            let bits = values[slot].load(ordering: .relaxed)
            if bits == states[slot].lastSeenBits { continue }
            states[slot].lastSeenBits = bits
            glide(slot, to: Float(bitPattern: bits))
        }
    }

    @inline(__always) @_noAllocation @_noLocks
    func glide(_ slot: Int, to value: Float) {
        if states[slot].isSmoothed {
            states[slot].target = value
            states[slot].remaining = smoothingFrames
            states[slot].step = (value - states[slot].current) / Float(smoothingFrames)
        } else {
            states[slot].current = value
            states[slot].target = value
            states[slot].remaining = 0
        }
    }

    /// Applies every scheduled event due at or before `frame` (an offset within the current slice).
    @_noAllocation @_noLocks
    public func applyEvents(dueAt frame: Int) {
        var index = 0
        while index < pendingCount.pointee {
            let event = pending[index]
            if Int(event.startOffset) > frame {
                index += 1
                continue
            }
            let slot = Int(event.slot)
            if event.duration == 0 {
                states[slot].current = event.endValue
                states[slot].target = event.endValue
                states[slot].remaining = 0
            } else {
                states[slot].current = event.startValue
                states[slot].target = event.endValue
                states[slot].remaining = event.duration
                states[slot].step = (event.endValue - event.startValue) / Float(event.duration)
            }
            // Publish the value the parameter is heading to, unless the control thread wrote a newer one.
            let bits = event.endValue.bitPattern
            let seen = states[slot].lastSeenBits
            if values[slot].compareExchange(expected: seen, desired: bits, ordering: .relaxed).exchanged {
                states[slot].lastSeenBits = bits
            }
            pendingCount.pointee -= 1
            pending[index] = pending[pendingCount.pointee]
        }
    }

    /// The first frame after `frame` (and before `frameCount`) at which a scheduled event is due, so a unit
    /// can render in segments split exactly at parameter changes.
    @_noAllocation @_noLocks
    public func nextEventOffset(after frame: Int, frameCount: Int) -> Int {
        var next = frameCount
        for index in 0..<pendingCount.pointee {
            let offset = Int(pending[index].startOffset)
            if offset > frame && offset < next { next = offset }
        }
        return next
    }

    /// The value at the current frame.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func value(_ slot: Int) -> Float { states[slot].current }

    /// Whether the slot holds its value (no glide or ramp under way): `next` would return `value`.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func isSteady(_ slot: Int) -> Bool { states[slot].remaining == 0 }

    /// Returns the value at the current frame and advances the slot by one frame.
    @inlinable @inline(__always) @_noAllocation @_noLocks
    public func next(_ slot: Int) -> Float {
        let value = states[slot].current
        if states[slot].remaining > 0 {
            states[slot].remaining -= 1
            states[slot].current = states[slot].remaining == 0 ? states[slot].target : value + states[slot].step
        }
        return value
    }

    /// Advances every gliding parameter by `frames` frames, one frame at a time, so the result does not
    /// depend on how a render was split into blocks (what makes output independent of slice size).
    @_noAllocation @_noLocks
    public func advanceAll(by frames: Int) {
        for slot in 0..<slotCount where states[slot].remaining > 0 {
            for _ in 0..<frames {
                if states[slot].remaining == 0 { break }
                _ = next(slot)
            }
        }
    }

    /// Sets a value from the render thread itself (an instrument applying a program change): takes effect
    /// at once and is published so the control thread reads it back.
    @_noAllocation @_noLocks
    public func setFromRender(_ slot: Int, _ value: Float) {
        states[slot].current = value
        states[slot].target = value
        states[slot].remaining = 0
        let bits = value.bitPattern
        values[slot].store(bits, ordering: .relaxed)
        states[slot].lastSeenBits = bits
    }

    /// Call once at the end of every render cycle: events still pending move one slice closer.
    @_noAllocation @_noLocks
    public func endSlice(frameCount: Int) {
        for index in 0..<pendingCount.pointee {
            pending[index].startOffset -= UInt32(min(Int(pending[index].startOffset), frameCount))
        }
    }
}

/// The control side of a unit's parameters: definitions, one atomic value cell per (parameter, element),
/// and the ring that carries scheduled events to the render thread.
///
/// Threads: control thread, except that the value cells and the ring are shared with the render thread
/// through `ParameterKernel`.
public final class ParameterStore: @unchecked Sendable {
    public private(set) var definitions: [ParameterInfo] = []
    private var slots: [SlotKey: Int] = [:]
    private var smoothed: [Bool] = []
    private(set) var values: UnsafeMutablePointer<Atomic<UInt32>>
    private(set) var slotCount = 0
    let events: SPSCRing<RenderParameterEvent>

    struct SlotKey: Hashable {
        var id: ParameterID
        var scope: Scope
        var element: Element
    }

    init() {
        values = .allocate(capacity: 1)
        events = SPSCRing(minimumCapacity: 1024)
    }

    deinit {
        values.deinitialize(count: slotCount)
        values.deallocate()
        events.deallocate()
    }

    /// Lays out the slots for `definitions` over `elementCount(scope)` elements each, keeping the values of
    /// parameters that existed before. Control thread, unit uninitialized.
    func rebuild(_ definitions: [ParameterInfo], elementCount: (Scope) -> Int) {
        let old = slots.mapValues { Float(bitPattern: values[$0].load(ordering: .relaxed)) }
        var newSlots: [SlotKey: Int] = [:]
        var newSmoothed: [Bool] = []
        var initial: [Float] = []
        for info in definitions {
            let elements = info.scope == .global ? 1 : elementCount(info.scope)
            for element in 0..<elements {
                let key = SlotKey(id: info.id, scope: info.scope, element: Element(element))
                newSlots[key] = initial.count
                initial.append(old[key] ?? info.defaultValue)
                newSmoothed.append(info.isSmoothed)
            }
        }
        values.deinitialize(count: slotCount)
        values.deallocate()
        values = .allocate(capacity: max(1, initial.count))
        for (slot, value) in initial.enumerated() {
            (values + slot).initialize(to: Atomic(value.bitPattern))
        }
        self.definitions = definitions
        slots = newSlots
        smoothed = newSmoothed
        slotCount = initial.count
    }

    func isSmoothed(slot: Int) -> Bool { smoothed[slot] }

    /// The storage slot of a parameter on an element, or the specific error for what is wrong.
    public func slot(_ id: ParameterID, scope: Scope, element: Element) throws(AudioUnitError) -> Int {
        if let slot = slots[SlotKey(id: id, scope: scope, element: element)] { return slot }
        guard let info = definitions.first(where: { $0.id == id }) else {
            throw AudioUnitError(.invalidParameter, "no parameter \(id) in this unit")
        }
        guard info.scope == scope else {
            throw AudioUnitError(
                .invalidScope, "parameter \(id) (\(info.name)) is in the \(info.scope) scope, not \(scope)")
        }
        throw AudioUnitError(
            .invalidElement, "parameter \(id) (\(info.name)) has no element \(element) in the \(scope) scope")
    }

    public func info(_ id: ParameterID) -> ParameterInfo? { definitions.first { $0.id == id } }

    func value(slot: Int) -> Float { Float(bitPattern: values[slot].load(ordering: .relaxed)) }

    func store(_ value: Float, slot: Int) { values[slot].store(value.bitPattern, ordering: .relaxed) }

    /// The cell `store` writes: for setting the value from another thread with the same one atomic store.
    func cell(slot: Int) -> UnsafeMutablePointer<Atomic<UInt32>> { values + slot }

    func enqueue(_ event: RenderParameterEvent) -> Bool { events.push(event) }
}

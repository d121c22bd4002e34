import AulosRealtime
import CAulosRender
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where one input bus of a plan node gets its audio.
public enum PlanInputSource: BitwiseCopyable {
    /// Nothing attached: the bus renders silence and reports `noConnection`.
    case silence
    /// A host render callback (Core Audio's AURenderCallbackStruct).
    case callback(RenderCallback, UnsafeMutableRawPointer?)
    /// Output bus `bus` of the node at `index` in the plan.
    case node(index: Int32, bus: UInt32)
}

/// One output bus of a plan node. When more than one input pulls it (fan-out) it renders once per cycle
/// into `cache` and every consumer copies from there; with a single consumer it renders straight into
/// the consumer's buffers and `cache` is nil.
public struct PlanOutput {
    var cache: UnsafeMutablePointer<AudioBufferList>?
    var bytesPerFrame: UInt32
    var renderedCycle: UInt64
    var status: AulosStatus
    var flags: RenderActionFlags
}

/// One unit in a render plan: its render entry, where each input bus comes from, its output caches.
/// The kernel receives a pointer to its own `PlanNode` as the opaque `inputs` handle of the render ABI.
public struct PlanNode {
    var plan: UnsafeMutablePointer<RenderPlan>
    var render: KernelRenderFunction
    var kernel: UnsafeMutableRawPointer
    var inputs: UnsafeMutablePointer<PlanInputSource>
    var inputCount: Int
    var outputs: UnsafeMutablePointer<PlanOutput>
    var outputCount: Int
    var maximumFrames: UInt32
    var lastRenderError: UnsafeMutablePointer<Atomic<Int32>>
    /// The unit's name for the render thread's watch (see `UnitWatchNames`).
    var name: UnsafePointer<CChar>
    /// Whether its outputs are Float32, and so checked by the guard; the count of guarded samples.
    var guardsOutput: Bool
    var nonFinite: UnsafeMutablePointer<Atomic<Int>>
    /// The unit's self time in render, ns (`AudioUnit.renderNanosCell`).
    var renderNanos: UnsafeMutablePointer<Atomic<UInt64>>
}

/// Whether render plans time every unit's render (per-part CPU in the status): on, unless the process starts
/// with `AULOS_NO_UNIT_TIMING` set. The switch exists only so the timing's own cost can be measured
/// (docs/performance.md); it is read once, on the control thread, when the first plan is built, and each
/// plan carries the answer, so the render thread never reads the environment.
///
/// Threads: any (an immutable value once read).
public enum UnitTiming {
    public static let isEnabled: Bool = getenv("AULOS_NO_UNIT_TIMING") == nil
}

/// A render notification (Core Audio's AUGraphAddRenderNotify): called before and after every cycle.
public struct RenderNotify {
    var callback: RenderCallback
    var refCon: UnsafeMutableRawPointer?
}

/// An immutable description of who pulls whom, laid out in unmanaged memory so the render thread can
/// walk it without ARC, locks or allocation. Built by `RenderPlanStorage` on the control thread and
/// replaced whole (never edited) when the graph changes.
///
/// Threads: the render thread reads it and writes only the per-cycle caches; the control thread builds
/// it, publishes it, and frees it after the render thread has let go.
public struct RenderPlan {
    var nodes: UnsafeMutablePointer<PlanNode>
    var nodeCount: Int
    var head: Int
    var notifies: UnsafeMutablePointer<RenderNotify>
    var notifyCount: Int
    /// The render cycle, which kernels with several outputs compare with the one they last computed. Each
    /// plan counts from a base of its own (`cycleBases`): a plan that replaced another in mid-play counted
    /// from 0 again, so a kernel that had last computed cycle N of the old plan took the new plan's cycle N
    /// as done and served that old slice again (a mixer with sends repeated a slice: heard as a glitch,
    /// measured as a render that was no longer its offline twin).
    var cycle: UInt64
    /// Whether `renderNode` times each unit (`UnitTiming`), fixed when the plan is built.
    var timesUnits: Bool
    /// Render-thread bookkeeping for self time: the sum of the whole (inclusive) render times of the nodes
    /// that finished rendering, where a node that finishes replaces what its own pulls added by its whole time.
    /// A node's pulls therefore add exactly their inclusive times between its start and its end, which
    /// `renderNode` subtracts from the node's own elapsed time. Only the render thread touches it.
    var nestedNanos: UInt64
    /// Where the render notifications' time goes (meters, recorders, MIDI in, the player: one bucket for the
    /// graph, `AudioGraph.notifyNanos`): ns, only the render thread writes it.
    var notifyNanos: UnsafeMutablePointer<Atomic<UInt64>>

    /// One render cycle pulled from the head (the I/O unit): pre-render notifications, the pull, then
    /// post-render notifications. Render thread.
    @_noAllocation @_noLocks
    public static func renderCycle(
        _ plan: UnsafeMutablePointer<RenderPlan>, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, bus: UInt32, frameCount: UInt32,
        ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        plan.pointee.cycle &+= 1
        let timed = plan.pointee.timesUnits
        let preStart = timed ? now() : 0
        notify(
            plan, phase: .preRender, flags: flags, timeStamp: timeStamp, bus: bus, frameCount: frameCount,
            ioData: ioData)
        let preEnd = timed ? now() : 0
        let status = renderNode(
            plan, index: plan.pointee.head, bus: bus, flags: flags, timeStamp: timeStamp,
            frameCount: frameCount, ioData: ioData)
        var phase = RenderActionFlags.postRender
        if status != 0 { phase.insert(.postRenderError) }
        let postStart = timed ? now() : 0
        notify(plan, phase: phase, flags: flags, timeStamp: timeStamp, bus: bus, frameCount: frameCount, ioData: ioData)
        if timed {
            // Measured in a bucket of its own, never taken as "the cycle minus the units".
            let spent = (preEnd &- preStart) &+ (now() &- postStart)
            add(spent, to: plan.pointee.notifyNanos)
        }
        return status
    }

    /// CLOCK_MONOTONIC in ns (a vDSO read: no system call, no lock).
    @_noAllocation @_noLocks @inline(__always)
    static func now() -> UInt64 { _unsafePerformance { aulos_watch_now() } }

    /// Adds to a cell only the render thread writes: a relaxed load and store, no locked instruction.
    @_noAllocation @_noLocks @inline(__always)
    static func add(_ nanos: UInt64, to cell: UnsafeMutablePointer<Atomic<UInt64>>) {
        cell.pointee.store(cell.pointee.load(ordering: .relaxed) &+ nanos, ordering: .relaxed)
    }

    @_noAllocation @_noLocks
    static func notify(
        _ plan: UnsafeMutablePointer<RenderPlan>, phase: RenderActionFlags,
        flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, bus: UInt32, frameCount: UInt32,
        ioData: UnsafeMutablePointer<AudioBufferList>
    ) {
        for index in 0..<plan.pointee.notifyCount {
            let entry = plan.pointee.notifies[index]
            var notifyFlags = flags.pointee.union(phase)
            // The one unchecked hop: a host callback is code the compiler cannot see. Callbacks are held to
            // the same real-time rules by contract (and by the zero-allocation tests).
            _ = _unsafePerformance { entry.callback(entry.refCon, &notifyFlags, timeStamp, bus, frameCount, ioData) }
        }
    }

    /// Renders output `bus` of one node into `ioData`, enforcing the node's maximum frames per slice.
    @_noAllocation @_noLocks
    static func renderNode(
        _ plan: UnsafeMutablePointer<RenderPlan>, index: Int, bus: UInt32,
        flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: UInt32, ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let node = plan.pointee.nodes + index
        // Self time: this node's elapsed time less the whole times of the nodes it pulled (`nestedNanos`), so a
        // busy source is charged to itself and not to every consumer downstream. The output guard below is
        // the unit's cost too.
        let timed = plan.pointee.timesUnits
        let nestedBefore = plan.pointee.nestedNanos
        let started = timed ? now() : 0
        var status: AulosStatus
        if frameCount > node.pointee.maximumFrames {
            ioData.pointee.zeroFill()
            status = RenderStatus.tooManyFramesToProcess
        } else {
            let render = node.pointee.render
            let kernel = node.pointee.kernel
            // Unchecked hop into the unit's kernel; every kernel's own render method carries
            // @_noAllocation/@_noLocks, so the compiler checks it where it is defined. The watch marks which
            // unit this thread is inside, for the watchdog and a crash report (two plain stores).
            let name = node.pointee.name
            status = _unsafePerformance {
                let outer = aulos_watch_enter_unit(name)
                defer { aulos_watch_leave_unit(outer) }
                return render(kernel, UnsafeRawPointer(node), flags, timeStamp, bus, frameCount, ioData)
            }
            if node.pointee.guardsOutput { guardOutput(node, ioData) }
        }
        if timed {
            let elapsed = now() &- started
            add(elapsed &- (plan.pointee.nestedNanos &- nestedBefore), to: node.pointee.renderNanos)
            plan.pointee.nestedNanos = nestedBefore &+ elapsed
        }
        if status != 0 { node.pointee.lastRenderError.pointee.store(status, ordering: .relaxed) }
        return status
    }

    /// The most a unit's output may be before it is taken for a fault: +60 dBFS. A mix of many loud parts
    /// stays far below; a plugin that writes 3e38 or NaN does not.
    @inlinable static var outputLimit: Float { 1024 }

    /// One bad sample must cost one slice of one unit, never the rest of the run: a unit's output holding
    /// NaN, infinity or more than ±`outputLimit` is played as silence for that slice (a reverb or filter
    /// downstream would otherwise latch NaN forever), and counted for the unit's warning.
    @_noAllocation @_noLocks
    static func guardOutput(_ node: UnsafeMutablePointer<PlanNode>, _ ioData: UnsafeMutablePointer<AudioBufferList>) {
        let buffers = ioData.pointee.buffers
        for index in 0..<Int(ioData.pointee.bufferCount) {
            guard let data = buffers[index].data else { continue }
            let count = buffers[index].byteSize / 4
            let silenced = _unsafePerformance {
                aulos_guard_floats(data.assumingMemoryBound(to: Float.self), count, outputLimit)
            }
            if silenced != 0 { node.pointee.nonFinite.pointee.add(Int(count), ordering: .relaxed) }
        }
    }
}

/// What a kernel uses to pull its input buses. Render thread.
public enum RenderInputs {
    /// Starts a new sub-cycle before pulling an input again within one render cycle (a resampler pulls
    /// several input chunks per output slice): fan-out caches upstream then render fresh audio instead of
    /// returning the previous chunk.
    @_noAllocation @_noLocks
    public static func beginSubcycle(_ inputs: UnsafeRawPointer) {
        let node = UnsafeMutablePointer(mutating: inputs.assumingMemoryBound(to: PlanNode.self))
        node.pointee.plan.pointee.cycle &+= 1
    }

    /// The current render cycle of the plan the kernel runs in: a unit with several outputs (a mixer with
    /// sends) computes all of them once per cycle, whichever is pulled first, and serves the rest from there.
    @_noAllocation @_noLocks
    public static func cycle(_ inputs: UnsafeRawPointer) -> UInt64 {
        inputs.assumingMemoryBound(to: PlanNode.self).pointee.plan.pointee.cycle
    }

    /// An in-place effect's first step: sizes `ioData` for `frameCount` Float32 frames and pulls input bus 0
    /// into it, to be processed where it lies.
    @_noAllocation @_noLocks
    public static func pullInPlace(
        _ inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: Int, into ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        ioData.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
        return pull(inputs, bus: 0, flags: flags, timeStamp: timeStamp, frameCount: UInt32(frameCount), into: ioData)
    }

    /// Pulls input `bus` of the node whose opaque `inputs` handle is given, into `ioData` (whose buffers the
    /// caller owns and whose byte sizes it has set for `frameCount` frames in the bus's format).
    /// An unconnected bus is zeroed, flagged silent, and returns `noConnection`.
    @_noAllocation @_noLocks
    public static func pull(
        _ inputs: UnsafeRawPointer, bus: UInt32, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: UInt32, into ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let node = UnsafeMutablePointer(mutating: inputs.assumingMemoryBound(to: PlanNode.self))
        guard Int(bus) < node.pointee.inputCount else { return RenderStatus.invalidElement }
        switch node.pointee.inputs[Int(bus)] {
        case .silence:
            ioData.pointee.zeroFill()
            flags.pointee.insert(.outputIsSilence)
            return RenderStatus.noConnection
        case .callback(let callback, let refCon):
            return _unsafePerformance { callback(refCon, flags, timeStamp, bus, frameCount, ioData) }
        case .node(let index, let outputBus):
            let plan = node.pointee.plan
            let output = plan.pointee.nodes[Int(index)].outputs + Int(outputBus)
            guard let cache = output.pointee.cache else {
                return RenderPlan.renderNode(
                    plan, index: Int(index), bus: outputBus, flags: flags, timeStamp: timeStamp,
                    frameCount: frameCount, ioData: ioData)
            }
            if output.pointee.renderedCycle != plan.pointee.cycle {
                cache.pointee.setFrameCount(frameCount, bytesPerFrame: output.pointee.bytesPerFrame)
                var cachedFlags = RenderActionFlags(rawValue: 0)
                output.pointee.status = RenderPlan.renderNode(
                    plan, index: Int(index), bus: outputBus, flags: &cachedFlags, timeStamp: timeStamp,
                    frameCount: frameCount, ioData: cache)
                output.pointee.flags = cachedFlags
                output.pointee.renderedCycle = plan.pointee.cycle
            }
            ioData.pointee.copyContents(from: cache)
            flags.pointee.formUnion(output.pointee.flags)
            return output.pointee.status
        }
    }
}

/// Builds a `RenderPlan` and owns every allocation it points into, plus strong references to the units
/// whose kernels it calls, so nothing it names can go away while it lives.
///
/// Threads: control thread. Free it only after the render thread has let go (see `HazardExchange`).
public final class RenderPlanStorage: @unchecked Sendable {
    /// Where a node's input bus gets its audio, in terms of node indices of the same plan.
    public enum InputSpec {
        case silence
        case callback(RenderCallbackStruct)
        case node(Int, bus: Element)
    }

    public struct NodeSpec {
        public var unit: AudioUnit
        public var inputs: [InputSpec]
        public init(unit: AudioUnit, inputs: [InputSpec]) {
            self.unit = unit
            self.inputs = inputs
        }
    }

    public let plan: UnsafeMutablePointer<RenderPlan>
    /// The units the plan keeps alive while it can render (empty for a unit's own standalone plan).
    public let units: [AudioUnit]
    private let caches: [AudioBufferListStorage]
    private var allocations: [UnsafeMutableRawPointer] = []

    /// Plans built so far: each counts its cycles from this number · 2⁴⁰ (a plan renders 2⁴⁰ cycles — years
    /// at the smallest slice — before it could meet the next one's numbers).
    private static let cycleBases = Atomic<UInt64>(0)

    /// Builds the plan. Every unit must be initialized; the inputs must not form a cycle. A graph's plan
    /// retains its units. A unit's own standalone plan must not (`retainsUnits: false`): the unit owns the
    /// plan, so retaining it would be a cycle that never frees either (LeakSanitizer found it); the head
    /// is alive whenever it renders, and it retains its sources through its connections.
    ///
    /// `notifyNanos` is where the notifications' time is summed (the graph's cell, which outlives its plans);
    /// nil: a cell of the plan's own.
    public init(
        nodes specs: [NodeSpec], head: Int, notifies: [RenderCallbackStruct], retainsUnits: Bool = true,
        notifyNanos: UnsafeMutablePointer<Atomic<UInt64>>? = nil
    ) throws(AudioUnitError) {
        guard specs.indices.contains(head) else {
            throw AudioUnitError(.outputNodeError, "render plan has no head node")
        }
        // Count consumers of every (node, output bus) so single-consumer outputs render in place.
        var consumers: [Int: [Int]] = [:]
        for (index, spec) in specs.enumerated() {
            consumers[index] = Array(repeating: 0, count: spec.unit.outputBusCount)
            guard spec.unit.isInitialized, spec.unit.kernel != nil else {
                throw AudioUnitError(.uninitialized, "\(spec.unit.name) is not initialized")
            }
        }
        for spec in specs {
            for case .node(let source, let bus) in spec.inputs {
                guard specs.indices.contains(source), Int(bus) < specs[source].unit.outputBusCount else {
                    throw AudioUnitError(.invalidConnection, "connection from a missing node or output bus \(bus)")
                }
                consumers[source]![Int(bus)] += 1
            }
        }
        try Self.rejectCycles(specs)

        let plan = UnsafeMutablePointer<RenderPlan>.allocate(capacity: 1)
        let nodes = UnsafeMutablePointer<PlanNode>.allocate(capacity: max(1, specs.count))
        let notifyStorage = UnsafeMutablePointer<RenderNotify>.allocate(capacity: max(1, notifies.count))
        allocations = [
            UnsafeMutableRawPointer(plan), UnsafeMutableRawPointer(nodes), UnsafeMutableRawPointer(notifyStorage),
        ]
        var caches: [AudioBufferListStorage] = []
        for (index, spec) in specs.enumerated() {
            let unit = spec.unit
            let inputs = UnsafeMutablePointer<PlanInputSource>.allocate(capacity: max(1, spec.inputs.count))
            for (bus, input) in spec.inputs.enumerated() {
                switch input {
                case .silence: inputs[bus] = .silence
                case .callback(let c): inputs[bus] = .callback(c.callback, c.refCon)
                case .node(let source, let sourceBus): inputs[bus] = .node(index: Int32(source), bus: sourceBus)
                }
            }
            let outputs = UnsafeMutablePointer<PlanOutput>.allocate(capacity: max(1, unit.outputBusCount))
            for bus in 0..<unit.outputBusCount {
                let format = unit.outputFormat(bus)
                var cache: UnsafeMutablePointer<AudioBufferList>?
                if consumers[index]![bus] > 1 {
                    let storage = AudioBufferListStorage(format: format, maximumFrames: unit.maximumFramesPerSlice)
                    caches.append(storage)
                    cache = storage.list
                }
                outputs[bus] = PlanOutput(
                    cache: cache, bytesPerFrame: format.bytesPerFrame, renderedCycle: 0, status: 0, flags: [])
            }
            allocations += [UnsafeMutableRawPointer(inputs), UnsafeMutableRawPointer(outputs)]
            let kernel = unit.kernel!
            nodes[index] = PlanNode(
                plan: plan, render: kernel.render, kernel: kernel.state, inputs: inputs, inputCount: spec.inputs.count,
                outputs: outputs, outputCount: unit.outputBusCount, maximumFrames: unit.maximumFramesPerSlice,
                lastRenderError: unit.lastRenderErrorCell, name: unit.watchName,
                guardsOutput: (0..<unit.outputBusCount).allSatisfy { unit.outputFormat($0).sampleFormat == .float32 },
                nonFinite: unit.nonFiniteCell, renderNanos: unit.renderNanosCell)
        }
        for (index, notify) in notifies.enumerated() {
            notifyStorage[index] = RenderNotify(callback: notify.callback, refCon: notify.refCon)
        }
        let notifyCell: UnsafeMutablePointer<Atomic<UInt64>>
        if let notifyNanos {
            notifyCell = notifyNanos
        } else {
            notifyCell = .allocate(capacity: 1)
            notifyCell.initialize(to: Atomic(0))
            allocations.append(UnsafeMutableRawPointer(notifyCell))
        }
        plan.initialize(
            to: RenderPlan(
                nodes: nodes, nodeCount: specs.count, head: head, notifies: notifyStorage, notifyCount: notifies.count,
                cycle: Self.cycleBases.add(1, ordering: .relaxed).newValue << 40, timesUnits: UnitTiming.isEnabled,
                nestedNanos: 0, notifyNanos: notifyCell))
        self.plan = plan
        self.units = retainsUnits ? specs.map(\.unit) : []
        self.caches = caches
    }

    deinit {
        for pointer in allocations { pointer.deallocate() }
    }

    private static func rejectCycles(_ specs: [NodeSpec]) throws(AudioUnitError) {
        // 0 = unvisited, 1 = on the current path, 2 = done.
        var mark = Array(repeating: 0, count: specs.count)
        func visit(_ index: Int) -> Bool {
            if mark[index] == 1 { return false }
            if mark[index] == 2 { return true }
            mark[index] = 1
            for case .node(let source, _) in specs[index].inputs where !visit(source) { return false }
            mark[index] = 2
            return true
        }
        for index in specs.indices where !visit(index) {
            throw AudioUnitError(.invalidConnection, "connections form a cycle through \(specs[index].unit.name)")
        }
    }
}

/// The render thread's way into a graph: pulls one cycle from the currently published plan.
/// A trivial value (no class references), so a real-time driver can hold it.
///
/// Threads: render thread (exactly one at a time), while the graph is initialized.
public struct RenderEntry: @unchecked Sendable {
    public let exchange: HazardExchange

    public init(exchange: HazardExchange) { self.exchange = exchange }

    @_noAllocation @_noLocks
    public func render(
        flags: UnsafeMutablePointer<RenderActionFlags>, timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: UInt32,
        ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        guard let raw = exchange.acquire() else {
            exchange.release()
            ioData.pointee.zeroFill()
            return RenderStatus.uninitialized
        }
        _unsafePerformance { aulos_watch_begin_cycle() }
        let status = RenderPlan.renderCycle(
            raw.assumingMemoryBound(to: RenderPlan.self), flags: flags, timeStamp: timeStamp, bus: 0,
            frameCount: frameCount, ioData: ioData)
        _unsafePerformance { aulos_watch_end_cycle() }
        exchange.release()
        return status
    }
}

/// Render-side status codes (kept in this file: in non-WMO builds the checker sees bodies only from the
/// same file or from annotated functions): the same numbers as `AudioUnitError.Code`, as plain constants the render
/// thread can return without touching the enum (a test pins them to the enum).
public enum RenderStatus {
    @inlinable public static var noErr: AulosStatus { 0 }
    @inlinable public static var invalidElement: AulosStatus { -10877 }
    @inlinable public static var noConnection: AulosStatus { -10876 }
    @inlinable public static var tooManyFramesToProcess: AulosStatus { -10874 }
    @inlinable public static var uninitialized: AulosStatus { -10867 }
}

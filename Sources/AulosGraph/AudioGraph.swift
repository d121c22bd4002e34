import AulosCore
import AulosRealtime
import Synchronization

/// Core Audio's AUNode: a unit's handle within one graph.
public struct NodeID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static func < (a: NodeID, b: NodeID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "node \(rawValue)" }
}

/// Core Audio's AUGraph: owns a set of units, wires them together, and publishes the wiring to the render
/// thread as an immutable render plan.
///
/// Wiring calls (connect, disconnect, set input callback, remove node, clear) only add to a pending list,
/// as in Core Audio: `initialize()` applies it when the graph is not running, `update()` while it runs.
/// An update builds a whole new plan, swaps it in with one atomic exchange (the render thread picks it up
/// at its next slice), and frees the old plan here, on the control thread, once the render thread has let
/// go of it. The render thread never allocates, locks or sees this object.
///
/// Threads: control thread. One control thread at a time (serialize calls from several yourself); the
/// render thread reaches the graph only through the I/O unit's `renderEntry`.
public final class AudioGraph: @unchecked Sendable {
    public let registry: ComponentRegistry
    public private(set) var isOpen = false
    public private(set) var isInitialized = false

    struct Node {
        var id: NodeID
        var component: Component
        var unit: AudioUnit?
    }

    /// Where an input bus gets its audio in the applied (live) topology.
    enum InputSource {
        case node(NodeID, bus: Element)
        case callback(RenderCallbackStruct)
    }

    struct InputKey: Hashable, Comparable {
        var node: NodeID
        var bus: Element
        static func < (a: InputKey, b: InputKey) -> Bool { (a.node, a.bus) < (b.node, b.bus) }
    }

    /// A queued change (Core Audio's to-do list).
    enum Change {
        case connect(source: NodeID, sourceOutput: Element, destination: NodeID, destinationInput: Element)
        case disconnect(destination: NodeID, destinationInput: Element)
        case setInputCallback(destination: NodeID, destinationInput: Element, RenderCallbackStruct?)
        case removeNode(NodeID)
        case clearConnections
    }

    private var nodes: [NodeID: Node] = [:]
    private var nextNode: Int32 = 1
    private var inputs: [InputKey: InputSource] = [:]
    private var pending: [Change] = []
    private var notifies: [RenderCallbackStruct] = []

    private let exchange = HazardExchange()
    private var published: RenderPlanStorage?
    /// Plans replaced while the render thread still held them, with the units removed alongside; freed by a
    /// later update or at uninitialize, never on the render thread.
    private var retired: [(plan: RenderPlanStorage, removedUnits: [AudioUnit])] = []
    /// How long `update()` waits for the render thread to take the new plan before deferring the free.
    public var retirementTimeout: Duration = .seconds(1)

    /// The render notifications' time (ns, since the graph was made), summed by every plan this graph
    /// publishes: the meters, recorders, MIDI inputs and players that run before and after each cycle, which a
    /// per-part CPU figure must count somewhere (`RenderPlan.renderCycle`). Written by the render thread only.
    private let notifyNanosCell: UnsafeMutablePointer<Atomic<UInt64>>

    public init(registry: ComponentRegistry) {
        self.registry = registry
        notifyNanosCell = .allocate(capacity: 1)
        notifyNanosCell.initialize(to: Atomic(0))
    }

    deinit {
        // Stop first: uninitialize refuses a running graph, and the exchange must outlive the last cycle.
        if isInitialized {
            try? stop()
            try? uninitialize()
        }
        exchange.deallocate()
        notifyNanosCell.deinitialize(count: 1)
        notifyNanosCell.deallocate()
    }

    /// The render thread's time in this graph's render notifications since the graph was made (ns; a reader
    /// takes differences). Zero while unit timing is off (`UnitTiming`). Control thread.
    public var notifyNanos: UInt64 { notifyNanosCell.pointee.load(ordering: .relaxed) }

    // MARK: - Nodes

    /// Core Audio's AUGraphAddNode. On an open graph the unit is instantiated at once (uninitialized, not
    /// yet in the flow), so it can be configured before the update that connects it.
    public func addNode(_ description: ComponentDescription) throws(AudioUnitError) -> NodeID {
        guard let component = registry.findNext(after: nil, matching: description) else {
            throw AudioUnitError(.componentNotFound, "no audio unit matches \(description)")
        }
        let id = NodeID(rawValue: nextNode)
        nextNode += 1
        nodes[id] = Node(id: id, component: component, unit: isOpen ? component.instantiate() : nil)
        return id
    }

    /// Core Audio's AUGraphRemoveNode: queued; the node's connections go with it.
    public func removeNode(_ node: NodeID) throws(AudioUnitError) {
        try requireNode(node)
        pending.append(.removeNode(node))
        if !isInitialized { try applyPendingWhileStopped() }
    }

    /// Node IDs in the order they were added.
    public var nodeIDs: [NodeID] { nodes.keys.sorted() }

    /// Core Audio's AUGraphNodeInfo: the node's concrete description and, once the graph is open, its unit.
    public func nodeInfo(_ node: NodeID) throws(AudioUnitError) -> (description: ComponentDescription, unit: AudioUnit?)
    {
        let entry = try requireNode(node)
        return (entry.component.componentDescription, entry.unit)
    }

    /// Every node's unit, in node order (empty until the graph is open): what an audio session sizes before
    /// the graph initializes.
    public var units: [AudioUnit] { nodeIDs.compactMap { nodes[$0]?.unit } }

    /// The node's unit; fails when the graph is not open.
    public func unit(for node: NodeID) throws(AudioUnitError) -> AudioUnit {
        guard let unit = try requireNode(node).unit else {
            throw AudioUnitError(
                .cannotDoInCurrentContext, "the graph is not open: call open() before asking for units")
        }
        return unit
    }

    @discardableResult
    private func requireNode(_ node: NodeID) throws(AudioUnitError) -> Node {
        guard let entry = nodes[node] else { throw AudioUnitError(.nodeNotFound, "\(node) is not in this graph") }
        return entry
    }

    // MARK: - Open / close

    /// Core Audio's AUGraphOpen: instantiates every node's unit. Opening an open graph does nothing.
    public func open() {
        guard !isOpen else { return }
        for id in nodes.keys where nodes[id]!.unit == nil {
            nodes[id]!.unit = nodes[id]!.component.instantiate()
        }
        isOpen = true
    }

    /// Core Audio's AUGraphClose: disposes every unit. The graph must be uninitialized.
    public func close() throws(AudioUnitError) {
        guard !isInitialized else {
            throw AudioUnitError(.cannotDoInCurrentContext, "uninitialize the graph before closing it")
        }
        for id in nodes.keys.sorted() {
            if let unit = nodes[id]!.unit { try unit.dispose() }
            nodes[id]!.unit = nil
        }
        isOpen = false
    }

    // MARK: - Wiring (queued)

    /// Core Audio's AUGraphConnectNodeInput. Queued; the input must be free when the change is applied.
    public func connectNodeInput(
        _ source: NodeID, sourceOutput: Element, _ destination: NodeID, destinationInput: Element
    ) throws(AudioUnitError) {
        try requireNode(source)
        try requireNode(destination)
        guard source != destination else {
            throw AudioUnitError(.invalidConnection, "\(source) cannot feed itself")
        }
        pending.append(
            .connect(
                source: source, sourceOutput: sourceOutput, destination: destination, destinationInput: destinationInput
            ))
        if !isInitialized { try applyPendingWhileStopped() }
    }

    /// Core Audio's AUGraphDisconnectNodeInput. Queued.
    public func disconnectNodeInput(_ destination: NodeID, destinationInput: Element) throws(AudioUnitError) {
        try requireNode(destination)
        pending.append(.disconnect(destination: destination, destinationInput: destinationInput))
        if !isInitialized { try applyPendingWhileStopped() }
    }

    /// Core Audio's AUGraphSetNodeInputCallback (nil removes it). Queued.
    public func setNodeInputCallback(
        _ destination: NodeID, destinationInput: Element, _ callback: RenderCallbackStruct?
    ) throws(AudioUnitError) {
        try requireNode(destination)
        pending.append(.setInputCallback(destination: destination, destinationInput: destinationInput, callback))
        if !isInitialized { try applyPendingWhileStopped() }
    }

    /// Core Audio's AUGraphClearConnections. Queued.
    public func clearConnections() {
        pending.append(.clearConnections)
        if !isInitialized { try? applyPendingWhileStopped() }
    }

    /// Changes waiting for `update()` (Core Audio's to-do list), for inspection.
    public var pendingChangeCount: Int { pending.count }

    /// While uninitialized there is no render thread to protect, so changes are applied at once (validated
    /// the same way); Core Audio keeps them until AUGraphInitialize, which is indistinguishable.
    private func applyPendingWhileStopped() throws(AudioUnitError) {
        let changes = pending
        pending.removeAll()
        var next = (nodes: nodes, inputs: inputs, removed: [AudioUnit]())
        try apply(changes, to: &next)
        nodes = next.nodes
        inputs = next.inputs
        for unit in next.removed { try? unit.dispose() }
    }

    /// Applies `changes` in order to a copy of the topology; throws without touching `self` on the first
    /// invalid change.
    private func apply(
        _ changes: [Change],
        to topology: inout (nodes: [NodeID: Node], inputs: [InputKey: InputSource], removed: [AudioUnit])
    ) throws(AudioUnitError) {
        for change in changes {
            switch change {
            case .connect(let source, let sourceOutput, let destination, let destinationInput):
                guard let from = topology.nodes[source], let to = topology.nodes[destination] else {
                    throw AudioUnitError(.nodeNotFound, "connection \(source) → \(destination): node was removed")
                }
                if let unit = from.unit, Int(sourceOutput) >= unit.outputBusCount {
                    throw AudioUnitError(
                        .invalidConnection, "\(source) (\(unit.name)) has no output bus \(sourceOutput)")
                }
                if let unit = to.unit, Int(destinationInput) >= unit.inputBusCount {
                    throw AudioUnitError(
                        .invalidConnection, "\(destination) (\(unit.name)) has no input bus \(destinationInput)")
                }
                let key = InputKey(node: destination, bus: destinationInput)
                guard topology.inputs[key] == nil else {
                    throw AudioUnitError(
                        .invalidConnection,
                        "\(destination) input \(destinationInput) is already connected; disconnect it first")
                }
                topology.inputs[key] = .node(source, bus: sourceOutput)
                if Self.hasCycle(topology.inputs) {
                    throw AudioUnitError(
                        .invalidConnection, "connecting \(source) → \(destination) would make a cycle")
                }
            case .disconnect(let destination, let destinationInput):
                topology.inputs[InputKey(node: destination, bus: destinationInput)] = nil
            case .setInputCallback(let destination, let destinationInput, let callback):
                guard let to = topology.nodes[destination] else {
                    throw AudioUnitError(.nodeNotFound, "\(destination) was removed")
                }
                if let unit = to.unit, Int(destinationInput) >= unit.inputBusCount {
                    throw AudioUnitError(
                        .invalidConnection, "\(destination) (\(unit.name)) has no input bus \(destinationInput)")
                }
                topology.inputs[InputKey(node: destination, bus: destinationInput)] = callback.map { .callback($0) }
            case .removeNode(let node):
                guard let removed = topology.nodes.removeValue(forKey: node) else {
                    throw AudioUnitError(.nodeNotFound, "\(node) was already removed")
                }
                topology.inputs = topology.inputs.filter { key, source in
                    if key.node == node { return false }
                    if case .node(let from, _) = source, from == node { return false }
                    return true
                }
                if let unit = removed.unit { topology.removed.append(unit) }
            case .clearConnections:
                topology.inputs.removeAll()
            }
        }
    }

    private static func hasCycle(_ inputs: [InputKey: InputSource]) -> Bool {
        var edges: [NodeID: [NodeID]] = [:]
        for (key, source) in inputs {
            if case .node(let from, _) = source { edges[key.node, default: []].append(from) }
        }
        var state: [NodeID: Int] = [:]
        func visit(_ node: NodeID) -> Bool {
            if state[node] == 1 { return true }
            if state[node] == 2 { return false }
            state[node] = 1
            for next in edges[node] ?? [] where visit(next) { return true }
            state[node] = 2
            return false
        }
        return edges.keys.contains { visit($0) }
    }

    // MARK: - Render notify

    /// Core Audio's AUGraphAddRenderNotify: `callback` runs on the render thread before (PreRender) and
    /// after (PostRender) every cycle: the place to hand an instrument this cycle's MIDI events.
    public func addRenderNotify(_ callback: RenderCallbackStruct) throws(AudioUnitError) {
        notifies.append(callback)
        if isInitialized { try republish() }
    }

    /// Core Audio's AUGraphRemoveRenderNotify: removes the notification added with the same refCon.
    public func removeRenderNotify(refCon: UnsafeMutableRawPointer?) throws(AudioUnitError) {
        notifies.removeAll { $0.refCon == refCon }
        if isInitialized { try republish() }
    }

    // MARK: - Initialize / update

    /// The graph's single I/O unit (Core Audio: exactly one per graph).
    public func outputNode() throws(AudioUnitError) -> NodeID {
        let outputs = nodes.values.filter { $0.component.componentDescription.type == .output }.map(\.id).sorted()
        guard outputs.count == 1 else {
            throw AudioUnitError(
                .outputNodeError,
                outputs.isEmpty
                    ? "the graph has no I/O unit (add one of type 'auou')"
                    : "the graph has \(outputs.count) I/O units; it must have exactly one")
        }
        return outputs[0]
    }

    public var outputUnit: IOUnit? {
        guard let id = try? outputNode() else { return nil }
        return nodes[id]?.unit as? IOUnit
    }

    /// Core Audio's AUGraphInitialize: applies pending changes, checks there is exactly one I/O unit,
    /// propagates stream formats along connections (source output → destination input), initializes
    /// every unit sources-first, and publishes the first render plan.
    public func initialize() throws(AudioUnitError) {
        guard isOpen else { throw AudioUnitError(.cannotDoInCurrentContext, "open the graph before initializing it") }
        guard !isInitialized else { throw AudioUnitError(.initialized, "the graph is already initialized") }
        try applyPendingWhileStopped()
        let head = try outputNode()
        guard nodes[head]!.unit is IOUnit else {
            throw AudioUnitError(.outputNodeError, "\(head) is not an I/O unit")
        }
        var initializedHere: [AudioUnit] = []
        do {
            for id in sourcesFirst(nodes.keys.sorted()) {
                let unit = nodes[id]!.unit!
                try propagateFormats(into: id)
                if !unit.isInitialized {
                    try unit.initialize()
                    initializedHere.append(unit)
                }
            }
            let plan = try buildPlan(head: head, nodes: nodes, inputs: inputs)
            publish(plan, removedUnits: [])
        } catch {
            for unit in initializedHere.reversed() { try? unit.uninitialize() }
            throw error
        }
        (nodes[head]!.unit as! IOUnit).hostExchange = exchange
        isInitialized = true
    }

    /// Core Audio's AUGraphUninitialize. The graph must be stopped.
    public func uninitialize() throws(AudioUnitError) {
        guard isInitialized else { throw AudioUnitError(.uninitialized, "the graph is not initialized") }
        guard !isRunning else {
            throw AudioUnitError(.cannotDoInCurrentContext, "stop the graph before uninitializing it")
        }
        let old = exchange.publish(nil)
        if let old { _ = exchange.waitUntilUnused(old, timeout: .seconds(5)) }
        for unit in published?.units ?? [] { unit.isInFlow = false }
        published = nil
        for entry in retired { for unit in entry.removedUnits { try? unit.dispose() } }
        retired.removeAll()
        if let head = try? outputNode(), let io = nodes[head]?.unit as? IOUnit { io.hostExchange = nil }
        for id in sourcesFirst(nodes.keys.sorted()).reversed() {
            if let unit = nodes[id]?.unit, unit.isInitialized { try unit.uninitialize() }
        }
        isInitialized = false
    }

    /// Core Audio's AUGraphUpdate: applies the pending list to the running (or initialized) graph. Units that
    /// join the flow uninitialized get their input formats propagated and are initialized; a connection into
    /// an already-initialized unit must match its input format exactly. On success the new plan is live
    /// ("there is no step three"); on failure nothing changed and the pending list is discarded.
    public func update() throws(AudioUnitError) {
        guard isInitialized else { return }
        guard !pending.isEmpty else { return }
        let changes = pending
        pending.removeAll()
        var next = (nodes: nodes, inputs: inputs, removed: [AudioUnit]())
        try apply(changes, to: &next)
        let head = try outputNode(in: next.nodes)
        let flow = reachable(from: head, inputs: next.inputs)
        var initializedHere: [AudioUnit] = []
        do {
            for id in sourcesFirst(flow, inputs: next.inputs) {
                let unit = next.nodes[id]!.unit!
                if !unit.isInitialized {
                    try propagateFormats(into: id, nodes: next.nodes, inputs: next.inputs)
                    try unit.initialize()
                    initializedHere.append(unit)
                } else {
                    try checkFormats(into: id, nodes: next.nodes, inputs: next.inputs)
                }
            }
            let plan = try buildPlan(head: head, nodes: next.nodes, inputs: next.inputs)
            nodes = next.nodes
            inputs = next.inputs
            publish(plan, removedUnits: next.removed)
        } catch {
            for unit in initializedHere.reversed() { try? unit.uninitialize() }
            throw error
        }
    }

    /// Rebuilds the plan from the applied topology (after a render-notify change).
    private func republish() throws(AudioUnitError) {
        let plan = try buildPlan(head: try outputNode(), nodes: nodes, inputs: inputs)
        publish(plan, removedUnits: [])
    }

    /// Swaps `plan` in, then frees what the render thread no longer holds.
    private func publish(_ plan: RenderPlanStorage, removedUnits: [AudioUnit]) {
        for unit in plan.units { unit.isInFlow = true }
        let previous = published
        published = plan
        _ = exchange.publish(UnsafeMutableRawPointer(plan.plan))
        if let previous {
            retired.append((previous, removedUnits))
        } else {
            for unit in removedUnits { try? unit.dispose() }
        }
        if let previous, !exchange.waitUntilUnused(UnsafeMutableRawPointer(previous.plan), timeout: retirementTimeout) {
            // The render thread is stalled inside the old plan; keep it (and its units) until a later update.
        }
        var stillHeld: [(plan: RenderPlanStorage, removedUnits: [AudioUnit])] = []
        for entry in retired {
            if exchange.isInUse(UnsafeMutableRawPointer(entry.plan.plan)) {
                stillHeld.append(entry)
                continue
            }
            let live = Set(plan.units.map(ObjectIdentifier.init))
            for unit in entry.plan.units where !live.contains(ObjectIdentifier(unit)) { unit.isInFlow = false }
            for unit in entry.removedUnits { try? unit.dispose() }
        }
        retired = stillHeld
    }

    /// Plans not yet freed because the render thread held them at the last update (diagnostics, tests).
    public var retiredPlanCount: Int { retired.count }

    private func outputNode(in nodes: [NodeID: Node]) throws(AudioUnitError) -> NodeID {
        let outputs = nodes.values.filter { $0.component.componentDescription.type == .output }.map(\.id)
        guard outputs.count == 1 else {
            throw AudioUnitError(
                .outputNodeError, "the graph must keep exactly one I/O unit (it would have \(outputs.count))")
        }
        return outputs[0]
    }

    /// Nodes the I/O unit pulls, directly or through others.
    private func reachable(from head: NodeID, inputs: [InputKey: InputSource]) -> [NodeID] {
        var seen: Set<NodeID> = [head]
        var stack = [head]
        while let node = stack.popLast() {
            for (key, source) in inputs where key.node == node {
                if case .node(let from, _) = source, seen.insert(from).inserted { stack.append(from) }
            }
        }
        return seen.sorted()
    }

    /// `ids` ordered so every node comes after the nodes feeding it (deterministic: ties by node ID).
    private func sourcesFirst(_ ids: [NodeID], inputs: [InputKey: InputSource]? = nil) -> [NodeID] {
        let inputs = inputs ?? self.inputs
        let wanted = Set(ids)
        var order: [NodeID] = []
        var done: Set<NodeID> = []
        func visit(_ node: NodeID) {
            guard !done.contains(node) else { return }
            done.insert(node)
            for key in inputs.keys.sorted() where key.node == node {
                if case .node(let from, _) = inputs[key]!, wanted.contains(from) { visit(from) }
            }
            order.append(node)
        }
        for id in ids { visit(id) }
        return order
    }

    /// Copies each connected source's output format onto the destination's input (one direction only).
    private func propagateFormats(
        into node: NodeID, nodes: [NodeID: Node]? = nil, inputs: [InputKey: InputSource]? = nil
    ) throws(AudioUnitError) {
        let nodes = nodes ?? self.nodes
        let inputs = inputs ?? self.inputs
        let unit = nodes[node]!.unit!
        for key in inputs.keys.sorted() where key.node == node {
            guard case .node(let from, let bus) = inputs[key]! else { continue }
            let format = nodes[from]!.unit!.outputFormat(Int(bus))
            if unit.inputFormat(Int(key.bus)) != format {
                try unit.set(.streamFormat, format, scope: .input, element: key.bus)
            }
        }
    }

    /// For a unit already initialized: every connected source must produce exactly its input format.
    private func checkFormats(into node: NodeID, nodes: [NodeID: Node], inputs: [InputKey: InputSource])
        throws(AudioUnitError)
    {
        let unit = nodes[node]!.unit!
        for key in inputs.keys.sorted() where key.node == node {
            guard case .node(let from, let bus) = inputs[key]! else { continue }
            let source = nodes[from]!.unit!
            let produced = source.outputFormat(Int(bus))
            let expected = unit.inputFormat(Int(key.bus))
            guard produced == expected else {
                throw AudioUnitError(
                    .formatNotSupported,
                    "\(from) (\(source.name)) output \(bus) is \(produced.compactDescription) but \(node) "
                        + "(\(unit.name)) input \(key.bus) expects \(expected.compactDescription)"
                )
            }
        }
    }

    private func buildPlan(head: NodeID, nodes: [NodeID: Node], inputs: [InputKey: InputSource]) throws(AudioUnitError)
        -> RenderPlanStorage
    {
        let flow = sourcesFirst(reachable(from: head, inputs: inputs), inputs: inputs)
        var index: [NodeID: Int] = [:]
        for (position, id) in flow.enumerated() { index[id] = position }
        let specs = flow.map { id in
            let unit = nodes[id]!.unit!
            return RenderPlanStorage.NodeSpec(
                unit: unit,
                inputs: (0..<unit.inputBusCount).map { bus in
                    switch inputs[InputKey(node: id, bus: Element(bus))] {
                    case .node(let from, let outputBus): .node(index[from]!, bus: outputBus)
                    case .callback(let callback): .callback(callback)
                    case nil: .silence
                    }
                })
        }
        return try RenderPlanStorage(
            nodes: specs, head: index[head]!, notifies: notifies, notifyNanos: notifyNanosCell)
    }

    // MARK: - Start / stop

    /// Core Audio's AUGraphStart: starts the I/O unit. The graph must be initialized first.
    public func start() throws(AudioUnitError) {
        guard isInitialized else {
            throw AudioUnitError(.cannotDoInCurrentContext, "initialize the graph before starting it")
        }
        try outputUnit!.start()
    }

    /// Core Audio's AUGraphStop.
    public func stop() throws(AudioUnitError) {
        guard isInitialized, let io = outputUnit else { return }
        try io.stop()
    }

    /// Core Audio's AUGraphIsRunning.
    public var isRunning: Bool { outputUnit?.isRunning ?? false }

    /// The render thread's way in (see `RenderEntry`); nil until initialized.
    public var renderEntry: RenderEntry? { isInitialized ? RenderEntry(exchange: exchange) : nil }

    // MARK: - Printing

    /// Core Audio's CAShow: nodes, connections, callbacks, formats and state, as deterministic text.
    public func dump() -> String {
        var lines: [String] = []
        let state = isRunning ? "running" : isInitialized ? "initialized" : isOpen ? "open" : "closed"
        lines.append("AudioGraph: \(nodes.count) nodes, \(inputs.count) inputs wired, \(state)")
        lines.append("Member Nodes:")
        for id in nodes.keys.sorted() {
            let node = nodes[id]!
            let desc = node.component.componentDescription
            var line = "  \(id): '\(desc.type)' '\(desc.subtype)' '\(desc.manufacturer)', \(node.component.name)"
            if let unit = node.unit {
                line += unit.isInitialized ? " [initialized" : " [uninitialized"
                if let io = unit as? IOUnit, io.isRunning { line += ", running" }
                line += ", \(unit.maximumFramesPerSlice) max frames]"
            } else {
                line += " [not instantiated]"
            }
            lines.append(line)
            guard let unit = node.unit else { continue }
            for bus in 0..<unit.inputBusCount {
                let key = InputKey(node: id, bus: Element(bus))
                let source: String
                switch inputs[key] {
                case .node(let from, let outputBus): source = "← \(from) output \(outputBus)"
                case .callback: source = "← render callback"
                case nil: source = "(unconnected)"
                }
                lines.append("    input \(bus): \(unit.inputFormat(bus).compactDescription) \(source)")
            }
            for bus in 0..<unit.outputBusCount {
                lines.append("    output \(bus): \(unit.outputFormat(bus).compactDescription)")
            }
        }
        lines.append("Connections:")
        for key in inputs.keys.sorted() {
            if case .node(let from, let bus) = inputs[key]! {
                lines.append("  \(from) output \(bus) => \(key.node) input \(key.bus)")
            }
        }
        lines.append("Input Callbacks:")
        for key in inputs.keys.sorted() {
            if case .callback = inputs[key]! { lines.append("  callback => \(key.node) input \(key.bus)") }
        }
        lines.append("Render Notifications: \(notifies.count)")
        lines.append("Pending Changes: \(pending.count)")
        return lines.joined(separator: "\n")
    }
}

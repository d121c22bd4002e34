import AulosCore
import AulosMIDI

/// Decides where each incoming channel message goes in a playing rig set: which parts hear it (channel,
/// key range) and as what (transposition, velocity curve); which controllers move unit parameters instead;
/// which program changes on the control channel switch rigs. It also keeps the one record of held notes, so
/// a note-off follows its note-on (a key held across a rig switch or a split is released where it started)
/// and when a keyboard goes away its notes and pedal are released on the parts that play them.
///
/// The decisions are made by a `RoutingKernel` — fixed tables built here from the rig, usable on the render
/// thread. This type owns the kernel and is its control-side face: the targets the kernel's controls stand
/// for (by index), the mappings in force and MIDI-learn's result, by name. Offline, a render calls `route`
/// on its own thread; live, `LiveMIDIPath` hands the kernel to the render thread (`LiveMIDIInput`), which
/// alone routes with it from then on, and keeps this type's names in step from the actions it reports.
///
/// Threads: whoever owns it (the control thread, or an offline render's); see above for the kernel. Copies
/// share one kernel.
public struct RigRouter: @unchecked Sendable {
    /// A change the router decides on besides the events.
    public enum Action: @unchecked Sendable {
        /// A mapped controller moved: the target's new value.
        case control(ControlTarget, Float)
        /// Program change on the control channel: rig `index` is now the one played.
        case rigSwitched(Int)
        /// Program change on the active rig's snapshot channel: its snapshot `snapshot` (from 0) is recalled.
        case snapshotRecalled(rig: Int, snapshot: Int)
        /// Program change on the file player's song channel: song `program` (from 0) is chosen.
        case songChosen(Int)
        /// A MIDI Tuning Standard message for a sampler part (index into the rig's parts): FluidSynth copies
        /// its tuning on every change (an allocation), so the sampler is retuned on the control thread at a
        /// slice boundary — its instance swapped — rather than in its render.
        case retune(part: Int, changes: [MIDITuningMessage.KeyChange])
    }

    /// A routed message: the part (its instrument's destination index) and the message it hears.
    public typealias Delivery = (destination: UInt16, message: ChannelMessage)

    /// What one message became.
    public struct Routed {
        public var deliveries: [Delivery] = []
        public var actions: [Action] = []
    }

    typealias Mapping = PlaybackRig.ResolvedControl

    /// The kernel and the names behind its indices. A class so that the kernel is freed once, when the last
    /// copy of the router (or the live input routing with it) lets go.
    final class Storage {
        let kernel: UnsafeMutablePointer<RoutingKernel>
        /// The targets the kernel's controls stand for: each rig's controls, then those learned.
        var targets: [ControlTarget]
        var learned: [Mapping] = []
        var learning: ControlTarget?
        var learnedMapping: ControlMapping?

        init(kernel: RoutingKernel, targets: [ControlTarget]) {
            self.kernel = .allocate(capacity: 1)
            self.kernel.initialize(to: kernel)
            self.targets = targets
        }

        deinit {
            kernel.pointee.deallocate()
            kernel.deinitialize(count: 1)
            kernel.deallocate()
        }
    }

    let storage: Storage
    /// Each rig's controls, resolved.
    let controls: [[Mapping]]

    /// Routing for `rig`'s set, with its rigs' controls; with `switchingRigs` false, the set's control
    /// channel and the rigs' snapshot channels are channels like the others (a file in the live session's
    /// player plays whole on the rig playing: switching rigs and recalling snapshots is the keyboards' and
    /// the roads'). Program changes on `songChannel` (1…16) choose the live file player's song.
    public init(rig: PlaybackRig, switchingRigs: Bool = true, songChannel: Int? = nil) {
        var targets: [ControlTarget] = []
        var routedRigs: [RoutedRig] = []
        for (index, entry) in rig.set.entries.enumerated() {
            let mappings = rig.controls.indices.contains(index) ? rig.controls[index] : []
            let routed = mappings.map { resolved in
                targets.append(resolved.target)
                return RoutedMapping(
                    controller: UInt8(clamping: resolved.mapping.controller),
                    channel: UInt8(clamping: resolved.mapping.channel ?? 0),
                    control: resolved.target.routed(
                        minimum: resolved.mapping.minimum, maximum: resolved.mapping.maximum,
                        index: targets.count - 1))
            }
            // A file in the live player plays whole: its program changes are played, not recalls.
            routedRigs.append(
                RoutedRig(
                    bank: entry.bank, program: entry.program, controls: routed,
                    snapshotChannel: switchingRigs ? entry.rig.snapshotChannel.map { UInt8($0 - 1) } : nil,
                    snapshotPrograms: entry.rig.snapshots.indices.map { entry.rig.snapshots[$0].program ?? $0 }))
        }
        let parts = rig.parts.map { loaded in
            (
                route: RoutedPart(
                    rig: loaded.rigIndex,
                    channels: loaded.part.channels.reduce(0) { $0 | UInt16(1) << UInt16($1 - 1) },
                    keys: loaded.part.keys, transpose: loaded.part.transpose),
                velocities: loaded.part.velocity.table
            )
        }
        let kernel = RoutingKernel(
            parts: parts, rigs: routedRigs,
            controlChannel: switchingRigs ? rig.set.controlChannel.map { UInt8($0 - 1) } : nil,
            songChannel: songChannel.map { UInt8($0 - 1) })
        storage = Storage(kernel: kernel, targets: targets)
        controls = rig.controls
    }

    /// The kernel, for the render thread to route with (`LiveMIDIInput`), and the object that keeps it alive.
    public var kernel: (kernel: UnsafeMutablePointer<RoutingKernel>, owner: AnyObject) {
        (storage.kernel, storage)
    }

    /// How many parts (destinations) the router delivers to.
    public var partCount: Int { storage.kernel.pointee.partCount }
    /// 0-based control channel.
    public var controlChannel: UInt8? { storage.kernel.pointee.controlChannelIndex }
    /// The rig being played (index into the set): published by the kernel, so readable while the render
    /// thread routes.
    public var activeRig: Int { storage.kernel.pointee.published.pointee.activeRig.load(ordering: .relaxed) }
    /// Rig switches so far.
    public var switchCount: Int { storage.kernel.pointee.published.pointee.switchCount.load(ordering: .relaxed) }
    /// The mapping learned since `learn`, once a controller has moved.
    public var learnedMapping: ControlMapping? { storage.learnedMapping }
    /// The target a MIDI-learn is waiting to map, if any.
    public var learningTarget: ControlTarget? { storage.learning }
    /// The mappings MIDI-learn made, oldest first.
    public var learnedMappings: [ControlMapping] { storage.learned.map(\.mapping) }
    /// The mappings in force: the active rig's, then learned ones (which win).
    public var mappings: [ControlMapping] { controls[activeRig].map(\.mapping) + storage.learned.map(\.mapping) }

    // MARK: Control side

    /// Starts MIDI-learn for `target` on the control side: the kernel form of the target to hand to the
    /// kernel (directly offline, through the live input's queue live).
    public func beginLearning(_ target: ControlTarget) -> RoutedControl {
        storage.learning = target
        storage.learnedMapping = nil
        let index =
            storage.targets.firstIndex { $0.name == target.name }
            ?? {
                storage.targets.append(target)
                return storage.targets.count - 1
            }()
        return target.routed(index: index)
    }

    /// Ends MIDI-learn on the control side.
    public func endLearning() { storage.learning = nil }

    /// What a kernel action means for the control thread: the target by name, a rig switch. A learned
    /// mapping is remembered here (for `mappings` and `learnedMapping`) and becomes the value it set.
    public func action(for routed: RoutedAction) -> Action? {
        switch routed {
        case .none:
            return nil
        case .control(let control, let value):
            return .control(storage.targets[Int(control.target)], value)
        case .rigSwitched(let index):
            return .rigSwitched(Int(index))
        case .snapshotRecalled(let rig, let snapshot):
            return .snapshotRecalled(rig: Int(rig), snapshot: Int(snapshot))
        case .songChosen(let program):
            return .songChosen(Int(program))
        case .learned(let controller, let channel, let control, let value):
            let target = storage.targets[Int(control.target)]
            let mapping = ControlMapping(controller: Int(controller), channel: Int(channel), target: target.name)
            storage.learned.removeAll {
                $0.mapping.controller == mapping.controller && $0.mapping.channel == mapping.channel
            }
            storage.learned.append(Mapping(mapping: mapping, target: target))
            if storage.learned.count > RoutingKernel.learnedCapacity { storage.learned.removeFirst() }
            storage.learning = nil
            storage.learnedMapping = mapping
            return .control(target, value)
        }
    }

    // MARK: Routing on the owner's thread (offline renders, tests, before a live rig starts)

    /// The next controller moved on any channel gets mapped to `target` (replacing any mapping of that
    /// controller and channel).
    public mutating func learn(_ target: ControlTarget) {
        storage.kernel.pointee.learn(beginLearning(target))
    }

    public mutating func cancelLearning() {
        endLearning()
        storage.kernel.pointee.cancelLearning()
    }

    /// Switches to rig `index` as a program change on the control channel would. The rig left behind keeps
    /// its held notes until their keys are released, but its sustain pedal is lifted (the pedal's release
    /// would otherwise go to the new rig).
    public mutating func select(rig index: Int) -> [Delivery] {
        deliveries(storage.kernel.pointee.select(rig: index))
    }

    /// Routes one channel message from `source`: what each part hears, and any parameter change or rig
    /// switch it causes.
    public mutating func route(_ incoming: ChannelMessage, from source: MIDISource = .file) -> Routed {
        let result = storage.kernel.pointee.route(incoming, from: source.rawValue)
        return Routed(deliveries: deliveries(result.count), actions: action(for: result.action).map { [$0] } ?? [])
    }

    /// `source` is gone (unplugged, disconnected): a note-off for every note it holds, on the parts playing
    /// it, then the sustain pedal up on every channel where only it held the pedal. Returns the deliveries
    /// and how many notes were released.
    public mutating func release(_ source: MIDISource) -> (deliveries: [Delivery], notes: Int) {
        var all: [Delivery] = []
        var notes = 0
        var key = 0
        var done = false
        while !done {
            let step = storage.kernel.pointee.releaseStep(source.rawValue, key: &key)
            all += deliveries(step.count)
            notes += step.notes
            done = step.done
        }
        return (all, notes)
    }

    /// Releases what every source holds (the input stopping).
    public mutating func releaseAll() -> [Delivery] {
        storage.kernel.pointee.heldSources.flatMap { release(MIDISource(rawValue: $0)).deliveries }
    }

    /// Notes sounding now (struck and not yet released), across every source.
    public var heldNoteCount: Int { storage.kernel.pointee.heldNoteCount }

    /// The kernel's first `count` deliveries, copied.
    private func deliveries(_ count: Int) -> [Delivery] {
        Array(UnsafeBufferPointer(start: storage.kernel.pointee.deliveries, count: count))
    }
}

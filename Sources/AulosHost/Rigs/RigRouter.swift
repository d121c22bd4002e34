import AulosCore
import AulosMIDI
import Synchronization

/// Decides where each incoming channel message goes in a playing rig set: which parts hear it (channel,
/// key range) and as what (transpose, velocity curve); which controllers move unit parameters instead;
/// which program changes on the control channel switch rigs. Note-offs follow their note-ons, so a key
/// held across a rig switch (or a split) is released on the part that started it: nothing hangs.
///
/// Threads: `route` on the MIDI thread while playing live (on the control thread offline); `learn`,
/// `mappings` and `activeRig` from the control thread. The state is behind a mutex — never taken on the
/// render thread (the router only feeds queues and atomics the render thread reads).
public final class RigRouter: @unchecked Sendable {
    /// A change the router decides on besides the events.
    public enum Action: @unchecked Sendable {
        /// A mapped controller moved: the target's new value.
        case control(ControlTarget, Float)
        /// Program change on the control channel: rig `index` is now the one played.
        case rigSwitched(Int)
    }

    /// A routed message: the part (its instrument's destination index) and the message it hears.
    public typealias Delivery = (destination: UInt16, message: MIDIMessage)

    struct PartRoute {
        var rig: Int
        var channels: UInt16
        var keys: ClosedRange<Int>
        var transpose: Int
        var velocities: [UInt8]
        var takesProgramChanges: Bool
    }

    struct Mapping {
        var mapping: ControlMapping
        var target: ControlTarget
    }

    struct State {
        var active = 0
        var bank = [Int](repeating: 0, count: 16)
        /// For each channel · 128 + note, the parts (bit per destination) that a note-on went to.
        var owners = [UInt64](repeating: 0, count: 16 * 128)
        /// Sustain pedal state per channel: a rig switch lifts it on the rig left behind.
        var sustain = [Bool](repeating: false, count: 16)
        var learned: [Mapping] = []
        var learning: ControlTarget?
        var lastLearned: ControlMapping?
        var switches = 0
    }

    let parts: [PartRoute]
    /// Each rig's controls, resolved.
    let controls: [[Mapping]]
    /// 0-based control channel.
    public let controlChannel: UInt8?
    let set: RigSet
    private let state = Locked(State())

    init(set: RigSet, rig: PlaybackRig) throws(AudioUnitError) {
        self.set = set
        controlChannel = set.controlChannel.map { UInt8($0 - 1) }
        parts = rig.parts.map { loaded in
            PartRoute(rig: loaded.rigIndex, channels: loaded.part.channels.reduce(0) { $0 | UInt16(1) << UInt16($1 - 1) },
                      keys: loaded.part.keys, transpose: loaded.part.transpose, velocities: loaded.part.velocity.table,
                      takesProgramChanges: loaded.part.instrument != .synth)
        }
        var controls: [[Mapping]] = []
        for (index, entry) in set.entries.enumerated() {
            var resolved: [Mapping] = []
            for mapping in entry.rig.controls {
                do {
                    resolved.append(Mapping(mapping: mapping, target: try ControlTarget.resolve(mapping.target, in: rig, preferring: index)))
                } catch {
                    throw AudioUnitError(error.code, "rig '\(entry.rig.name)': controls: cc \(mapping.controller): \(error.detail)")
                }
            }
            controls.append(resolved)
        }
        self.controls = controls
    }

    /// The rig being played (index into the set).
    public var activeRig: Int { state.withLock { $0.active } }
    /// Rig switches so far.
    public var switchCount: Int { state.withLock { $0.switches } }

    /// The next controller moved on any channel gets mapped to `target` (replacing any mapping of that
    /// controller and channel). Control thread.
    public func learn(_ target: ControlTarget) {
        state.withLock {
            $0.learning = target
            $0.lastLearned = nil
        }
    }

    /// The mapping learned since `learn`, once a controller has moved.
    public var learnedMapping: ControlMapping? { state.withLock { $0.lastLearned } }

    public func cancelLearning() { state.withLock { $0.learning = nil } }

    /// The mappings in force: the active rig's, then learned ones (which win).
    public var mappings: [ControlMapping] {
        state.withLock { state in controls[state.active].map(\.mapping) + state.learned.map(\.mapping) }
    }

    /// Switches to rig `index` as a program change on the control channel would.
    public func select(rig index: Int) -> [Delivery] {
        state.withLock { state in switchTo(index, &state) }
    }

    /// Routes one message: what each part hears, and any parameter change or rig switch it causes.
    public func route(_ message: MIDIMessage, actions: inout [Action]) -> [Delivery] {
        let message = message.normalized
        guard let channel = message.channel else { return [] }
        return state.withLock { state -> [Delivery] in
            if channel == controlChannel {
                switch message {
                case .controlChange(_, 0, let value):
                    state.bank[Int(channel)] = Int(value) << 7 | state.bank[Int(channel)] & 0x7F
                    return []
                case .controlChange(_, 32, let value):
                    state.bank[Int(channel)] = state.bank[Int(channel)] & ~0x7F | Int(value)
                    return []
                case .programChange(_, let program):
                    // A program no rig answers is ignored (said in the docs): better than silence.
                    guard let index = set.index(bank: state.bank[Int(channel)], program: Int(program)), index != state.active else { return [] }
                    actions.append(.rigSwitched(index))
                    return switchTo(index, &state)
                default:
                    break
                }
            }
            switch message {
            case .noteOn(_, let note, let velocity):
                var deliveries: [Delivery] = []
                let key = Int(channel) * 128 + Int(note)
                for (index, part) in parts.enumerated() where part.rig == state.active && part.channels & (1 << UInt16(channel)) != 0
                    && part.keys.contains(Int(note)) {
                    let played = Int(note) + part.transpose
                    guard (0...127).contains(played) else { continue }
                    state.owners[key] |= 1 << UInt64(index)
                    deliveries.append((UInt16(index), .noteOn(channel: channel, note: UInt8(played), velocity: part.velocities[Int(velocity)])))
                }
                return deliveries
            case .noteOff(_, let note, let velocity):
                let key = Int(channel) * 128 + Int(note)
                defer { state.owners[key] = 0 }
                return owners(state.owners[key]).map { index in
                    (UInt16(index), .noteOff(channel: channel, note: UInt8(Int(note) + parts[index].transpose), velocity: velocity))
                }
            case .polyPressure(_, let note, let pressure):
                return owners(state.owners[Int(channel) * 128 + Int(note)]).map { index in
                    (UInt16(index), .polyPressure(channel: channel, note: UInt8(Int(note) + parts[index].transpose), pressure: pressure))
                }
            case .controlChange(_, let controller, let value):
                if let target = state.learning {
                    let mapping = ControlMapping(controller: Int(controller), channel: Int(channel) + 1, target: target.name)
                    state.learned.removeAll { $0.mapping.controller == mapping.controller && $0.mapping.channel == mapping.channel }
                    state.learned.append(Mapping(mapping: mapping, target: target))
                    state.learning = nil
                    state.lastLearned = mapping
                    actions.append(.control(target, target.value(controller: value, minimum: nil, maximum: nil)))
                    return []
                }
                if let mapped = (state.learned.reversed() + controls[state.active]).first(where: {
                    $0.mapping.controller == Int(controller) && ($0.mapping.channel == nil || $0.mapping.channel == Int(channel) + 1)
                }) {
                    actions.append(.control(mapped.target, mapped.target.value(controller: value, minimum: mapped.mapping.minimum, maximum: mapped.mapping.maximum)))
                    return []
                }
                if controller == 64 { state.sustain[Int(channel)] = value >= 64 }
                // Silencing controllers reach every rig (held notes of a rig left behind too).
                let everyRig = controller == 120 || controller == 123 || controller == 121
                if controller == 120 || controller == 123 {
                    for note in 0..<128 { state.owners[Int(channel) * 128 + note] = 0 }
                }
                return listeners(channel, state.active, everyRig: everyRig).map { (UInt16($0), message) }
            case .programChange:
                return listeners(channel, state.active, everyRig: false).filter { parts[$0].takesProgramChanges }.map { (UInt16($0), message) }
            default:
                return listeners(channel, state.active, everyRig: false).map { (UInt16($0), message) }
            }
        }
    }

    /// Makes rig `index` the one played. The rig left behind keeps its held notes until their keys are
    /// released, but its sustain pedal is lifted (the pedal's release would otherwise go to the new rig).
    private func switchTo(_ index: Int, _ state: inout State) -> [Delivery] {
        guard index != state.active, set.entries.indices.contains(index) else { return [] }
        var deliveries: [Delivery] = []
        for channel in 0..<16 where state.sustain[channel] {
            for part in listeners(UInt8(channel), state.active, everyRig: false) {
                deliveries.append((UInt16(part), .controlChange(channel: UInt8(channel), controller: 64, value: 0)))
            }
        }
        state.active = index
        state.switches += 1
        return deliveries
    }

    private func listeners(_ channel: UInt8, _ rig: Int, everyRig: Bool) -> [Int] {
        parts.indices.filter { (everyRig || parts[$0].rig == rig) && parts[$0].channels & (1 << UInt16(channel)) != 0 }
    }

    private func owners(_ bits: UInt64) -> [Int] {
        (0..<parts.count).filter { bits & (1 << UInt64($0)) != 0 }
    }
}

import AulosCore
import AulosMIDI

/// Decides where each incoming channel message goes in a playing rig set: which parts hear it (channel,
/// key range) and as what (transposition, velocity curve); which controllers move unit parameters instead;
/// which program changes on the control channel switch rigs. It also keeps the one record of held notes:
/// for every (channel, note), the parts its note-on went to and the sources holding it down. So a note-off
/// follows its note-on (a key held across a rig switch or a split is released where it started), and when
/// a keyboard goes away its notes and pedal are released on the parts that play them: nothing hangs.
///
/// A value with no lock of its own: offline, one render owns it; live, `LiveMIDIPath` keeps it behind the
/// one lock the MIDI thread and the control thread share.
///
/// Threads: whoever owns it; it never touches the render thread (it only decides; its callers feed queues
/// and atomics the render thread reads).
public struct RigRouter: @unchecked Sendable {
    /// A change the router decides on besides the events.
    public enum Action: @unchecked Sendable {
        /// A mapped controller moved: the target's new value.
        case control(ControlTarget, Float)
        /// Program change on the control channel: rig `index` is now the one played.
        case rigSwitched(Int)
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

    struct PartRoute {
        var rig: Int
        var channels: UInt16
        var keys: ClosedRange<Int>
        var transpose: Int
        var velocities: [UInt8]
    }

    typealias Mapping = PlaybackRig.ResolvedControl

    /// A note sounding: the parts (a bit per destination) its note-on went to, and the sources (a bit per
    /// source slot) holding its key down.
    struct HeldNote {
        var parts: UInt64 = 0
        var sources: UInt64 = 0
    }

    /// The most sources tracked one by one; more share the last slot (their notes release together).
    static let sourceSlots = 64

    let parts: [PartRoute]
    /// How many parts (destinations) the router delivers to.
    public var partCount: Int { parts.count }
    /// Each rig's controls, resolved.
    let controls: [[Mapping]]
    /// 0-based control channel.
    public let controlChannel: UInt8?
    let set: RigSet

    /// The rig being played (index into the set).
    public private(set) var activeRig = 0
    /// Rig switches so far.
    public private(set) var switchCount = 0
    var bank = [Int](repeating: 0, count: 16)
    /// By channel · 128 + note.
    var held = [HeldNote](repeating: HeldNote(), count: 16 * 128)
    /// Sources holding the sustain pedal down, per channel (a bit per source slot).
    var pedal = [UInt64](repeating: 0, count: 16)
    /// Which source each slot stands for (nil: free).
    var sources: [MIDISource?] = []
    var learned: [Mapping] = []
    var learning: ControlTarget?
    /// The mapping learned since `learn`, once a controller has moved.
    public private(set) var learnedMapping: ControlMapping?

    /// Routing for `rig`'s set, with its rigs' controls.
    public init(rig: PlaybackRig) {
        set = rig.set
        controlChannel = rig.set.controlChannel.map { UInt8($0 - 1) }
        parts = rig.parts.map { loaded in
            PartRoute(
                rig: loaded.rigIndex, channels: loaded.part.channels.reduce(0) { $0 | UInt16(1) << UInt16($1 - 1) },
                keys: loaded.part.keys, transpose: loaded.part.transpose, velocities: loaded.part.velocity.table)
        }
        controls = rig.controls
    }

    // MARK: Control

    /// The next controller moved on any channel gets mapped to `target` (replacing any mapping of that
    /// controller and channel).
    public mutating func learn(_ target: ControlTarget) {
        learning = target
        learnedMapping = nil
    }

    public mutating func cancelLearning() { learning = nil }

    /// The target a MIDI-learn is waiting to map, if any.
    public var learningTarget: ControlTarget? { learning }

    /// The mappings in force: the active rig's, then learned ones (which win).
    public var mappings: [ControlMapping] { controls[activeRig].map(\.mapping) + learned.map(\.mapping) }

    /// Switches to rig `index` as a program change on the control channel would. The rig left behind keeps
    /// its held notes until their keys are released, but its sustain pedal is lifted (the pedal's release
    /// would otherwise go to the new rig).
    public mutating func select(rig index: Int) -> [Delivery] {
        guard index != activeRig, set.entries.indices.contains(index) else { return [] }
        var deliveries: [Delivery] = []
        for channel in 0..<16 where pedal[channel] != 0 {
            for part in listeners(UInt8(channel), everyRig: false) {
                deliveries.append((UInt16(part), .controlChange(channel: UInt8(channel), controller: 64, value: 0)))
            }
        }
        activeRig = index
        switchCount += 1
        return deliveries
    }

    // MARK: Routing

    /// Routes one channel message from `source`: what each part hears, and any parameter change or rig
    /// switch it causes.
    public mutating func route(_ incoming: ChannelMessage, from source: MIDISource = .file) -> Routed {
        let message = incoming.normalized
        let channel = message.channel
        var routed = Routed()
        if channel == controlChannel {
            switch (message.command, message.data1) {
            case (0xB0, 0):
                bank[Int(channel)] = Int(message.data2) << 7 | bank[Int(channel)] & 0x7F
                return routed
            case (0xB0, 32):
                bank[Int(channel)] = bank[Int(channel)] & ~0x7F | Int(message.data2)
                return routed
            case (0xC0, _):
                // A program no rig answers is ignored (said in the docs): better than silence.
                guard let index = set.index(bank: bank[Int(channel)], program: Int(message.data1)), index != activeRig
                else { return routed }
                routed.actions.append(.rigSwitched(index))
                routed.deliveries = select(rig: index)
                return routed
            default:
                break
            }
        }
        let key = Int(channel) * 128 + Int(message.data1)
        switch message.command {
        case 0x90:
            let sourceBit = slot(for: source)
            for (index, part) in parts.enumerated()
            where part.rig == activeRig && part.channels & (1 << UInt16(channel)) != 0
                && part.keys.contains(Int(message.data1))
            {
                let played = Int(message.data1) + part.transpose
                guard (0...127).contains(played) else { continue }
                held[key].parts |= 1 << UInt64(index)
                held[key].sources |= sourceBit
                routed.deliveries.append(
                    (
                        UInt16(index),
                        .noteOn(channel: channel, note: UInt8(played), velocity: part.velocities[Int(message.data2)])
                    ))
            }
        case 0x80:
            routed.deliveries = noteOffs(key, velocity: message.data2)
        case 0xA0:
            routed.deliveries = owners(held[key].parts).map {
                (UInt16($0), message.withNote(UInt8(Int(message.data1) + parts[$0].transpose)))
            }
        case 0xB0:
            let (controller, value) = (message.data1, message.data2)
            if let target = learning {
                let mapping = ControlMapping(
                    controller: Int(controller), channel: Int(channel) + 1, target: target.name)
                learned.removeAll {
                    $0.mapping.controller == mapping.controller && $0.mapping.channel == mapping.channel
                }
                learned.append(Mapping(mapping: mapping, target: target))
                learning = nil
                learnedMapping = mapping
                routed.actions.append(.control(target, target.value(controller: value, minimum: nil, maximum: nil)))
                return routed
            }
            if let mapped = (learned.reversed() + controls[activeRig]).first(where: {
                $0.mapping.controller == Int(controller)
                    && ($0.mapping.channel == nil || $0.mapping.channel == Int(channel) + 1)
            }) {
                routed.actions.append(
                    .control(
                        mapped.target,
                        mapped.target.value(
                            controller: value, minimum: mapped.mapping.minimum,
                            maximum: mapped.mapping.maximum)))
                return routed
            }
            if controller == 64 {
                let sourceBit = slot(for: source)
                if value >= 64 { pedal[Int(channel)] |= sourceBit } else { pedal[Int(channel)] = 0 }
            }
            // All sound off, all notes off and the mode changes (which imply all notes off) end every held
            // note of the channel; reset all controllers lifts the pedal. The silencing controllers reach
            // every rig (held notes of a rig left behind too).
            if controller == 120 || controller >= 123 {
                for note in 0..<128 { held[Int(channel) * 128 + note] = HeldNote() }
            }
            if controller == 121 { pedal[Int(channel)] = 0 }
            let everyRig = controller == 120 || controller == 121 || controller == 123
            routed.deliveries = listeners(channel, everyRig: everyRig).map { (UInt16($0), message) }
        default:
            routed.deliveries = listeners(channel, everyRig: false).map { (UInt16($0), message) }
        }
        return routed
    }

    /// `source` is gone (unplugged, disconnected): a note-off for every note it holds, on the parts playing
    /// it, then the sustain pedal up on every channel where only it held the pedal. Returns the deliveries
    /// and how many notes were released.
    public mutating func release(_ source: MIDISource) -> (deliveries: [Delivery], notes: Int) {
        guard let index = sources.firstIndex(of: source) else { return ([], 0) }
        let bit: UInt64 = 1 << UInt64(index)
        sources[index] = nil
        var deliveries: [Delivery] = []
        var notes = 0
        for key in held.indices where held[key].sources & bit != 0 {
            if held[key].parts != 0 { notes += 1 }
            deliveries += noteOffs(key, velocity: 64)
        }
        for channel in 0..<16 where pedal[channel] & bit != 0 {
            pedal[channel] &= ~bit
            guard pedal[channel] == 0 else { continue }
            for part in listeners(UInt8(channel), everyRig: false) {
                deliveries.append((UInt16(part), .controlChange(channel: UInt8(channel), controller: 64, value: 0)))
            }
        }
        return (deliveries, notes)
    }

    /// Releases what every source holds (the input stopping).
    public mutating func releaseAll() -> [Delivery] {
        sources.compactMap { $0 }.flatMap { release($0).deliveries }
    }

    /// Notes sounding now (struck and not yet released), across every source.
    public var heldNoteCount: Int { held.reduce(0) { $0 + ($1.parts != 0 ? 1 : 0) } }

    // MARK: Helpers

    /// The note-offs that end the note at `key` on every part it went to; it is then no longer held.
    private mutating func noteOffs(_ key: Int, velocity: UInt8) -> [Delivery] {
        let channel = UInt8(key / 128)
        let note = key % 128
        defer { held[key] = HeldNote() }
        return owners(held[key].parts).map { index in
            (UInt16(index), .noteOff(channel: channel, note: UInt8(note + parts[index].transpose), velocity: velocity))
        }
    }

    /// The bit of `source`'s slot, taking a free slot the first time it is seen.
    private mutating func slot(for source: MIDISource) -> UInt64 {
        if let index = sources.firstIndex(of: source) { return 1 << UInt64(index) }
        if let free = sources.firstIndex(of: nil) {
            sources[free] = source
            return 1 << UInt64(free)
        }
        if sources.count < Self.sourceSlots {
            sources.append(source)
            return 1 << UInt64(sources.count - 1)
        }
        return 1 << UInt64(Self.sourceSlots - 1)
    }

    private func listeners(_ channel: UInt8, everyRig: Bool) -> [Int] {
        parts.indices.filter {
            (everyRig || parts[$0].rig == activeRig) && parts[$0].channels & (1 << UInt16(channel)) != 0
        }
    }

    private func owners(_ bits: UInt64) -> [Int] {
        (0..<parts.count).filter { bits & (1 << UInt64($0)) != 0 }
    }
}

import Synchronization

/// Where a mapped controller lands. A parameter is its value cell: one atomic store, which is what
/// `AudioUnit.setParameter` does at offset 0, so it is safe on the render thread. A target that is a
/// property change (an EQ preset) has no cell: its value goes to the control thread as an action.
///
/// Threads: a plain value, usable anywhere (the render thread included).
public struct RoutedControl: BitwiseCopyable, @unchecked Sendable {
    /// The parameter's value cell (its float's bit pattern), or nil for a target the control thread sets.
    public var cell: UnsafeMutablePointer<Atomic<UInt32>>?
    /// The target's range: every value is clamped to it.
    public var lower: Float
    public var upper: Float
    /// What controller positions 0 and 127 map to (the mapping's minimum and maximum, else the range).
    public var low: Float
    public var high: Float
    /// The target's index in the router owner's table (`RigRouter.targets`), for actions the control thread
    /// takes and for naming a learned mapping.
    public var target: Int32

    public init(
        cell: UnsafeMutablePointer<Atomic<UInt32>>?, range: ClosedRange<Float>, minimum: Float? = nil,
        maximum: Float? = nil, target: Int32
    ) {
        self.cell = cell
        lower = range.lowerBound
        upper = range.upperBound
        low = minimum ?? range.lowerBound
        high = maximum ?? range.upperBound
        self.target = target
    }

    /// The value for a controller position, clamped to the target's range.
    @_noAllocation @_noLocks
    public func value(controller: UInt8) -> Float {
        min(upper, max(lower, low + (high - low) * Float(controller) / 127))
    }

    /// The value for the controller `message` moves: its 7-bit position, or a MIDI 2.0 controller's 32 bits on the
    /// same 0…127 scale (`MIDI2Scale`), worked out in doubles so that the parameter gets all a float holds of it.
    @_noAllocation @_noLocks
    public func value(for message: ChannelMessage) -> Float {
        guard message.resolution.isMIDI2 else { return value(controller: message.data2) }
        let position = MIDI2Scale.controller(message.wide) / 127
        return min(upper, max(lower, Float(Double(low) + Double(high - low) * position)))
    }

    /// Stores `value` in the parameter's cell; false when the target has none (the control thread sets it).
    @_noAllocation @_noLocks
    @discardableResult
    public func store(_ value: Float) -> Bool {
        guard let cell else { return false }
        cell.pointee.store(min(upper, max(lower, value)).bitPattern, ordering: .relaxed)
        return true
    }
}

/// A controller moving a target: on `channel` (1…16, or 0 for every channel).
public struct RoutedMapping: BitwiseCopyable, @unchecked Sendable {
    public var controller: UInt8
    public var channel: UInt8
    public var control: RoutedControl

    public init(controller: UInt8, channel: UInt8, control: RoutedControl) {
        self.controller = controller
        self.channel = channel
        self.control = control
    }

    @_noAllocation @_noLocks
    func answers(controller: UInt8, channel zeroBased: UInt8) -> Bool {
        self.controller == controller && (channel == 0 || channel == zeroBased + 1)
    }
}

/// One part as the router sees it: the rig it belongs to, the channels and keys it plays, and how.
public struct RoutedPart: BitwiseCopyable, Sendable {
    public var rig: Int32
    /// A bit per channel (bit 0: channel 1).
    public var channels: UInt16
    public var lowestKey: UInt8
    public var highestKey: UInt8
    public var transpose: Int16

    public init(rig: Int, channels: UInt16, keys: ClosedRange<Int>, transpose: Int) {
        self.rig = Int32(rig)
        self.channels = channels
        lowestKey = UInt8(max(0, min(127, keys.lowerBound)))
        highestKey = UInt8(max(0, min(127, keys.upperBound)))
        self.transpose = Int16(max(-127, min(127, transpose)))
    }

    @_noAllocation @_noLocks
    func hears(_ channel: UInt8) -> Bool { channels & (1 << UInt16(channel)) != 0 }
}

/// A rig of the set, as the router needs it: the bank and program that recall it, its controls, and the
/// channel (0-based) whose program changes recall its snapshots, with the program of each snapshot.
public struct RoutedRig {
    public var bank: Int
    public var program: Int
    public var controls: [RoutedMapping]
    public var snapshotChannel: UInt8?
    public var snapshotPrograms: [Int]

    public init(
        bank: Int, program: Int, controls: [RoutedMapping], snapshotChannel: UInt8? = nil, snapshotPrograms: [Int] = []
    ) {
        self.bank = bank
        self.program = program
        self.controls = controls
        self.snapshotChannel = snapshotChannel
        self.snapshotPrograms = snapshotPrograms
    }
}

/// What a routed message caused besides the notes and controllers it delivered.
public enum RoutedAction: BitwiseCopyable, @unchecked Sendable {
    case none
    /// A mapped controller moved its target to `value`.
    case control(RoutedControl, value: Float)
    /// A program change on the control channel: rig `index` is now the one played.
    case rigSwitched(Int32)
    /// A program change on the active rig's snapshot channel: its snapshot `snapshot` (from 0) is recalled.
    case snapshotRecalled(rig: Int32, snapshot: Int32)
    /// A program change on the file player's song channel: song `program` (from 0) of its playlist is chosen.
    case songChosen(Int32)
    /// MIDI-learn: `controller` on `channel` (1…16) now moves the target, which goes to `value` at once.
    case learned(controller: UInt8, channel: UInt8, control: RoutedControl, value: Float)
}

/// What routing decides for the router's owner: how many deliveries it wrote to `deliveries`, and any
/// action.
public struct RoutingResult: BitwiseCopyable, @unchecked Sendable {
    public var count: Int
    public var action: RoutedAction
}

/// The rig set's MIDI routing as fixed tables, usable on the render thread: which parts hear each channel
/// message (channel, key range) and as what (transposition, velocity curve); which controllers move
/// targets instead; which program changes on the control channel switch rigs; and the one record of held
/// notes — for every (channel, note), the parts its note-on went to and the sources holding it — so a
/// note-off follows its note-on (across rig switches and splits) and a source that goes away has its notes
/// and pedal released where they sound.
///
/// Everything is allocated once, when the rig is built; routing only reads and writes that memory, so it
/// never allocates, locks or touches a reference-counted object. Routed messages are written to
/// `deliveries` (each part at most once per message, or per key of a release step).
///
/// Threads: one owner at a time — `RigRouter` on the control thread (offline renders, tests), or, once a
/// live rig plays, the render thread (`LiveMIDIInput`), which alone mutates it from then on. Other threads
/// read `published` (atomics).
public struct RoutingKernel: @unchecked Sendable {
    /// A note sounding: the parts (a bit per part) its note-on went to, and the sources (a bit per source
    /// slot) holding its key down.
    public struct HeldNote: BitwiseCopyable {
        public var parts: UInt64 = 0
        public var sources: UInt64 = 0
    }

    /// What other threads may read while the render thread routes.
    public struct Published: ~Copyable {
        public let activeRig = Atomic<Int>(0)
        public let switchCount = Atomic<Int>(0)
    }

    /// The most parts a router serves (a bit each in a held note).
    @inlinable public static var maximumParts: Int { 64 }
    /// The most sources tracked one by one; more share the last slot (their notes release together).
    @inlinable public static var sourceSlots: Int { 64 }
    /// The most learned mappings kept (a new one replaces the same controller and channel, else the oldest).
    @inlinable public static var learnedCapacity: Int { 128 }
    /// Channels × notes: the held-note table's size.
    @inlinable public static var keyCount: Int { 16 * 128 }

    public let partCount: Int
    let parts: UnsafeMutablePointer<RoutedPart>
    /// 128 velocities per part (a part's velocity curve).
    let velocities: UnsafeMutablePointer<UInt8>
    public let rigCount: Int
    let rigBanks: UnsafeMutablePointer<Int32>
    let rigPrograms: UnsafeMutablePointer<Int32>
    /// Rig `r`'s controls are `controls[controlStart[r]..<controlStart[r + 1]]`.
    let controls: UnsafeMutablePointer<RoutedMapping>
    let controlStart: UnsafeMutablePointer<Int>
    /// 0-based, or -1 for none.
    let controlChannel: Int16
    /// The channel (0-based, -1: none) whose program changes choose the file player's song.
    let songChannel: Int16
    /// Per rig: the channel (0-based, -1: none) whose program changes recall its snapshots.
    let snapshotChannels: UnsafeMutablePointer<Int16>
    /// Per rig, 128 entries: the snapshot (from 0) each program recalls, or -1.
    let snapshotByProgram: UnsafeMutablePointer<Int16>

    // The state routing changes.
    public private(set) var activeRig = 0
    public private(set) var switchCount = 0
    let bank: UnsafeMutablePointer<Int>
    let held: UnsafeMutablePointer<HeldNote>
    /// Sources holding the sustain pedal down, per channel (a bit per source slot).
    let pedal: UnsafeMutablePointer<UInt64>
    /// Which source (raw value) each slot stands for; `sourcesUsed` has a bit per slot taken.
    let sources: UnsafeMutablePointer<UInt32>
    var sourcesUsed: UInt64 = 0
    let learned: UnsafeMutablePointer<RoutedMapping>
    public private(set) var learnedCount = 0
    /// The target the next controller moved gets mapped to, if learning.
    public private(set) var learning: RoutedControl?

    /// Where routing writes what each part hears.
    public let deliveries: UnsafeMutablePointer<(destination: UInt16, message: ChannelMessage)>
    public let deliveryCapacity: Int
    public let published: UnsafeMutablePointer<Published>

    /// Tables for `parts` (with 128 velocities each), `rigs`, and an optional control channel and song
    /// channel (0-based). Control thread.
    public init(
        parts: [(route: RoutedPart, velocities: [UInt8])], rigs: [RoutedRig], controlChannel: UInt8?,
        songChannel: UInt8? = nil
    ) {
        precondition(parts.count <= Self.maximumParts, "a router serves at most \(Self.maximumParts) parts")
        partCount = parts.count
        self.parts = .allocate(capacity: max(1, parts.count))
        velocities = .allocate(capacity: max(1, parts.count) * 128)
        for (index, part) in parts.enumerated() {
            (self.parts + index).initialize(to: part.route)
            for velocity in 0..<128 {
                velocities[index * 128 + velocity] =
                    part.velocities.indices.contains(velocity) ? part.velocities[velocity] : UInt8(velocity)
            }
        }
        rigCount = rigs.count
        rigBanks = .allocate(capacity: max(1, rigs.count))
        rigPrograms = .allocate(capacity: max(1, rigs.count))
        controlStart = .allocate(capacity: rigs.count + 1)
        let allControls = rigs.flatMap(\.controls)
        controls = .allocate(capacity: max(1, allControls.count))
        controls.initialize(from: allControls, count: allControls.count)
        var start = 0
        for (index, rig) in rigs.enumerated() {
            rigBanks[index] = Int32(rig.bank)
            rigPrograms[index] = Int32(rig.program)
            controlStart[index] = start
            start += rig.controls.count
        }
        controlStart[rigs.count] = start
        self.controlChannel = controlChannel.map { Int16($0) } ?? -1
        self.songChannel = songChannel.map { Int16($0) } ?? -1
        snapshotChannels = .allocate(capacity: max(1, rigs.count))
        snapshotByProgram = .allocate(capacity: max(1, rigs.count) * 128)
        snapshotByProgram.initialize(repeating: -1, count: max(1, rigs.count) * 128)
        for (index, rig) in rigs.enumerated() {
            snapshotChannels[index] = rig.snapshotChannel.map { Int16($0) } ?? -1
            for (snapshot, program) in rig.snapshotPrograms.enumerated() where (0..<128).contains(program) {
                snapshotByProgram[index * 128 + program] = Int16(snapshot)
            }
        }
        bank = .allocate(capacity: 16)
        bank.initialize(repeating: 0, count: 16)
        held = .allocate(capacity: Self.keyCount)
        held.initialize(repeating: HeldNote(), count: Self.keyCount)
        pedal = .allocate(capacity: 16)
        pedal.initialize(repeating: 0, count: 16)
        sources = .allocate(capacity: Self.sourceSlots)
        sources.initialize(repeating: 0, count: Self.sourceSlots)
        learned = .allocate(capacity: Self.learnedCapacity)
        // A rig switch lifts the pedal on up to 16 channels for every part; one message reaches each part once.
        deliveryCapacity = 16 * max(1, parts.count)
        deliveries = .allocate(capacity: deliveryCapacity)
        published = .allocate(capacity: 1)
        published.initialize(to: Published())
    }

    /// Frees the tables. Control thread, once nothing routes with them any more.
    public func deallocate() {
        parts.deallocate()
        velocities.deallocate()
        rigBanks.deallocate()
        rigPrograms.deallocate()
        controls.deallocate()
        controlStart.deallocate()
        snapshotChannels.deallocate()
        snapshotByProgram.deallocate()
        bank.deallocate()
        held.deallocate()
        pedal.deallocate()
        sources.deallocate()
        learned.deallocate()
        deliveries.deallocate()
        published.deinitialize(count: 1)
        published.deallocate()
    }

    /// The control channel, 0-based.
    public var controlChannelIndex: UInt8? { controlChannel < 0 ? nil : UInt8(controlChannel) }

    /// The part a delivery goes to, and its route.
    public func part(_ index: Int) -> RoutedPart { parts[index] }

    /// The controls of the active rig.
    public var activeControls: UnsafeBufferPointer<RoutedMapping> {
        UnsafeBufferPointer(
            start: controls + controlStart[activeRig], count: controlStart[activeRig + 1] - controlStart[activeRig])
    }

    /// The learned mappings, oldest first.
    public var learnedMappings: UnsafeBufferPointer<RoutedMapping> {
        UnsafeBufferPointer(start: learned, count: learnedCount)
    }

    /// Notes sounding now (struck and not yet released), across every source.
    public var heldNoteCount: Int {
        var count = 0
        for key in 0..<Self.keyCount where held[key].parts != 0 { count += 1 }
        return count
    }

    // MARK: Learning

    /// The next controller moved on any channel gets mapped to `control`.
    @_noAllocation @_noLocks
    public mutating func learn(_ control: RoutedControl) { learning = control }

    @_noAllocation @_noLocks
    public mutating func cancelLearning() { learning = nil }

    // MARK: Routing

    /// Switches to rig `index` as a program change on the control channel would. The rig left behind keeps
    /// its held notes until their keys are released, but its sustain pedal is lifted (the pedal's release
    /// would otherwise go to the new rig): those pedal-ups are the deliveries.
    @_noAllocation @_noLocks
    public mutating func select(rig index: Int) -> Int {
        guard index != activeRig, index >= 0, index < rigCount else { return 0 }
        var count = 0
        for channel in 0..<16 where pedal[channel] != 0 {
            count = deliverToListeners(
                ChannelMessage(status: 0xB0 | UInt8(channel), data1: 64, data2: 0), channel: UInt8(channel),
                everyRig: false, at: count)
        }
        activeRig = index
        switchCount += 1
        published.pointee.activeRig.store(index, ordering: .relaxed)
        published.pointee.switchCount.store(switchCount, ordering: .relaxed)
        return count
    }

    /// Routes one channel message from `source` (a `MIDISource`'s raw value).
    @_noAllocation @_noLocks
    public mutating func route(_ incoming: ChannelMessage, from source: UInt32) -> RoutingResult {
        // A note-on with velocity 0 is the note-off it means.
        let message =
            incoming.command == 0x90 && incoming.data2 == 0
            ? ChannelMessage(status: 0x80 | incoming.channel, data1: incoming.data1, data2: 64) : incoming
        let channel = message.channel
        let nothing = RoutingResult(count: 0, action: .none)
        if Int16(channel) == controlChannel {
            switch message.command {
            case 0xB0 where message.data1 == 0:
                bank[Int(channel)] = Int(message.data2) << 7 | bank[Int(channel)] & 0x7F
                return nothing
            case 0xB0 where message.data1 == 32:
                bank[Int(channel)] = bank[Int(channel)] & ~0x7F | Int(message.data2)
                return nothing
            case 0xC0:
                // A program no rig answers is ignored (said in the docs): better than silence.
                guard let index = rig(bank: bank[Int(channel)], program: Int(message.data1)), index != activeRig
                else { return nothing }
                return RoutingResult(count: select(rig: index), action: .rigSwitched(Int32(index)))
            default:
                break
            }
        }
        // Program changes on the song channel choose the player's song, whichever rig plays.
        if message.command == 0xC0 && Int16(channel) == songChannel {
            return RoutingResult(count: 0, action: .songChosen(Int32(message.data1)))
        }
        // Program changes on the active rig's snapshot channel recall its snapshots and are not played; one
        // no snapshot answers is ignored, as on the control channel.
        if message.command == 0xC0 && Int16(channel) == snapshotChannels[activeRig] {
            let snapshot = snapshotByProgram[activeRig * 128 + Int(message.data1)]
            guard snapshot >= 0 else { return nothing }
            return RoutingResult(
                count: 0, action: .snapshotRecalled(rig: Int32(activeRig), snapshot: Int32(snapshot)))
        }
        let key = Int(channel) * 128 + Int(message.data1)
        switch message.command {
        case 0x90:
            let sourceBit = slot(for: source)
            var count = 0
            for index in 0..<partCount {
                let part = parts[index]
                guard Int(part.rig) == activeRig, part.hears(channel), message.data1 >= part.lowestKey,
                    message.data1 <= part.highestKey
                else { continue }
                let played = Int(message.data1) + Int(part.transpose)
                guard played >= 0 && played <= 127 else { continue }
                held[key].parts |= 1 << UInt64(index)
                held[key].sources |= sourceBit
                var struck = message
                struck.data1 = UInt8(played)
                struck.data2 = velocities[index * 128 + Int(message.data2)]
                if message.resolution.isMIDI2 { struck.wide = curved(message.wide, part: index) }
                deliveries[count] = (UInt16(index), struck)
                count += 1
            }
            return RoutingResult(count: count, action: .none)
        case 0x80:
            return RoutingResult(count: noteOffs(key, release: message, at: 0), action: .none)
        case 0xA0,
            0x60 where message.isPerNote, 0x00 where message.isPerNote:
            // Poly pressure and MIDI 2.0's per-note messages (pitch bend 0x60, controller 0x00: literals, as a
            // pattern of a static would be matched through a generic `~=`) go where the note's note-on went.
            var count = 0
            let bits = held[key].parts
            for index in 0..<partCount where bits & (1 << UInt64(index)) != 0 {
                deliveries[count] = (
                    UInt16(index), transposed(message, note: Int(message.data1), by: parts[index].transpose)
                )
                count += 1
            }
            return RoutingResult(count: count, action: .none)
        case 0xB0:
            let (controller, value) = (message.data1, message.data2)
            if let control = learning {
                learning = nil
                remember(RoutedMapping(controller: controller, channel: channel + 1, control: control))
                return RoutingResult(
                    count: 0,
                    action: .learned(
                        controller: controller, channel: channel + 1, control: control,
                        value: control.value(for: message)))
            }
            // Learned mappings win, the latest first; then the active rig's.
            var index = learnedCount - 1
            while index >= 0 {
                if learned[index].answers(controller: controller, channel: channel) {
                    let control = learned[index].control
                    return RoutingResult(count: 0, action: .control(control, value: control.value(for: message)))
                }
                index -= 1
            }
            for mapping in activeControls where mapping.answers(controller: controller, channel: channel) {
                return RoutingResult(
                    count: 0, action: .control(mapping.control, value: mapping.control.value(for: message)))
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
            return RoutingResult(
                count: deliverToListeners(message, channel: channel, everyRig: everyRig, at: 0), action: .none)
        default:
            return RoutingResult(
                count: deliverToListeners(message, channel: channel, everyRig: false, at: 0), action: .none)
        }
    }

    /// One step of releasing what `source` holds (it is gone: unplugged, disconnected): note-offs for the
    /// held keys from `key` on, as many as fit in `deliveries`, then — once every key is done — the
    /// sustain pedal up on every channel where only it held the pedal. Start with `key` 0 and call again
    /// until `done` (the step after the last key frees the source's slot). Returns the deliveries written
    /// and the notes released.
    @_noAllocation @_noLocks
    public mutating func releaseStep(_ source: UInt32, key: inout Int) -> (count: Int, notes: Int, done: Bool) {
        guard let index = slotIndex(of: source) else {
            key = Self.keyCount + 1
            return (0, 0, true)
        }
        let bit: UInt64 = 1 << UInt64(index)
        var count = 0
        var notes = 0
        while key < Self.keyCount && count + partCount <= deliveryCapacity {
            if held[key].sources & bit != 0 {
                if held[key].parts != 0 { notes += 1 }
                count = noteOffs(key, release: ChannelMessage(status: 0x80, data1: 0, data2: 64), at: count)
            }
            key += 1
        }
        guard key == Self.keyCount else { return (count, notes, false) }
        // Every key done: the pedal (at most 16 channels × the parts: one whole buffer).
        guard count == 0 else { return (count, notes, false) }
        for channel in 0..<16 where pedal[channel] & bit != 0 {
            pedal[channel] &= ~bit
            guard pedal[channel] == 0 else { continue }
            count = deliverToListeners(
                ChannelMessage(status: 0xB0 | UInt8(channel), data1: 64, data2: 0), channel: UInt8(channel),
                everyRig: false, at: count)
        }
        sourcesUsed &= ~bit
        key = Self.keyCount + 1
        return (count, notes, true)
    }

    /// The sources holding notes or the pedal (raw values), for releasing them all.
    public var heldSources: [UInt32] {
        (0..<Self.sourceSlots).filter { sourcesUsed & (1 << UInt64($0)) != 0 }.map { sources[$0] }
    }

    // MARK: Helpers

    /// The rig a bank and program recall.
    @_noAllocation @_noLocks
    func rig(bank: Int, program: Int) -> Int? {
        for index in 0..<rigCount where Int(rigBanks[index]) == bank && Int(rigPrograms[index]) == program {
            return index
        }
        return nil
    }

    /// Keeps a learned mapping, replacing one of the same controller and channel (else, when full, the
    /// oldest).
    @_noAllocation @_noLocks
    mutating func remember(_ mapping: RoutedMapping) {
        var index = 0
        while index < learnedCount {
            if learned[index].controller == mapping.controller && learned[index].channel == mapping.channel {
                for later in index..<(learnedCount - 1) { learned[later] = learned[later + 1] }
                learnedCount -= 1
            } else {
                index += 1
            }
        }
        if learnedCount == Self.learnedCapacity {
            for later in 0..<(learnedCount - 1) { learned[later] = learned[later + 1] }
            learnedCount -= 1
        }
        (learned + learnedCount).initialize(to: mapping)
        learnedCount += 1
    }

    /// Writes `message` for every part listening on `channel` (of the active rig, or of every rig) from
    /// `deliveries[start]` on; returns the new count.
    @_noAllocation @_noLocks
    func deliverToListeners(_ message: ChannelMessage, channel: UInt8, everyRig: Bool, at start: Int) -> Int {
        var count = start
        for index in 0..<partCount where (everyRig || Int(parts[index].rig) == activeRig) && parts[index].hears(channel)
        {
            deliveries[count] = (UInt16(index), message)
            count += 1
        }
        return count
    }

    /// The note-offs that end the note at `key` on every part it went to, from `deliveries[start]` on, with
    /// `release`'s velocity (and its MIDI 2.0 value); it is then no longer held. Returns the new count.
    @_noAllocation @_noLocks
    mutating func noteOffs(_ key: Int, release: ChannelMessage, at start: Int) -> Int {
        var off = release
        off.status = 0x80 | UInt8(key / 128)
        let note = key % 128
        var count = start
        let bits = held[key].parts
        for index in 0..<partCount where bits & (1 << UInt64(index)) != 0 {
            deliveries[count] = (UInt16(index), transposed(off, note: note, by: parts[index].transpose))
            count += 1
        }
        held[key] = HeldNote()
        return count
    }

    /// `message` on `note` moved by `transpose` (a note that went out of range keeps its key clamped: its
    /// note-on was never delivered, so nothing listens for it).
    @_noAllocation @_noLocks
    func transposed(_ message: ChannelMessage, note: Int, by transpose: Int16) -> ChannelMessage {
        message.withNote(UInt8(max(0, min(127, note + Int(transpose)))))
    }

    /// A MIDI 2.0 velocity (16 bits in `wide`) through part `part`'s velocity curve, at 16 bits: the curve's
    /// 7-bit entries on either side of it, interpolated by the 9 bits below the top 7 (a straight curve gives
    /// the velocity back exactly). The message's 7-bit velocity takes the curve's own entry, as MIDI 1.0's does.
    @_noAllocation @_noLocks
    func curved(_ wide: UInt32, part: Int) -> UInt32 {
        let velocity = Int(wide & 0xFFFF)
        let step = velocity >> 9
        let curve = velocities + part * 128
        let below = Int(curve[step])
        let above = step < 127 ? Int(curve[step + 1]) : below + 1
        return UInt32(max(0, min(0xFFFF, below << 9 + (velocity & 0x1FF) * (above - below))))
    }

    @_noAllocation @_noLocks
    func slotIndex(of source: UInt32) -> Int? {
        for index in 0..<Self.sourceSlots where sourcesUsed & (1 << UInt64(index)) != 0 && sources[index] == source {
            return index
        }
        return nil
    }

    /// The bit of `source`'s slot, taking a free slot the first time it is seen (all taken: the last one,
    /// shared).
    @_noAllocation @_noLocks
    mutating func slot(for source: UInt32) -> UInt64 {
        if let index = slotIndex(of: source) { return 1 << UInt64(index) }
        for index in 0..<Self.sourceSlots where sourcesUsed & (1 << UInt64(index)) == 0 {
            sources[index] = source
            sourcesUsed |= 1 << UInt64(index)
            return 1 << UInt64(index)
        }
        return 1 << UInt64(Self.sourceSlots - 1)
    }
}

import AulosDSP

/// A region to start: which, on which note, and (for a release region) the `rt_decay` gain.
///
/// Threads: a plain value, written by the selector on the render thread.
public struct SFZStart: BitwiseCopyable, Sendable, Equatable {
    /// Index into `SFZLibrary.regions`.
    public var region: Int32
    public var key: UInt8
    /// The note-on's velocity (a release region plays with the velocity its note started with, as players do).
    public var velocity: UInt8
    /// 0-based.
    public var channel: UInt8
    public var isRelease: Bool
    /// Linear gain: 1, or for a release region 10^(−rt_decay × seconds held / 20).
    public var gain: Float
}

/// What a region's `polyphony` / `note_polyphony` decide for a voice about to start.
public enum SFZPolyphonyDecision: BitwiseCopyable, Sendable, Equatable {
    case play
    /// Its group is at its `polyphony`: the group's oldest voice goes first.
    case stealOldestInGroup
    /// Its group has `note_polyphony` voices on this key: the oldest of those goes first.
    case stealOldestOnKey
}

/// Chooses the regions a MIDI event starts, from fixed tables built when the library loads.
///
/// Per note-on (key, velocity, channel): the regions whose key, velocity, channel, `locc/hicc`, bend and
/// program ranges hold, whose keyswitch (`sw_last`, `sw_down`, `sw_up`, `sw_previous`) is in force, whose
/// `trigger` matches (`first`: no other note held on the channel; `legato`: one held), whose `lorand…hirand`
/// holds the note's random value (one per event, from a seeded SplitMix64 generator), and whose round-robin
/// turn it is. Round robin counts as other players do: each region keeps its own counter, advanced by every
/// note-on that passes its key, velocity, channel, controller and keyswitch tests; it plays when
/// `counter mod seq_length = seq_position − 1` (so regions of one round robin advance together).
///
/// Per note-off: `trigger=release_key` regions at once, `trigger=release` regions once no pedal holds the
/// note (sustain, CC 64 ≥ 64, for regions with `sustain_sw`; sostenuto, CC 66, for keys held when it went
/// down and regions with `sostenuto_sw`) — a pedal's release starts them — each with the gain `rt_decay`
/// gives for the time from the note-on to that moment. Striking a key again while its release waits for the
/// pedal cancels that release (the damper never fell).
///
/// Keyswitches: a note-on on a key in a region's `sw_lokey…sw_hikey` (where it set one) or on any region's
/// `sw_last` makes that key the last keyswitch; it sounds only if a region maps the key. Before any, the
/// last keyswitch is the first `sw_default` the library gives, else none (regions with `sw_last` are silent).
///
/// Choking and polyphony are decisions for the voices: `chokes(started:playing:)` (a playing voice whose
/// region's `off_by` equals the starting region's `group`, 0 being none, is turned off its `off_mode` way),
/// `polyphonyDecision`. A group's `polyphony` and `note_polyphony` are the smallest any of its regions sets.
///
/// Real time: the tables and state are allocated in `init` (control thread); the event methods write into
/// a caller's buffer and never allocate or lock. More starts than the buffer holds are dropped and counted.
///
/// Threads: built on the control thread; then one owner at a time (the instrument's render kernel).
public struct SFZSelector: ~Copyable, @unchecked Sendable {
    /// A region as the selector tests it.
    struct Entry: BitwiseCopyable {
        var lowVelocity: UInt8 = 0
        var highVelocity: UInt8 = 127
        var lowChannel: UInt8 = 0
        var highChannel: UInt8 = 15
        var lowProgram: UInt8 = 0
        var highProgram: UInt8 = 127
        var trigger: UInt8 = 0
        var sequenceLength: UInt8 = 1
        var sequencePosition: UInt8 = 1
        var sustainSwitch = true
        var sostenutoSwitch = true
        var lowBend: Int16 = -8192
        var highBend: Int16 = 8192
        /// -1: none.
        var switchLast: Int16 = -1
        var switchDown: Int16 = -1
        var switchUp: Int16 = -1
        var switchPrevious: Int16 = -1
        var controllerStart: Int32 = 0
        var controllerCount: Int32 = 0
        var lowRandom: Float = 0
        var highRandom: Float = 1
        var releaseDecay: Float = 0
        var group: Int32 = 0
        var offBy: Int32 = 0
        /// 0: no limit.
        var polyphony: Int32 = 0
        var notePolyphony: Int32 = 0
    }

    struct ControllerRange: BitwiseCopyable {
        var controller: UInt8
        var low: UInt8
        var high: UInt8
    }

    static let attack: UInt8 = 0
    static let first: UInt8 = 1
    static let legato: UInt8 = 2
    static let release: UInt8 = 3
    static let releaseKey: UInt8 = 4
    static let channels = 16
    static let keys = 128

    public let regionCount: Int
    let entries: UnsafeMutablePointer<Entry>
    let controllerRanges: UnsafeMutablePointer<ControllerRange>
    let controllerRangeCount: Int
    /// For key k, note-on regions are `attackList[attackStart[k]..<attackStart[k + 1]]` (in file order).
    let attackStart: UnsafeMutablePointer<Int32>
    let attackList: UnsafeMutablePointer<Int32>
    let releaseStart: UnsafeMutablePointer<Int32>
    let releaseList: UnsafeMutablePointer<Int32>
    /// 1 for a key that switches.
    let switchKeys: UnsafeMutablePointer<UInt8>
    let defaultControllers: UnsafeMutablePointer<UInt8>
    let defaultSwitch: Int16
    let framesPerSecond: Double
    let seed: UInt64

    // State.
    let controllers: UnsafeMutablePointer<UInt8>
    let bends: UnsafeMutablePointer<Int16>
    let programs: UnsafeMutablePointer<UInt8>
    /// Keys down, a bit each: two words per channel.
    let held: UnsafeMutablePointer<UInt64>
    /// Notes held on each channel, keyswitch keys not counted (for `first` and `legato`).
    let heldCount: UnsafeMutablePointer<Int16>
    let latched: UnsafeMutablePointer<UInt64>
    let noteOnFrames: UnsafeMutablePointer<Int64>
    let noteOnVelocities: UnsafeMutablePointer<UInt8>
    /// Per (channel, key): bit 0 a release waits for a pedal, bit 1 sustain was down at the note-off, bit 2
    /// sostenuto held the key at the note-off.
    let pending: UnsafeMutablePointer<UInt8>
    let sequenceCounters: UnsafeMutablePointer<UInt32>
    var sustainDown: UInt16 = 0
    var sostenutoDown: UInt16 = 0
    var random: UInt64
    /// The last keyswitch pressed (-1: none yet).
    public private(set) var lastKeyswitch: Int16
    var previousKey: Int16 = -1
    /// Starts that did not fit the caller's buffer.
    public private(set) var droppedStarts = 0

    /// The tables for `library` (allocates: control thread). `sampleRate` converts frames to the seconds
    /// `rt_decay` needs; `seed` starts the random generator, so a render repeats exactly.
    public init(library: SFZLibrary, sampleRate: Double, seed: UInt64 = 0) {
        let regions = library.regions
        regionCount = regions.count
        framesPerSecond = sampleRate
        self.seed = seed
        random = seed
        entries = .allocate(capacity: max(1, regions.count))
        var ranges: [ControllerRange] = []
        var groupPolyphony: [Int: Int] = [:]
        var groupNotePolyphony: [Int: Int] = [:]
        for region in regions {
            if let limit = region.polyphony {
                groupPolyphony[region.group] = min(limit, groupPolyphony[region.group] ?? limit)
            }
            if let limit = region.notePolyphony {
                groupNotePolyphony[region.group] = min(limit, groupNotePolyphony[region.group] ?? limit)
            }
        }
        for (index, region) in regions.enumerated() {
            var entry = Entry()
            entry.lowVelocity = UInt8(region.lowVelocity)
            entry.highVelocity = UInt8(region.highVelocity)
            entry.lowChannel = UInt8(region.lowChannel - 1)
            entry.highChannel = UInt8(region.highChannel - 1)
            entry.lowProgram = UInt8(region.lowProgram)
            entry.highProgram = UInt8(region.highProgram)
            entry.trigger =
                switch region.trigger {
                case .attack: Self.attack
                case .first: Self.first
                case .legato: Self.legato
                case .release: Self.release
                case .releaseKey: Self.releaseKey
                }
            entry.sequenceLength = UInt8(region.sequenceLength)
            entry.sequencePosition = UInt8(region.sequencePosition)
            entry.sustainSwitch = region.sustainSwitch
            entry.sostenutoSwitch = region.sostenutoSwitch
            entry.lowBend = Int16(region.lowBend)
            entry.highBend = Int16(region.highBend)
            entry.switchLast = Int16(region.switchLast ?? -1)
            entry.switchDown = Int16(region.switchDown ?? -1)
            entry.switchUp = Int16(region.switchUp ?? -1)
            entry.switchPrevious = Int16(region.switchPrevious ?? -1)
            entry.controllerStart = Int32(ranges.count)
            for range in region.controllerRanges {
                ranges.append(
                    ControllerRange(controller: UInt8(range.controller), low: UInt8(range.low), high: UInt8(range.high))
                )
            }
            entry.controllerCount = Int32(region.controllerRanges.count)
            entry.lowRandom = region.lowRandom
            entry.highRandom = region.highRandom
            entry.releaseDecay = region.releaseDecay
            entry.group = Int32(truncatingIfNeeded: region.group)
            entry.offBy = Int32(truncatingIfNeeded: region.offBy)
            entry.polyphony = Int32(groupPolyphony[region.group] ?? 0)
            entry.notePolyphony = Int32(groupNotePolyphony[region.group] ?? 0)
            (entries + index).initialize(to: entry)
        }
        controllerRangeCount = ranges.count
        controllerRanges = .allocate(capacity: max(1, ranges.count))
        for (index, range) in ranges.enumerated() { (controllerRanges + index).initialize(to: range) }

        // Key tables: a region is listed under every key it answers, if it can sound at all.
        var attackByKey = [[Int32]](repeating: [], count: Self.keys)
        var releaseByKey = [[Int32]](repeating: [], count: Self.keys)
        for (index, region) in regions.enumerated() where region.sample != .none && !region.isSilenced {
            let low = max(0, region.lowKey)
            let high = min(127, region.highKey)
            guard low <= high, region.lowVelocity <= region.highVelocity,
                region.lowChannel <= region.highChannel
            else { continue }
            for key in low...high {
                if region.isAttack {
                    attackByKey[key].append(Int32(index))
                } else {
                    releaseByKey[key].append(Int32(index))
                }
            }
        }
        func flatten(_ lists: [[Int32]]) -> (UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>) {
            let starts = UnsafeMutablePointer<Int32>.allocate(capacity: Self.keys + 1)
            let total = lists.reduce(0) { $0 + $1.count }
            let flat = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, total))
            var position = 0
            for (key, list) in lists.enumerated() {
                starts[key] = Int32(position)
                for index in list {
                    flat[position] = index
                    position += 1
                }
            }
            starts[Self.keys] = Int32(position)
            return (starts, flat)
        }
        (attackStart, attackList) = flatten(attackByKey)
        (releaseStart, releaseList) = flatten(releaseByKey)

        switchKeys = .allocate(capacity: Self.keys)
        switchKeys.initialize(repeating: 0, count: Self.keys)
        for region in regions {
            if let key = region.switchLast { switchKeys[key] = 1 }
            if region.switchLowKey != nil || region.switchHighKey != nil {
                let low = region.switchLowKey ?? 0
                let high = region.switchHighKey ?? 127
                if low <= high { for key in low...high { switchKeys[key] = 1 } }
            }
        }
        defaultSwitch = Int16(regions.first { $0.switchDefault != nil }?.switchDefault ?? -1)
        lastKeyswitch = defaultSwitch
        defaultControllers = .allocate(capacity: Self.keys)
        defaultControllers.initialize(repeating: 0, count: Self.keys)
        for (controller, value) in library.controllerDefaults { defaultControllers[controller] = UInt8(value) }

        controllers = .allocate(capacity: Self.channels * Self.keys)
        bends = .allocate(capacity: Self.channels)
        programs = .allocate(capacity: Self.channels)
        held = .allocate(capacity: Self.channels * 2)
        heldCount = .allocate(capacity: Self.channels)
        latched = .allocate(capacity: Self.channels * 2)
        noteOnFrames = .allocate(capacity: Self.channels * Self.keys)
        noteOnVelocities = .allocate(capacity: Self.channels * Self.keys)
        pending = .allocate(capacity: Self.channels * Self.keys)
        sequenceCounters = .allocate(capacity: max(1, regions.count))
        resetState()
    }

    deinit {
        entries.deallocate()
        controllerRanges.deallocate()
        attackStart.deallocate()
        attackList.deallocate()
        releaseStart.deallocate()
        releaseList.deallocate()
        switchKeys.deallocate()
        defaultControllers.deallocate()
        controllers.deallocate()
        bends.deallocate()
        programs.deallocate()
        held.deallocate()
        heldCount.deallocate()
        latched.deallocate()
        noteOnFrames.deallocate()
        noteOnVelocities.deallocate()
        pending.deallocate()
        sequenceCounters.deallocate()
    }

    /// Back to the state after loading: controllers at their `set_ccN` values, no notes, counters at 0, the
    /// default keyswitch, the generator at its seed (so a reset render repeats the first).
    @_noAllocation @_noLocks
    public mutating func reset() { resetState() }

    @_noAllocation @_noLocks
    private mutating func resetState() {
        for channel in 0..<Self.channels {
            for controller in 0..<Self.keys {
                controllers[channel * Self.keys + controller] = defaultControllers[controller]
            }
        }
        bends.update(repeating: 0, count: Self.channels)
        programs.update(repeating: 0, count: Self.channels)
        held.update(repeating: 0, count: Self.channels * 2)
        heldCount.update(repeating: 0, count: Self.channels)
        latched.update(repeating: 0, count: Self.channels * 2)
        noteOnFrames.update(repeating: 0, count: Self.channels * Self.keys)
        noteOnVelocities.update(repeating: 0, count: Self.channels * Self.keys)
        pending.update(repeating: 0, count: Self.channels * Self.keys)
        sequenceCounters.update(repeating: 0, count: max(1, regionCount))
        sustainDown = 0
        sostenutoDown = 0
        random = seed
        lastKeyswitch = defaultSwitch
        previousKey = -1
        droppedStarts = 0
    }

    // MARK: Events

    /// The regions a note-on starts (channel 0…15, key 0…127, velocity 1…127; velocity 0 is a note-off),
    /// written to `starts`; returns how many.
    @_noAllocation @_noLocks
    public mutating func noteOn(
        channel: Int, key: Int, velocity: Int, frame: Int64, into starts: UnsafeMutableBufferPointer<SFZStart>
    ) -> Int {
        guard velocity > 0 else { return noteOff(channel: channel, key: key, frame: frame, into: starts) }
        let channel = channel & 15
        let key = key & 127
        let velocity = UInt8(min(127, velocity))
        if switchKeys[key] != 0 { lastKeyswitch = Int16(key) }
        let value = nextRandom()
        let othersHeld = heldCount[channel] > 0
        var count = 0
        for position in Int(attackStart[key])..<Int(attackStart[key + 1]) {
            let region = Int(attackList[position])
            let entry = entries[region]
            guard passes(entry, channel: channel, velocity: velocity) else { continue }
            // The region's round-robin turn advances whatever random and first/legato then decide.
            let counter = sequenceCounters[region]
            sequenceCounters[region] = counter &+ 1
            guard counter % UInt32(entry.sequenceLength) == UInt32(entry.sequencePosition) - 1 else { continue }
            guard value >= entry.lowRandom, value < entry.highRandom || entry.highRandom >= 1 else { continue }
            if entry.trigger == Self.first && othersHeld { continue }
            if entry.trigger == Self.legato && !othersHeld { continue }
            let start = SFZStart(
                region: Int32(region), key: UInt8(key), velocity: velocity, channel: UInt8(channel), isRelease: false,
                gain: 1)
            append(start, to: starts, &count)
        }
        let slot = channel * Self.keys + key
        if !isHeld(channel, key) {
            setHeld(channel, key, true)
            if switchKeys[key] == 0 { heldCount[channel] += 1 }
        }
        noteOnFrames[slot] = frame
        noteOnVelocities[slot] = velocity
        pending[slot] = 0
        previousKey = Int16(key)
        return count
    }

    /// The release regions a note-off starts now (those a pedal holds start when it lifts).
    @_noAllocation @_noLocks
    public mutating func noteOff(
        channel: Int, key: Int, velocity: Int = 0, frame: Int64, into starts: UnsafeMutableBufferPointer<SFZStart>
    ) -> Int {
        let channel = channel & 15
        let key = key & 127
        guard isHeld(channel, key) else { return 0 }
        setHeld(channel, key, false)
        if switchKeys[key] == 0 { heldCount[channel] -= 1 }
        let sustained = sustainDown & (1 << UInt16(channel)) != 0
        let sostenutoHeld = sostenutoDown & (1 << UInt16(channel)) != 0 && isLatched(channel, key)
        let slot = channel * Self.keys + key
        var count = 0
        var waiting = false
        let value = nextRandom()
        for position in Int(releaseStart[key])..<Int(releaseStart[key + 1]) {
            let region = Int(releaseList[position])
            let entry = entries[region]
            if entry.trigger == Self.release && holds(entry, sustained, sostenutoHeld) {
                waiting = true
                continue
            }
            startRelease(region, entry, channel: channel, key: key, frame: frame, random: value, starts, &count)
        }
        pending[slot] = waiting ? 1 | (sustained ? 2 : 0) | (sostenutoHeld ? 4 : 0) : 0
        return count
    }

    /// Records a controller's value; the sustain (64) and sostenuto (66) pedals lifting start the release
    /// regions they held, written to `starts`.
    @_noAllocation @_noLocks
    public mutating func controlChange(
        channel: Int, controller: Int, value: Int, frame: Int64, into starts: UnsafeMutableBufferPointer<SFZStart>
    ) -> Int {
        let channel = channel & 15
        let controller = controller & 127
        controllers[channel * Self.keys + controller] = UInt8(min(127, max(0, value)))
        let bit = UInt16(1) << UInt16(channel)
        let down = value >= 64
        if controller == 64 {
            let was = sustainDown & bit != 0
            if down { sustainDown |= bit } else { sustainDown &= ~bit }
            if was && !down { return releasePending(channel: channel, frame: frame, into: starts) }
        } else if controller == 66 {
            let was = sostenutoDown & bit != 0
            if down && !was {
                sostenutoDown |= bit
                latched[channel * 2] = held[channel * 2]
                latched[channel * 2 + 1] = held[channel * 2 + 1]
            } else if !down && was {
                sostenutoDown &= ~bit
                let count = releasePending(channel: channel, frame: frame, into: starts)
                latched[channel * 2] = 0
                latched[channel * 2 + 1] = 0
                return count
            }
        }
        return 0
    }

    /// Records the channel's pitch bend (−8192…8191) for `lobend`/`hibend`.
    @_noAllocation @_noLocks
    public mutating func pitchBend(channel: Int, value: Int) {
        bends[channel & 15] = Int16(min(8192, max(-8192, value)))
    }

    /// Records the channel's program (0…127) for `loprog`/`hiprog`.
    @_noAllocation @_noLocks
    public mutating func programChange(channel: Int, program: Int) {
        programs[channel & 15] = UInt8(program & 127)
    }

    /// A controller's current value on a channel (0-based).
    @_noAllocation @_noLocks
    public func controller(channel: Int, _ controller: Int) -> UInt8 {
        controllers[(channel & 15) * Self.keys + (controller & 127)]
    }

    // MARK: Decisions for the voices

    /// Whether starting region `started` turns off a voice playing region `playing`: `playing`'s `off_by`
    /// (0: none) is `started`'s `group`.
    @_noAllocation @_noLocks
    public func chokes(started: Int32, playing: Int32) -> Bool {
        let offBy = entries[Int(playing)].offBy
        return offBy != 0 && offBy == entries[Int(started)].group
    }

    /// Whether a voice of `region` may start given the voices its group already plays (in all, and on its key).
    @_noAllocation @_noLocks
    public func polyphonyDecision(region: Int32, voicesInGroup: Int, voicesOnKey: Int) -> SFZPolyphonyDecision {
        let entry = entries[Int(region)]
        if entry.notePolyphony > 0 && voicesOnKey >= Int(entry.notePolyphony) { return .stealOldestOnKey }
        if entry.polyphony > 0 && voicesInGroup >= Int(entry.polyphony) { return .stealOldestInGroup }
        return .play
    }

    /// The group a region belongs to (`group`), for counting voices by group.
    @_noAllocation @_noLocks
    public func group(of region: Int32) -> Int32 { entries[Int(region)].group }

    // MARK: Inside

    @_noAllocation @_noLocks
    private func passes(_ entry: Entry, channel: Int, velocity: UInt8) -> Bool {
        guard velocity >= entry.lowVelocity, velocity <= entry.highVelocity,
            channel >= Int(entry.lowChannel), channel <= Int(entry.highChannel)
        else { return false }
        let bend = bends[channel]
        guard bend >= entry.lowBend, bend <= entry.highBend else { return false }
        let program = programs[channel]
        guard program >= entry.lowProgram, program <= entry.highProgram else { return false }
        for index in Int(entry.controllerStart)..<Int(entry.controllerStart + entry.controllerCount) {
            let range = controllerRanges[index]
            let value = controllers[channel * Self.keys + Int(range.controller)]
            guard value >= range.low, value <= range.high else { return false }
        }
        if entry.switchLast >= 0 && entry.switchLast != lastKeyswitch { return false }
        if entry.switchDown >= 0 && !isHeld(channel, Int(entry.switchDown)) { return false }
        if entry.switchUp >= 0 && isHeld(channel, Int(entry.switchUp)) { return false }
        if entry.switchPrevious >= 0 && entry.switchPrevious != previousKey { return false }
        return true
    }

    @_noAllocation @_noLocks
    private func holds(_ entry: Entry, _ sustained: Bool, _ sostenutoHeld: Bool) -> Bool {
        (entry.sustainSwitch && sustained) || (entry.sostenutoSwitch && sostenutoHeld)
    }

    @_noAllocation @_noLocks
    private mutating func startRelease(
        _ region: Int, _ entry: Entry, channel: Int, key: Int, frame: Int64, random value: Float,
        _ starts: UnsafeMutableBufferPointer<SFZStart>, _ count: inout Int
    ) {
        let slot = channel * Self.keys + key
        let velocity = noteOnVelocities[slot]
        guard passes(entry, channel: channel, velocity: velocity) else { return }
        let counter = sequenceCounters[region]
        sequenceCounters[region] = counter &+ 1
        guard counter % UInt32(entry.sequenceLength) == UInt32(entry.sequencePosition) - 1 else { return }
        guard value >= entry.lowRandom, value < entry.highRandom || entry.highRandom >= 1 else { return }
        let seconds = Float(Double(max(0, frame - noteOnFrames[slot])) / framesPerSecond)
        // 10^(−dB/20) as 2^(−dB/20 · log2 10): libm is out of sight of the real-time checker.
        let gain =
            entry.releaseDecay > 0
            ? Float(FastMath.exp2(Double(-entry.releaseDecay * seconds / 20) * 3.321_928_094_887_362)) : 1
        let start = SFZStart(
            region: Int32(region), key: UInt8(key), velocity: velocity, channel: UInt8(channel), isRelease: true,
            gain: gain)
        append(start, to: starts, &count)
    }

    /// Starts the waiting releases no pedal holds any more.
    @_noAllocation @_noLocks
    private mutating func releasePending(
        channel: Int, frame: Int64, into starts: UnsafeMutableBufferPointer<SFZStart>
    ) -> Int {
        var count = 0
        let sustained = sustainDown & (1 << UInt16(channel)) != 0
        let sostenutoOn = sostenutoDown & (1 << UInt16(channel)) != 0
        for key in 0..<Self.keys {
            let slot = channel * Self.keys + key
            let flags = pending[slot]
            guard flags & 1 != 0 else { continue }
            let wasSustained = flags & 2 != 0
            let wasSostenuto = flags & 4 != 0
            let sostenutoNow = sostenutoOn && isLatched(channel, key)
            var stillWaiting = false
            let value = nextRandom()
            for position in Int(releaseStart[key])..<Int(releaseStart[key + 1]) {
                let region = Int(releaseList[position])
                let entry = entries[region]
                guard entry.trigger == Self.release, holds(entry, wasSustained, wasSostenuto) else { continue }
                if holds(entry, sustained, sostenutoNow) {
                    stillWaiting = true
                    continue
                }
                startRelease(region, entry, channel: channel, key: key, frame: frame, random: value, starts, &count)
            }
            pending[slot] = stillWaiting ? flags : 0
        }
        return count
    }

    @_noAllocation @_noLocks
    private mutating func append(
        _ start: SFZStart, to starts: UnsafeMutableBufferPointer<SFZStart>, _ count: inout Int
    ) {
        if count < starts.count {
            starts[count] = start
            count += 1
        } else {
            droppedStarts += 1
        }
    }

    /// The next value of the seeded generator (SplitMix64), in 0 ≤ r < 1.
    @_noAllocation @_noLocks
    private mutating func nextRandom() -> Float {
        random &+= 0x9E37_79B9_7F4A_7C15
        var mixed = random
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Float(mixed >> 40) / Float(1 << 24)
    }

    @_noAllocation @_noLocks
    private func isHeld(_ channel: Int, _ key: Int) -> Bool {
        held[channel * 2 + key >> 6] & (1 << UInt64(key & 63)) != 0
    }

    @_noAllocation @_noLocks
    private func isLatched(_ channel: Int, _ key: Int) -> Bool {
        latched[channel * 2 + key >> 6] & (1 << UInt64(key & 63)) != 0
    }

    @_noAllocation @_noLocks
    private func setHeld(_ channel: Int, _ key: Int, _ down: Bool) {
        let word = channel * 2 + key >> 6
        if down { held[word] |= 1 << UInt64(key & 63) } else { held[word] &= ~(1 << UInt64(key & 63)) }
    }
}

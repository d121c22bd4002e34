import AulosCore
import AulosMIDI
import AulosRealtime
import Synchronization

/// What the kernel remembers of a voice it started: which region and note, whether its key is still down
/// or a pedal holds it, its age. Indexed by the engine slot the voice plays in (a slot's record is replaced
/// when the slot starts another voice; `SFZVoiceEngine.isActive` tells whether it still sounds).
///
/// Threads: render thread (a plain value in the kernel's table).
struct SFZVoiceRecord: BitwiseCopyable {
    var handle = SFZVoiceHandle(slot: -1, generation: 0)
    var region: Int32 = -1
    var channel: UInt8 = 0
    var key: UInt8 = 0
    var isRelease = false
    /// The note-on's key is still down (not yet released by a note-off).
    var keyDown = false
    /// A note-off came while a pedal held the voice: it releases when the pedal lifts.
    var pedalHeld = false
    /// Not yet released, stopped or choked: what note-offs, pedals, chokes and shedding act on.
    var live = false
    var age: UInt64 = 0
}

/// Render side of the SFZ instrument: MIDI events at their frames through the selector (which regions
/// start), the mapping (what each plays) and the voice engine (which plays them), rendered in segments
/// split at the events so a controller's change reaches the voices at its frame.
///
/// Pedals: the selector starts release-trigger regions when a pedal lifts; the kernel holds the voices
/// themselves — a note-off while sustain (CC 64 ≥ 64) is down, for a region with `sustain_sw` on, or
/// while sostenuto (CC 66) holds a key that was down when it went down (`sostenuto_sw`), leaves the voice
/// sounding until that pedal lifts.
///
/// Threads: render thread only. Holds no class references (the unit keeps the library, the store and the
/// streamer alive while the kernel exists).
struct SFZInstrumentKernel {
    let events: MIDIEventList
    let parameters: ParameterKernel
    let budget: UnsafeMutablePointer<VoiceBudget.Counters>
    let engine: SFZVoiceEngine
    let selector: UnsafeMutablePointer<SFZSelector>
    let plans: SFZRegionPlans
    let records: UnsafeMutablePointer<SFZVoiceRecord>
    let recordCount: Int
    let starts: UnsafeMutableBufferPointer<SFZStart>
    /// Per channel: pedals (bit 0 sustain, bit 1 sostenuto), the pitch bend (−8192…8191), keys down and the
    /// keys sostenuto latched (two words each).
    let pedals: UnsafeMutablePointer<UInt8>
    let bends: UnsafeMutablePointer<Int32>
    let keysDown: UnsafeMutablePointer<UInt64>
    let latched: UnsafeMutablePointer<UInt64>
    /// Frames rendered since the kernel was made (the selector's clock), and the next voice's age.
    let clock: UnsafeMutablePointer<(frame: Int64, age: UInt64)>
    /// Counters the unit reads: notes started (note-ons that started a voice) and slices with sound.
    let activity: UnsafeMutablePointer<SFZInstrumentActivity>
    /// With the effect-send output: the whole instrument as one channel of `ChannelEffectSends`, weighed
    /// by the CC 91/93 last received on any channel (the engine mixes every voice into one pair).
    let sends: ChannelEffectSends?
    let mixed: UnsafeMutablePointer<Float>
    let mixFrames: Int
    let computedCycle: UnsafeMutablePointer<UInt64>
    let computedSilent: UnsafeMutablePointer<Bool>

    static let render: KernelRenderFunction = { state, inputs, flags, _, bus, frameCount, io in
        let kernel = state.assumingMemoryBound(to: SFZInstrumentKernel.self)
        guard kernel.pointee.sends != nil else {
            return kernel.pointee.render(
                flags: flags, frameCount: Int(frameCount), left: io.pointee.floatChannel(0),
                right: io.pointee.floatChannel(1))
        }
        return kernel.pointee.renderWithSends(
            cycle: RenderInputs.cycle(inputs), flags: flags, bus: Int(bus), frameCount: Int(frameCount), io: io)
    }

    /// With the effect-send output: the slice once per render cycle into `mixed` (the mix, then the four
    /// send channels), then output `bus`'s channels copied out.
    @_noAllocation @_noLocks
    func renderWithSends(
        cycle: UInt64, flags: UnsafeMutablePointer<RenderActionFlags>, bus: Int, frameCount: Int,
        io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        if computedCycle.pointee != cycle {
            computedCycle.pointee = cycle
            var sliceFlags = RenderActionFlags(rawValue: 0)
            _ = render(flags: &sliceFlags, frameCount: frameCount, left: mixed, right: mixed + mixFrames)
            computedSilent.pointee = sliceFlags.contains(.outputIsSilence)
        }
        ChannelEffectSends.copyOutput(bus, from: mixed, stride: mixFrames, frameCount: frameCount, into: io)
        if computedSilent.pointee { flags.pointee.insert(.outputIsSilence) }
        return 0
    }

    /// One slice into `left`/`right`: segments between events, each rendered by the engine after the events
    /// at its first frame were applied (at offset 0 of that render), then the gain parameter per frame.
    @_noAllocation @_noLocks
    func render(
        flags: UnsafeMutablePointer<RenderActionFlags>, frameCount: Int, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>
    ) -> AulosStatus {
        events.beginSlice(frameCount: frameCount)
        parameters.beginSlice()
        var frame = 0
        while frame < frameCount {
            parameters.applyEvents(dueAt: frame)
            while let event = events.popDue(at: frame) { handle(event, at: clock.pointee.frame &+ Int64(frame)) }
            let end = min(
                events.nextOffset(after: frame, frameCount: frameCount),
                parameters.nextEventOffset(after: frame, frameCount: frameCount))
            shedVoices()
            engine.render(frameCount: end - frame, left: left + frame, right: right + frame)
            for index in frame..<end {
                let gain = parameters.next(0)
                left[index] *= gain
                right[index] *= gain
            }
            frame = end
        }
        clock.pointee.frame &+= Int64(frameCount)
        events.endSlice(frameCount: frameCount)
        parameters.endSlice(frameCount: frameCount)
        let active = engine.counters.pointee.activeVoices.load(ordering: .relaxed)
        budget.pointee.active.store(active, ordering: .relaxed)
        var silent = true
        for index in 0..<frameCount where left[index] != 0 || right[index] != 0 {
            silent = false
            break
        }
        if !silent { activity.pointee.audibleSlices.add(1, ordering: .relaxed) }
        if let sends {
            sends.beginSlice()
            if !silent {
                let channel = sends.channel(0, frameCount: frameCount)
                let channelRight = channel + sends.maximumFrames
                for index in 0..<frameCount {
                    channel[index] = left[index]
                    channelRight[index] = right[index]
                }
            }
            sends.mix(
                frameCount: frameCount, left: left, right: right, sends: mixed + 2 * mixFrames, sendStride: mixFrames)
        }
        if silent { flags.pointee.insert(.outputIsSilence) }
        return 0
    }

    // MARK: Events

    @_noAllocation @_noLocks
    func handle(_ event: MIDIEvent, at frame: Int64) {
        let channel = Int(event.status & 0x0F)
        let data1 = Int(event.data1)
        let data2 = Int(event.data2)
        switch event.status & 0xF0 {
        case 0x90 where data2 > 0: noteOn(channel: channel, key: data1, velocity: data2, frame: frame)
        case 0x80, 0x90: noteOff(channel: channel, key: data1, frame: frame)
        case 0xB0: controlChange(channel: channel, controller: data1, value: data2, frame: frame)
        case 0xC0: selector.pointee.programChange(channel: channel, program: data1)
        case 0xE0:
            let bend = Int32(data1 | data2 << 7) - 8192
            bends[channel] = bend
            selector.pointee.pitchBend(channel: channel, value: Int(bend))
            updateInputs(channel: channel, controller: -1)
        default: break
        }
    }

    @_noAllocation @_noLocks
    func noteOn(channel: Int, key: Int, velocity: Int, frame: Int64) {
        setBit(keysDown, channel, key, true)
        let count = selector.pointee.noteOn(
            channel: channel, key: key, velocity: velocity, frame: frame, into: starts)
        if count > 0 { activity.pointee.notes.add(1, ordering: .relaxed) }
        for index in 0..<count { startVoice(starts[index]) }
    }

    @_noAllocation @_noLocks
    func noteOff(channel: Int, key: Int, frame: Int64) {
        setBit(keysDown, channel, key, false)
        let sustain = pedals[channel] & 1 != 0
        let sostenuto = pedals[channel] & 2 != 0 && bit(latched, channel, key)
        for slot in 0..<recordCount {
            let record = records[slot]
            guard record.live, record.keyDown, !record.isRelease, Int(record.channel) == channel,
                Int(record.key) == key
            else { continue }
            records[slot].keyDown = false
            let plan = plans.plans[Int(record.region)]
            if (sustain && plan.sustainSwitch) || (sostenuto && plan.sostenutoSwitch) {
                records[slot].pedalHeld = true
            } else {
                release(slot)
            }
        }
        let count = selector.pointee.noteOff(channel: channel, key: key, frame: frame, into: starts)
        for index in 0..<count { startVoice(starts[index]) }
    }

    @_noAllocation @_noLocks
    func controlChange(channel: Int, controller: Int, value: Int, frame: Int64) {
        switch controller {
        case 120:  // All Sound Off: at once (a fast fade)
            for slot in 0..<recordCount where records[slot].handle.slot >= 0 && Int(records[slot].channel) == channel {
                engine.stop(records[slot].handle)
                records[slot].live = false
            }
            return
        case 123, 124, 125, 126, 127:  // All Notes Off (and the mode messages, which imply it)
            for key in 0..<128 where bit(keysDown, channel, key) { noteOff(channel: channel, key: key, frame: frame) }
            return
        case 121:  // Reset All Controllers: pedals up, bend centred (as the selector sees them too), sends
            sends?.controlChange(121, 0, channel: 0)
            controlChange(channel: channel, controller: 64, value: 0, frame: frame)
            controlChange(channel: channel, controller: 66, value: 0, frame: frame)
            bends[channel] = 0
            selector.pointee.pitchBend(channel: channel, value: 0)
            updateInputs(channel: channel, controller: -1)
            return
        default: break
        }
        sends?.controlChange(UInt8(controller), UInt8(value), channel: 0)
        let count = selector.pointee.controlChange(
            channel: channel, controller: controller, value: value, frame: frame, into: starts)
        let down = value >= 64
        if controller == 64 {
            let was = pedals[channel] & 1 != 0
            pedals[channel] = down ? pedals[channel] | 1 : pedals[channel] & ~1
            if was && !down { releasePedalled(channel: channel) }
        } else if controller == 66 {
            let was = pedals[channel] & 2 != 0
            if down && !was {
                pedals[channel] |= 2
                latched[2 * channel] = keysDown[2 * channel]
                latched[2 * channel + 1] = keysDown[2 * channel + 1]
            } else if !down && was {
                pedals[channel] &= ~2
                releasePedalled(channel: channel)
                latched[2 * channel] = 0
                latched[2 * channel + 1] = 0
            }
        }
        for index in 0..<count { startVoice(starts[index]) }
        updateInputs(channel: channel, controller: controller)
    }

    /// Releases the voices a pedal held that no pedal holds any more.
    @_noAllocation @_noLocks
    func releasePedalled(channel: Int) {
        let sustain = pedals[channel] & 1 != 0
        let sostenutoOn = pedals[channel] & 2 != 0
        for slot in 0..<recordCount {
            let record = records[slot]
            guard record.live, record.pedalHeld, Int(record.channel) == channel else { continue }
            let plan = plans.plans[Int(record.region)]
            let held =
                (sustain && plan.sustainSwitch)
                || (sostenutoOn && plan.sostenutoSwitch && bit(latched, channel, Int(record.key)))
            if !held { release(slot) }
        }
    }

    // MARK: Voices

    /// Starts one region: chokes (`off_by`) first, then the group's `polyphony`/`note_polyphony`, then the
    /// voice at its frame (after the region's `delay`), with the inputs the channel's controllers give now.
    @_noAllocation @_noLocks
    func startVoice(_ start: SFZStart) {
        let region = start.region
        let plan = plans.plans[Int(region)]
        var inGroup = 0
        var onKey = 0
        let group = selector.pointee.group(of: region)
        for slot in 0..<recordCount where records[slot].live {
            let record = records[slot]
            guard engine.isActive(record.handle) else {
                records[slot].live = false
                continue
            }
            if selector.pointee.chokes(started: region, playing: record.region) {
                if plans.plans[Int(record.region)].offFast { engine.stop(record.handle) } else { release(slot) }
                records[slot].live = false
                continue
            }
            if selector.pointee.group(of: record.region) == group {
                inGroup &+= 1
                if record.key == start.key { onKey &+= 1 }
            }
        }
        switch selector.pointee.polyphonyDecision(region: region, voicesInGroup: inGroup, voicesOnKey: onKey) {
        case .play: break
        case .stealOldestInGroup: stopOldest(group: group, key: -1)
        case .stealOldestOnKey: stopOldest(group: group, key: Int(start.key))
        }
        let parameters = SFZVoiceMapping.parameters(start, plans: plans, selector: selector)
        guard let handle = engine.start(parameters, at: plan.delayFrames) else { return }
        let channel = Int(start.channel)
        let inputs = SFZVoiceMapping.inputs(
            region: region, channel: channel, bend: Int(bends[channel]), plans: plans, selector: selector)
        engine.setInputs(handle, inputs, at: plan.delayFrames)
        let age = clock.pointee.age
        clock.pointee.age = age &+ 1
        records[Int(handle.slot)] = SFZVoiceRecord(
            handle: handle, region: region, channel: start.channel, key: start.key, isRelease: start.isRelease,
            keyDown: !start.isRelease, pedalHeld: false, live: true, age: age)
    }

    /// Fades out the oldest live voice of `group` (on `key`, unless −1).
    @_noAllocation @_noLocks
    func stopOldest(group: Int32, key: Int) {
        var oldest = -1
        for slot in 0..<recordCount where records[slot].live {
            let record = records[slot]
            guard selector.pointee.group(of: record.region) == group, key < 0 || Int(record.key) == key else {
                continue
            }
            if oldest < 0 || record.age < records[oldest].age { oldest = slot }
        }
        guard oldest >= 0 else { return }
        engine.stop(records[oldest].handle)
        records[oldest].live = false
    }

    @_noAllocation @_noLocks
    func release(_ slot: Int) {
        engine.release(records[slot].handle)
        records[slot].live = false
        records[slot].pedalHeld = false
    }

    /// New inputs for the channel's sounding voices whose regions follow `controller` (−1: the bend, which
    /// every voice follows).
    @_noAllocation @_noLocks
    func updateInputs(channel: Int, controller: Int) {
        for slot in 0..<recordCount where records[slot].handle.slot >= 0 && Int(records[slot].channel) == channel {
            let record = records[slot]
            let plan = plans.plans[Int(record.region)]
            if controller >= 0 {
                guard plan.hasContinuous else { continue }
                var follows = false
                for index in Int(plan.modulationStart)..<Int(plan.modulationStart + plan.modulationCount) {
                    let entry = plans.modulations[index]
                    if Int(entry.controller) == controller && entry.target <= SFZModulationTarget.lastContinuous {
                        follows = true
                        break
                    }
                }
                for index in Int(plan.crossfadeStart)..<Int(plan.crossfadeStart + plan.crossfadeCount)
                where Int(plans.crossfades[index].controller) == controller {
                    follows = true
                }
                guard follows else { continue }
            }
            guard engine.isActive(record.handle) else { continue }
            let inputs = SFZVoiceMapping.inputs(
                region: record.region, channel: channel, bend: Int(bends[channel]), plans: plans, selector: selector)
            engine.setInputs(record.handle, inputs)
        }
    }

    /// Under the host's overload limit: the oldest live voices fade out (released ones are already going),
    /// at most 32 a segment.
    @_noAllocation @_noLocks
    func shedVoices() {
        let limit = budget.pointee.limit.load(ordering: .relaxed)
        guard limit < recordCount else { return }
        var sounding = 0
        for slot in 0..<recordCount where records[slot].live {
            if engine.isActive(records[slot].handle) { sounding &+= 1 } else { records[slot].live = false }
        }
        var shed = 0
        while sounding > limit && shed < 32 {
            var oldest = -1
            for slot in 0..<recordCount where records[slot].live {
                if oldest < 0 || records[slot].age < records[oldest].age { oldest = slot }
            }
            guard oldest >= 0 else { break }
            engine.stop(records[oldest].handle)
            records[oldest].live = false
            sounding &-= 1
            shed &+= 1
        }
        if shed > 0 { budget.pointee.shed.add(shed, ordering: .relaxed) }
    }

    // MARK: Key bits

    @inline(__always) @_noAllocation @_noLocks
    func bit(_ words: UnsafeMutablePointer<UInt64>, _ channel: Int, _ key: Int) -> Bool {
        words[2 * channel + key >> 6] & (1 << UInt64(key & 63)) != 0
    }

    @inline(__always) @_noAllocation @_noLocks
    func setBit(_ words: UnsafeMutablePointer<UInt64>, _ channel: Int, _ key: Int, _ on: Bool) {
        let word = 2 * channel + key >> 6
        if on { words[word] |= 1 << UInt64(key & 63) } else { words[word] &= ~(1 << UInt64(key & 63)) }
    }
}

/// What the render thread tells the unit about what it played.
///
/// Threads: the render thread writes, any thread reads.
struct SFZInstrumentActivity: ~Copyable {
    let notes = Atomic<Int>(0)
    let audibleSlices = Atomic<Int>(0)
}

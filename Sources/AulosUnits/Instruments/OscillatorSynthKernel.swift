import AulosCore
import AulosDSP
import AulosMIDI
import AulosRealtime
import Synchronization

/// Render side of the oscillator synth. Everything lives in memory allocated at initialize; the render
/// path only reads and writes it.
///
/// Threads: render thread only. Holds no class references.
struct OscillatorSynthKernel {
    // (Constants as computed properties: a `static let` is a lazily initialized global, which the render-side
    // checker rejects.)
    /// Frames per control tick: controllers, parameters, LFOs and the modulation matrix move every 16 frames
    /// of absolute time, so output does not depend on where slices end.
    static var controlInterval: Int { @inline(__always) @_noAllocation @_noLocks get { 16 } }
    /// Extra voice slots where stolen voices fade out, and the frames a fade takes.
    static var fadeSlots: Int { @inline(__always) @_noAllocation @_noLocks get { 16 } }
    static var fadeFrames: Float { @inline(__always) @_noAllocation @_noLocks get { 128 } }
    /// `SynthDrum.allCases.count` (a test pins it) and the drum hits that can sound at once.
    static var drumCount: Int { @inline(__always) @_noAllocation @_noLocks get { 30 } }
    static var drumVoiceCount: Int { @inline(__always) @_noAllocation @_noLocks get { 32 } }

    let parameters: ParameterKernel
    let events: MIDIEventList
    let saw: Wavetable
    let triangle: Wavetable
    let sampleRate: Double
    let polyphony: Int
    /// The factory presets' values, a row of `parameterCount` per preset, and which row answers each bank
    /// MSB · 128 + program (−1: none).
    let presetValues: UnsafeMutablePointer<Float>
    let presetRows: UnsafeMutablePointer<Int16>
    /// The channel (0…15) whose program changes load the unit's own parameters, as a single-patch synth
    /// does; every other channel that receives one plays a patch of its own.
    let baseChannel: Int
    /// The drum kit: channels that play it (a bit per channel), its sounding hits, its models, and for each
    /// key the drum (−1: none), the semitones it is tuned by and the factor on its decay.
    let drumChannels: UInt16
    let drumVoices: UnsafeMutablePointer<DrumVoice>
    let drumModels: UnsafeMutablePointer<DrumModel>
    let drumOfKey: UnsafeMutablePointer<Int8>
    let drumOffsetOfKey: UnsafeMutablePointer<Float>
    let drumDecayOfKey: UnsafeMutablePointer<Float>
    /// Each channel's 128 controller values (modulation sources) on the 0…127 scale, fractional from MIDI 2.0.
    let controllerValues: UnsafeMutablePointer<Float>
    /// MPE: the member channels of the lower zone (manager channel 1) and the upper zone (manager channel
    /// 16), 0 when a zone is off; and for each channel the manager of its zone, −1 outside every zone.
    let mpeMembers: UnsafeMutablePointer<Int>
    let zoneOf: UnsafeMutablePointer<Int8>
    /// SIMD grouping: bucket counts (then ends), voice indices by bucket, and two lane-interleaved oscillator
    /// blocks of one control tick.
    let groupCounts: UnsafeMutablePointer<Int>
    let groupOrder: UnsafeMutablePointer<Int32>
    let groupScratch: UnsafeMutablePointer<Float>
    /// A rich voice's two stacks for one control tick: osc 1 left, right, osc 2 left, right; and the same
    /// for each of four voices in lanes (`renderRichVoiceGroup`), 64 floats a lane.
    let richScratch: UnsafeMutablePointer<Float>
    let richGroupScratch: UnsafeMutablePointer<Float>
    /// The wavetable oscillator's frames (a `MorphingWavetable`'s memory, the unit keeps it alive), their
    /// number, and the samples from one frame to the next; nil without a table.
    let morph: UnsafeMutablePointer<Float>?
    let morphFrames: Int
    let morphFrameStride: Int
    let budget: UnsafeMutablePointer<VoiceBudget.Counters>
    /// The owner of every block below (not of `budget`, the unit's, nor of the wavetables and `morph`, which
    /// the unit keeps alive, nor of `sends`, which owns its own buffers).
    let memory: SynthKernelMemory

    let voices: UnsafeMutablePointer<SynthVoice>
    let channels: UnsafeMutablePointer<SynthChannel>
    /// The unit's parameters at the current control tick, and the patches of the 16 channels that chose
    /// their own (valid where `channels[c].program >= 0`).
    let controls: UnsafeMutablePointer<SynthControls>
    let channelControls: UnsafeMutablePointer<SynthControls>
    /// The unit's parameter values gathered for `readControls` (`parameterCount` floats).
    let unitValues: UnsafeMutablePointer<Float>
    /// Sample time of the slice, and of the events being handled; the age the next voice gets.
    let time: UnsafeMutablePointer<Int64>
    let now: UnsafeMutablePointer<Int64>
    let ageCounter: UnsafeMutablePointer<UInt64>
    /// Held notes in mono/legato modes, per channel (128 each), most recent last.
    let noteStack: UnsafeMutablePointer<UInt8>
    let noteStackCount: UnsafeMutablePointer<Int>
    /// Two oscillator blocks of one control tick each.
    let scratch: UnsafeMutablePointer<Float>
    let host: HostCallbackInfo?
    let hostSlice: UnsafeMutablePointer<HostSlice>
    let arp: UnsafeMutablePointer<ArpeggiatorState>
    /// Held/latched arpeggiator notes (note numbers, arrival order).
    let arpNotes: UnsafeMutablePointer<UInt8>
    /// With the effect-send output in use: each MIDI channel rendered apart and weighed by its CC 91/93,
    /// the main mix and the four send channels made once per render cycle into `mixed` (6 × `mixFrames`),
    /// whichever output is pulled first.
    let sends: ChannelEffectSends?
    let mixed: UnsafeMutablePointer<Float>
    let mixFrames: Int
    let computedCycle: UnsafeMutablePointer<UInt64>
    /// What each key plays, in MIDI note units (NaN: a silent key), and the changes the control thread
    /// sends while it plays (a new scale, a tuning message), applied at a slice's start.
    let keyPitches: UnsafeMutablePointer<Double>
    let tuningChanges: SPSCRing<KeyTuning>
    /// A MIDI Tuning Standard key change half received (key << 8 | semitone; 0xFFFF: none).
    let pendingKeyTuning: UnsafeMutablePointer<UInt16>

    init(
        parameters: ParameterKernel, events: MIDIEventList, saw: Wavetable, triangle: Wavetable, sampleRate: Double,
        polyphony: Int, presetValues: [Float], presetRows: [Int16], baseChannel: Int = 0,
        drumChannels: UInt16 = 1 << 9, wavetable: MorphingWavetable? = nil, mpeZones: (lower: Int, upper: Int) = (0, 0),
        budget: UnsafeMutablePointer<VoiceBudget.Counters>,
        host: HostCallbackInfo?, effectSends: Bool = false, maximumFrames: Int = 0,
        tuning: TuningTable, tuningChanges: SPSCRing<KeyTuning>
    ) {
        let memory = SynthKernelMemory()
        self.memory = memory
        self.presetValues = memory.make(copying: presetValues)
        self.presetRows = memory.make(copying: presetRows)
        self.baseChannel = baseChannel
        self.drumChannels = drumChannels
        morph = wavetable?.samples
        morphFrames = wavetable?.frameCount ?? 0
        morphFrameStride = wavetable?.frameStride ?? 0
        controllerValues = memory.make(16 * 128, Float(0))
        for channel in 0..<16 {
            controllerValues[channel * 128 + Int(SynthController.volume.rawValue)] = 100
            controllerValues[channel * 128 + Int(SynthController.pan.rawValue)] = 64
            controllerValues[channel * 128 + Int(SynthController.expression.rawValue)] = 127
        }
        groupCounts = memory.make(35, 0)
        groupOrder = memory.make(polyphony, 0)
        groupScratch = memory.make(8 * Self.controlInterval, 0)
        richScratch = memory.make(4 * Self.controlInterval, 0)
        richGroupScratch = memory.make(16 * Self.controlInterval, 0)
        mpeMembers = memory.make(2, 0)
        zoneOf = memory.make(16, -1)
        drumVoices = memory.make(Self.drumVoiceCount, DrumVoice())
        drumModels = memory.make(copying: SynthDrum.allCases.map(\.model))
        let kit = (0..<128).map { SynthDrum.playedBy(key: $0) }
        drumOfKey = memory.make(copying: kit.map { Int8($0?.drum.rawValue ?? -1) })
        drumOffsetOfKey = memory.make(copying: kit.map { $0?.semitones ?? 0 })
        drumDecayOfKey = memory.make(copying: (0..<128).map { SynthDrum.decayFactor(key: $0) })
        channelControls = memory.make(16, SynthControls())
        unitValues = memory.make(Self.parameterCount, 0)
        self.host = host
        keyPitches = memory.make(copying: tuning.pitches.map { $0 ?? .nan })
        pendingKeyTuning = memory.make(1, 0xFFFF)
        self.tuningChanges = tuningChanges
        sends = effectSends ? ChannelEffectSends(maximumFrames: maximumFrames) : nil
        mixFrames = maximumFrames
        mixed = memory.make(effectSends ? 6 * maximumFrames : 1, 0)
        computedCycle = memory.make(1, .max)
        hostSlice = memory.make(1, HostSlice())
        arp = memory.make(1, ArpeggiatorState())
        arpNotes = memory.make(64, 0)
        self.parameters = parameters
        self.events = events
        self.saw = saw
        self.triangle = triangle
        self.sampleRate = sampleRate
        self.polyphony = polyphony
        self.budget = budget
        voices = memory.make(polyphony + Self.fadeSlots, SynthVoice())
        channels = memory.make(16, SynthChannel())
        controls = memory.make(1, SynthControls())
        time = memory.make(1, 0)
        now = memory.make(1, 0)
        ageCounter = memory.make(1, 0)
        noteStack = memory.make(16 * 128, 0)
        noteStackCount = memory.make(16, 0)
        scratch = memory.make(2 * Self.controlInterval, 0)
        if mpeZones.lower > 0 { configureZone(lower: true, members: mpeZones.lower) }
        if mpeZones.upper > 0 { configureZone(lower: false, members: mpeZones.upper) }
        readControls()
    }

    /// Frees what the kernel holds: its memory in one go, and the effect sends' buffers. Control thread, at
    /// teardown, once.
    func release() {
        memory.release()
        sends?.deallocate()
    }

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, bus, frameCount, io in
        let kernel = state.assumingMemoryBound(to: OscillatorSynthKernel.self)
        guard kernel.pointee.sends != nil else {
            return kernel.pointee.render(
                flags: flags, sampleTime: timeStamp.pointee.sampleTime, frameCount: Int(frameCount),
                left: io.pointee.floatChannel(0), right: io.pointee.floatChannel(1))
        }
        return kernel.pointee.renderWithSends(
            cycle: RenderInputs.cycle(inputs), flags: flags, sampleTime: timeStamp.pointee.sampleTime, bus: Int(bus),
            frameCount: Int(frameCount), io: io)
    }

    /// With the effect-send output: the slice once per cycle (the main mix and the sends into `mixed`), then
    /// output `bus`'s channels copied out — the mix on output 0, the four send channels on output 1.
    @_noAllocation @_noLocks
    func renderWithSends(
        cycle: UInt64, flags: UnsafeMutablePointer<RenderActionFlags>, sampleTime: Int64, bus: Int, frameCount: Int,
        io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        if computedCycle.pointee != cycle {
            computedCycle.pointee = cycle
            var sliceFlags = RenderActionFlags(rawValue: 0)
            _ = render(
                flags: &sliceFlags, sampleTime: sampleTime, frameCount: frameCount, left: mixed,
                right: mixed + mixFrames)
        }
        ChannelEffectSends.copyOutput(bus, from: mixed, stride: mixFrames, frameCount: frameCount, into: io)
        if budget.pointee.active.load(ordering: .relaxed) == 0 { flags.pointee.insert(.outputIsSilence) }
        return 0
    }

    /// Renders one slice into `left`/`right`: straight there, or with the effect-send output, each MIDI
    /// channel into its own buffer, then mixed into `left`/`right` and the send channels after them in `mixed`.
    @_noAllocation @_noLocks
    func render(
        flags: UnsafeMutablePointer<RenderActionFlags>, sampleTime: Int64, frameCount: Int,
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    ) -> AulosStatus {
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
        sends?.beginSlice()
        time.pointee = sampleTime
        events.beginSlice(frameCount: frameCount)
        while let change = tuningChanges.pop() { keyPitches[Int(change.key & 0x7F)] = change.pitch }
        parameters.beginSlice()
        queryHost()
        shedToLimit()
        var frame = 0
        while frame < frameCount {
            parameters.applyEvents(dueAt: frame)
            now.pointee = time.pointee + Int64(frame)
            while let event = events.popDue(at: frame) { handle(event) }
            runArpeggiator(at: frame)
            // (Nested two-argument mins: the three-argument `min` is variadic and would build an array.)
            let end = min(
                min(
                    events.nextOffset(after: frame, frameCount: frameCount),
                    parameters.nextEventOffset(after: frame, frameCount: frameCount)),
                nextArpeggiatorFrame(after: frame, frameCount: frameCount))
            renderSegment(from: frame, to: end, frameCount: frameCount, left: left, right: right)
            frame = end
        }
        events.endSlice(frameCount: frameCount)
        parameters.endSlice(frameCount: frameCount)
        if let sends {
            sends.mix(
                frameCount: frameCount, left: left, right: right, sends: mixed + 2 * mixFrames, sendStride: mixFrames)
        }
        var sounding = 0
        for index in 0..<(polyphony + Self.fadeSlots) where voices[index].active { sounding += 1 }
        for index in 0..<Self.drumVoiceCount where drumVoices[index].active { sounding += 1 }
        budget.pointee.active.store(sounding, ordering: .relaxed)
        if sounding == 0 { flags.pointee.insert(.outputIsSilence) }
        return 0
    }

    /// Renders frames [from, to) of the slice in blocks cut at the absolute control grid.
    @_noAllocation @_noLocks
    func renderSegment(
        from: Int, to: Int, frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    ) {
        var frame = from
        while frame < to {
            let absolute = time.pointee + Int64(frame)
            let intoTick = Int(absolute % Int64(Self.controlInterval))
            if intoTick == 0 {
                retireFinishedVoices()
                controlTick(frame: frame)
            }
            let end = min(to, frame + Self.controlInterval - intoTick)
            renderVoices(from: frame, to: end, frameCount: frameCount, left: left, right: right)
            for index in 0..<Self.drumVoiceCount where drumVoices[index].active {
                var (outLeft, outRight) = (left, right)
                if let sends {
                    outLeft = sends.channel(Int(drumVoices[index].channel), frameCount: frameCount)
                    outRight = outLeft + sends.maximumFrames
                }
                drumVoices[index].active = drumVoices[index].render(
                    left: outLeft + frame, right: outRight + frame, count: end - frame)
            }
            parameters.advanceAll(by: end - frame)
            frame = end
        }
    }

    /// Voices whose envelope has ended since the last tick are freed now, at a tick, never between.
    @_noAllocation @_noLocks
    func retireFinishedVoices() {
        for index in 0..<polyphony where voices[index].active && !voices[index].fading && !voices[index].amp.isActive {
            voices[index].active = false
        }
    }

    /// Where a voice's output goes: the mix, or with the effect-send output its channel's buffer.
    @inline(__always) @_noAllocation @_noLocks
    func outputs(
        of channel: Int, frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    )
        -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    {
        guard let sends else { return (left, right) }
        let buffer = sends.channel(channel, frameCount: frameCount)
        return (buffer, buffer + sends.maximumFrames)
    }

    /// Renders frames [from, to) of every voice. Voices that share a patch and an output go four at a time
    /// through SIMD lanes (`renderVoiceGroup`, and `renderRichVoiceGroup` for rich patches), the rest one by
    /// one, fading voices last. The groups are found by a counting sort into buckets — the patch (the
    /// unit's, or a channel's own), or with sends the channel — that keeps voice order, so the same voices
    /// make the same groups whatever the slice size.
    @_noAllocation @_noLocks
    func renderVoices(
        from: Int, to: Int, frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    ) {
        for index in 0..<(polyphony + Self.fadeSlots) where voices[index].active {
            let c = patch(Int(voices[index].channel))
            if c.pointee.usesModEnvelope {
                for _ in from..<to { _ = voices[index].modEnvelope.next(c.pointee.modEnvelopeShape) }
            }
        }
        // The voices that are not fading, by bucket: plain patches in buckets 0…16, rich ones in 17…33.
        for bucket in 0..<35 { groupCounts[bucket] = 0 }
        for index in 0..<polyphony where voices[index].active && !voices[index].fading {
            groupCounts[groupBucket(Int(voices[index].channel)) + 1] += 1
        }
        for bucket in 1..<35 { groupCounts[bucket] += groupCounts[bucket - 1] }
        // groupCounts[b] is now where bucket b starts; fill, advancing each start.
        for index in 0..<polyphony where voices[index].active && !voices[index].fading {
            let bucket = groupBucket(Int(voices[index].channel))
            groupOrder[groupCounts[bucket]] = Int32(index)
            groupCounts[bucket] += 1
        }
        // Each bucket now ends at groupCounts[b] and starts at groupCounts[b − 1] (or 0).
        var start = 0
        for bucket in 0..<34 {
            let end = groupCounts[bucket]
            if start < end {
                let (outLeft, outRight) = outputs(
                    of: Int(voices[Int(groupOrder[start])].channel), frameCount: frameCount, left: left, right: right)
                renderBucket(start, end, rich: bucket >= 17, from: from, to: to, left: outLeft, right: outRight)
            }
            start = end
        }
        // Fading voices, one by one.
        for index in 0..<(polyphony + Self.fadeSlots) where voices[index].active && voices[index].fading {
            let channel = Int(voices[index].channel)
            let (outLeft, outRight) = outputs(of: channel, frameCount: frameCount, left: left, right: right)
            if patch(channel).pointee.isRich {
                renderRichVoice(voices + index, from: from, to: to, left: outLeft, right: outRight)
            } else {
                renderVoice(voices + index, from: from, to: to, left: outLeft, right: outRight)
            }
        }
    }

    /// The voices at groupOrder[start..<end] (one bucket): four at a time in SIMD lanes, the rest alone.
    /// Of rich voices only those whose block can go into lanes (`rendersInLanes`), gathered to the front.
    @inline(__always) @_noAllocation @_noLocks
    func renderBucket(
        _ start: Int, _ end: Int, rich: Bool, from: Int, to: Int, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>
    ) {
        var lanesEnd = end
        if rich {
            lanesEnd = start
            for k in start..<end where rendersInLanes(voices + Int(groupOrder[k])) {
                (groupOrder[k], groupOrder[lanesEnd]) = (groupOrder[lanesEnd], groupOrder[k])
                lanesEnd += 1
            }
        }
        var next = start
        while next + 4 <= lanesEnd {
            if rich {
                renderRichVoiceGroup(groupOrder + next, from: from, to: to, left: left, right: right)
            } else {
                renderVoiceGroup(groupOrder + next, from: from, to: to, left: left, right: right)
            }
            next += 4
        }
        while next < end {
            let voice = voices + Int(groupOrder[next])
            if rich {
                renderRichVoice(voice, from: from, to: to, left: left, right: right)
            } else {
                renderVoice(voice, from: from, to: to, left: left, right: right)
            }
            next += 1
        }
    }

    /// The SIMD bucket of a voice on `channel`: with sends the channel (its own output buffer); else its
    /// patch, the unit's (0) or a channel's own (1 + channel); 17 more for a rich patch (0…33).
    @inline(__always) @_noAllocation @_noLocks
    func groupBucket(_ channel: Int) -> Int {
        let rich = patch(channel).pointee.isRich ? 17 : 0
        if sends != nil { return rich + channel }
        let owner = owner(channel)
        return rich + (channels[owner].program >= 0 ? owner + 1 : 0)
    }

    /// Once every 16 frames of absolute time: read parameters, advance the LFO, update every voice's pitch,
    /// filter and gains.
    @_noAllocation @_noLocks
    func controlTick(frame: Int) {
        readControls()
        let host = hostSlice.pointee
        for channel in 0..<16 {
            let c = patch(channel)
            var phase = channels[channel].lfoPhase
            var cycle = channels[channel].lfoCycle
            if c.pointee.lfoSync && host.valid {
                // Locked to the host's beats: the phase is where the beat says, not an accumulation.
                let beat = host.beat + Double(frame) * host.beatsPerFrame
                let cycles = beat / c.pointee.lfoSyncBeats
                cycle = Int64(cycles)
                phase = cycles - Double(cycle)
            } else {
                phase += c.pointee.lfoRate * Double(Self.controlInterval) / sampleRate
                if phase >= 1 {
                    cycle += Int64(phase)
                    phase -= Double(Int(phase))
                }
            }
            channels[channel].lfoPhase = phase
            channels[channel].lfoCycle = cycle
            channels[channel].lfoValue = Self.lfoValue(shape: c.pointee.lfoShape, phase: phase, cycle: cycle, seed: 0)
        }
        for index in 0..<(polyphony + Self.fadeSlots) where voices[index].active {
            advanceVoiceModulators(voices + index, frame: frame)
            updateVoice(voices + index, interpolate: true)
        }
        for index in 0..<Self.drumVoiceCount where drumVoices[index].active {
            updateDrumGains(drumVoices + index, interpolate: true)
        }
    }

    /// An LFO's value (−1…1) at `phase` (0…1) for a shape: sine, triangle, rising saw, square, or sample and
    /// hold (a value drawn from the cycle number and `seed`, so it is the same however slices fall).
    @inline(__always) @_noAllocation @_noLocks
    static func lfoValue(shape: LFOShape, phase: Double, cycle: Int64, seed: UInt32) -> Double {
        switch shape {
        case .triangle: phase < 0.25 ? 4 * phase : phase < 0.75 ? 2 - 4 * phase : 4 * phase - 4
        case .saw: 2 * phase - 1
        case .square: phase < 0.5 ? 1 : -1
        case .sampleAndHold: heldValue(cycle: cycle, seed: seed)
        case .sine: FastMath.sine(phase)
        }
    }

    /// Sample and hold: a value in −1…1 for each cycle, from the cycle number and a seed.
    @inline(__always) @_noAllocation @_noLocks
    static func heldValue(cycle: Int64, seed: UInt32) -> Double {
        var draw = NoiseGenerator(seed: (UInt32(truncatingIfNeeded: cycle &* 2_654_435_761) ^ seed) | 1)
        _ = draw.next()
        return Double(draw.next())
    }

    /// The patch channel `channel` plays: its own, or the unit's parameters.
    @inline(__always) @_noAllocation @_noLocks
    func patch(_ channel: Int) -> UnsafeMutablePointer<SynthControls> {
        let owner = owner(channel)
        return channels[owner].program >= 0 ? channelControls + owner : controls
    }

    /// The channel whose patch and controllers a note on `channel` follows: its MPE zone's manager channel,
    /// or itself.
    @inline(__always) @_noAllocation @_noLocks
    func owner(_ channel: Int) -> Int {
        let manager = Int(zoneOf[channel])
        return manager >= 0 ? manager : channel
    }

    /// Whether `channel` is an MPE member channel (not a manager, not outside a zone).
    @inline(__always) @_noAllocation @_noLocks
    func isMember(_ channel: Int) -> Bool {
        let manager = Int(zoneOf[channel])
        return manager >= 0 && manager != channel
    }
}

/// One key's pitch (MIDI note units; NaN: silent), on its way from the control thread to the synth's
/// render side. Plain value: made on the control thread, read on the render thread.
public struct KeyTuning: BitwiseCopyable, Sendable {
    public var key: UInt8
    public var pitch: Double
    public init(key: UInt8, pitch: Double) { (self.key, self.pitch) = (key, pitch) }
}

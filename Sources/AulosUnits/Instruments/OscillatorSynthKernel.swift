import AulosCore
import AulosDSP
import AulosMIDI
import AulosRealtime
import Synchronization

/// One synth voice: oscillators, filter, envelopes and the gains it was last given. Plain value.
struct SynthVoice: BitwiseCopyable {
    var active = false
    /// Fading out over a few milliseconds (stolen, or all-sound-off): ignores note events.
    var fading = false
    var released = false
    /// Key released while the sustain pedal was down.
    var sustained = false
    var note: UInt8 = 0
    var channel: UInt8 = 0
    var velocity: UInt8 = 0
    /// Note-off velocity, once released; poly pressure on its key; a random value fixed at its start
    /// (modulation sources).
    var releaseVelocity: UInt8 = 0
    var pressure: UInt8 = 0
    var random: Float = 0
    /// Where the modulation matrix moves the oscillator mix and the pulse width from the patch's values.
    var mixOffset: Float = 0
    var widthOffset = 0.0
    /// Where in the wavetable the voice plays: a frame and the fraction towards the next.
    var morphFrame = 0
    var morphFraction: Float = 0
    var age: UInt64 = 0
    /// The pitch the voice plays (changes on legato), as a note number.
    var pitch: Double = 0
    /// 32-bit fixed-point phases (2^32 = one period) and their per-sample increments.
    var phase1: UInt32 = 0
    var phase2: UInt32 = 0
    var increment1: UInt32 = 0
    var increment2: UInt32 = 0
    var band1 = 0
    var band2 = 0
    var filter = StateVariableFilter()
    var amp = Envelope()
    var filterEnvelope = Envelope()
    var velocityGain: Float = 1
    /// One noise source per oscillator: shared, how the two took turns would depend on where blocks end.
    var noise = NoiseGenerator(seed: 1)
    var noise2 = NoiseGenerator(seed: 2)
    var gain = GlidingGain()
    /// Glide: how far (in semitones) the pitch still is from the note's, shrinking every control tick.
    var glideOffset = 0.0
    /// The second LFO (per voice): phase, completed cycles (for sample and hold) and value.
    var lfo2Phase = 0.0
    var lfo2Cycle: Int64 = 0
    var lfo2Value: Float = 0
    /// The third envelope, a modulation source.
    var modEnvelope = Envelope()
    var rich = RichVoice()
    var fadeGain: Float = 1
    var fadeStep: Float = 0
}

/// Controller state of one MIDI channel, and which patch it plays.
struct SynthChannel: BitwiseCopyable {
    var bend: Int = 0  // −8192…8191
    var bendRange: Double = 2  // semitones (RPN 0)
    var modulation: UInt8 = 0
    var sustain = false
    var volume: UInt8 = 100
    var expression: UInt8 = 127
    var pan: UInt8 = 64
    var numbers = ParameterNumberTracker()
    /// Channel pressure (aftertouch).
    var pressure: UInt8 = 0
    /// Bank select MSB (CC 0), for the next program change.
    var bank: UInt8 = 0
    /// The preset this channel chose by program change and plays from its own patch; −1 while it plays the
    /// unit's parameters (every channel until its first program change, and always the base channel).
    var program: Int16 = -1
    /// This channel's LFO (its patch sets the rate), kept across slices, and its completed cycles (for
    /// sample and hold).
    var lfoPhase = 0.0
    var lfoValue = 0.0
    var lfoCycle: Int64 = 0
    /// The pitch of the last note started here (a glide's starting point), NaN before the first.
    var lastPitch = Double.nan

    /// Reset All Controllers (CC 121): the controllers return to their defaults; the patch, the bank, the
    /// bend range and the LFO stay (RP-015).
    @_noAllocation @_noLocks
    mutating func resetControllers() {
        var fresh = SynthChannel()
        fresh.bendRange = bendRange
        fresh.bank = bank
        fresh.program = program
        fresh.lfoPhase = lfoPhase
        fresh.lfoValue = lfoValue
        fresh.lfoCycle = lfoCycle
        fresh.lastPitch = lastPitch
        self = fresh
    }
}

/// Values of the synth's parameters at the current control tick.
struct SynthControls: BitwiseCopyable {
    var wave1 = 0
    var wave2 = 0
    var osc2Offset = 0.0
    var mix: Float = 0.5
    var pulseWidth = 0.5
    var filterMode = 0
    var cutoff = 5000.0
    var resonance: Float = 0.1
    var filterEnvAmount = 0.0
    var keyTracking = 0.0
    var ampShape = EnvelopeShape(attack: 0, decay: 0.3, sustain: 0.8, release: 0.3, sampleRate: 48_000)
    var filterShape = EnvelopeShape(attack: 0, decay: 0.3, sustain: 0.8, release: 0.3, sampleRate: 48_000)
    var velocitySensitivity: Float = 0.7
    var lfoRate = 5.0
    var lfoToPitch = 0.0
    var lfoToFilter = 0.0
    var lfoToAmp: Float = 0
    var voiceMode = 0
    var volume: Float = 0.5
    var lfoSync = false
    var lfoSyncBeats = 1.0
    var arpMode = 0
    var arpBeats = 0.25
    var arpGate = 0.5
    var arpOctaves = 1
    var arpLatch = false
    var modulation = ModulationMatrix()
    var unison1 = 1
    var detune1 = 20.0
    var width1: Float = 0.5
    var unison2 = 1
    var detune2 = 20.0
    var width2: Float = 0.5
    var subLevel: Float = 0
    var ringMod: Float = 0
    var fmAmount: Float = 0
    var sync = false
    var filter2Routing = 0
    var cutoff2 = 2000.0
    var resonance2: Float = 0
    var drive: Float = 0
    var glideTime = 0.0
    var glideMode = 0
    var lfoShape = 0
    var lfo2Rate = 2.0
    var lfo2Shape = 0
    var lfo2Sync = false
    var lfo2SyncBeats = 1.0
    var lfo2Retrigger = true
    var wavetablePosition: Float = 0
    var modEnvelopeShape = EnvelopeShape(attack: 0, decay: 0.5, sustain: 0, release: 0.5, sampleRate: 48_000)
    /// Whether voices need the rich path (stacks, sub, ring, FM, sync, second filter, drive, or a matrix
    /// slot that reaches one of them), and whether the matrix reads LFO 2 or envelope 3.
    var isRich = false
    var usesLFO2 = false
    var usesModEnvelope = false
}

/// The arpeggiator's render-side state.
struct ArpeggiatorState {
    /// Keys held (or latched) live in `arpNotes`, in the order they were played; this many.
    var count = 0
    var keysDown = 0
    var channel = 0
    var velocity: UInt8 = 100
    /// The note sounding now (−1: none) and the absolute sample at which its gate closes.
    var sounding = -1
    var offAt: Int64 = 0
    var random = NoiseGenerator(seed: 0x41_5250)
}

/// What the host said about this slice.
struct HostSlice {
    var valid = false
    var playing = false
    var beat = 0.0
    var beatsPerFrame = 0.0
}

/// Render side of the oscillator synth. Everything lives in memory allocated at initialize; the render
/// path only reads and writes it.
///
/// Threads: render thread only. Holds no class references.
struct OscillatorSynthKernel {
    static var controlInterval: Int { 16 }
    static var fadeSlots: Int { 16 }
    static var fadeFrames: Float { 128 }
    /// `OscillatorSynthUnit.Parameter.allCases.count`, as a literal the render-side checker can see (a test pins it).
    static var parameterCount: Int { 92 }
    /// The first modulation-matrix parameter.
    static var modulationSlot: Int { 33 }
    /// `SynthDrum.allCases.count` and the drum hits that can sound at once.
    static var drumCount: Int { 30 }
    static var drumVoiceCount: Int { 32 }

    /// `OscillatorSynthUnit.NoteRate.beats`, as a switch the render-side checker can see.
    @inline(__always) @_noAllocation @_noLocks
    static func rateBeats(_ index: Int) -> Double {
        switch index {
        case 0: 1
        case 1: 2.0 / 3
        case 2: 0.5
        case 3: 1.0 / 3
        case 4: 0.25
        case 5: 1.0 / 6
        case 6: 0.125
        default: 1.0 / 12
        }
    }

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
    /// Each channel's 128 controller values (modulation sources).
    let controllerValues: UnsafeMutablePointer<UInt8>
    /// MPE: the member channels of the lower zone (manager channel 1) and the upper zone (manager channel
    /// 16), 0 when a zone is off; and for each channel the manager of its zone, −1 outside every zone.
    let mpeMembers: UnsafeMutablePointer<Int>
    let zoneOf: UnsafeMutablePointer<Int8>
    /// SIMD grouping: bucket counts (then ends), voice indices by bucket, and two lane-interleaved oscillator
    /// blocks of one control tick.
    let groupCounts: UnsafeMutablePointer<Int>
    let groupOrder: UnsafeMutablePointer<Int32>
    let groupScratch: UnsafeMutablePointer<Float>
    /// A rich voice's two stacks for one control tick: osc 1 left, right, osc 2 left, right.
    let richScratch: UnsafeMutablePointer<Float>
    /// The wavetable oscillator's frames (a `MorphingWavetable`'s memory, the unit keeps it alive), their
    /// number, and the samples from one frame to the next; nil without a table.
    let morph: UnsafeMutablePointer<Float>?
    let morphFrames: Int
    let morphFrameStride: Int
    let budget: UnsafeMutablePointer<VoiceBudget.Counters>

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
        polyphony: Int, presetValues: UnsafeMutablePointer<Float>, presetRows: UnsafeMutablePointer<Int16>,
        baseChannel: Int = 0, drumChannels: UInt16 = 1 << 9, wavetable: MorphingWavetable? = nil,
        mpeZones: (lower: Int, upper: Int) = (0, 0),
        budget: UnsafeMutablePointer<VoiceBudget.Counters>,
        host: HostCallbackInfo?, effectSends: Bool = false, maximumFrames: Int = 0,
        tuning: TuningTable, tuningChanges: SPSCRing<KeyTuning>
    ) {
        self.presetRows = presetRows
        self.baseChannel = baseChannel
        self.drumChannels = drumChannels
        morph = wavetable?.samples
        morphFrames = wavetable?.frameCount ?? 0
        morphFrameStride = wavetable?.frameStride ?? 0
        controllerValues = .allocate(capacity: 16 * 128)
        controllerValues.initialize(repeating: 0, count: 16 * 128)
        for channel in 0..<16 {
            controllerValues[channel * 128 + 7] = 100
            controllerValues[channel * 128 + 10] = 64
            controllerValues[channel * 128 + 11] = 127
        }
        groupCounts = .allocate(capacity: 18)
        groupCounts.initialize(repeating: 0, count: 18)
        groupOrder = .allocate(capacity: max(1, polyphony))
        groupOrder.initialize(repeating: 0, count: max(1, polyphony))
        groupScratch = .allocate(capacity: 8 * Self.controlInterval)
        groupScratch.initialize(repeating: 0, count: 8 * Self.controlInterval)
        richScratch = .allocate(capacity: 4 * Self.controlInterval)
        richScratch.initialize(repeating: 0, count: 4 * Self.controlInterval)
        mpeMembers = .allocate(capacity: 2)
        mpeMembers.initialize(repeating: 0, count: 2)
        zoneOf = .allocate(capacity: 16)
        zoneOf.initialize(repeating: -1, count: 16)
        drumVoices = .allocate(capacity: Self.drumVoiceCount)
        drumVoices.initialize(repeating: DrumVoice(), count: Self.drumVoiceCount)
        drumModels = .allocate(capacity: Self.drumCount)
        drumModels.initialize(from: SynthDrum.allCases.map(\.model), count: Self.drumCount)
        drumOfKey = .allocate(capacity: 128)
        drumOffsetOfKey = .allocate(capacity: 128)
        drumDecayOfKey = .allocate(capacity: 128)
        for key in 0..<128 {
            let played = SynthDrum.playedBy(key: key)
            (drumOfKey + key).initialize(to: Int8(played?.drum.rawValue ?? -1))
            (drumOffsetOfKey + key).initialize(to: played?.semitones ?? 0)
            (drumDecayOfKey + key).initialize(to: SynthDrum.decayFactor(key: key))
        }
        channelControls = .allocate(capacity: 16)
        channelControls.initialize(repeating: SynthControls(), count: 16)
        unitValues = .allocate(capacity: Self.parameterCount)
        unitValues.initialize(repeating: 0, count: Self.parameterCount)
        self.host = host
        keyPitches = .allocate(capacity: 128)
        keyPitches.initialize(from: tuning.pitches.map { $0 ?? .nan }, count: 128)
        pendingKeyTuning = .allocate(capacity: 1)
        pendingKeyTuning.initialize(to: 0xFFFF)
        self.tuningChanges = tuningChanges
        sends = effectSends ? ChannelEffectSends(maximumFrames: maximumFrames) : nil
        mixFrames = maximumFrames
        mixed = .allocate(capacity: effectSends ? 6 * maximumFrames : 1)
        mixed.initialize(repeating: 0, count: effectSends ? 6 * maximumFrames : 1)
        computedCycle = .allocate(capacity: 1)
        computedCycle.initialize(to: .max)
        hostSlice = .allocate(capacity: 1)
        hostSlice.initialize(to: HostSlice())
        arp = .allocate(capacity: 1)
        arp.initialize(to: ArpeggiatorState())
        arpNotes = .allocate(capacity: 64)
        arpNotes.initialize(repeating: 0, count: 64)
        self.parameters = parameters
        self.events = events
        self.saw = saw
        self.triangle = triangle
        self.sampleRate = sampleRate
        self.polyphony = polyphony
        self.presetValues = presetValues
        self.budget = budget
        voices = .allocate(capacity: polyphony + Self.fadeSlots)
        voices.initialize(repeating: SynthVoice(), count: polyphony + Self.fadeSlots)
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: SynthChannel(), count: 16)
        controls = .allocate(capacity: 1)
        controls.initialize(to: SynthControls())
        time = .allocate(capacity: 1)
        time.initialize(to: 0)
        now = .allocate(capacity: 1)
        now.initialize(to: 0)
        ageCounter = .allocate(capacity: 1)
        ageCounter.initialize(to: 0)
        noteStack = .allocate(capacity: 16 * 128)
        noteStack.initialize(repeating: 0, count: 16 * 128)
        noteStackCount = .allocate(capacity: 16)
        noteStackCount.initialize(repeating: 0, count: 16)
        scratch = .allocate(capacity: 2 * Self.controlInterval)
        scratch.initialize(repeating: 0, count: 2 * Self.controlInterval)
        if mpeZones.lower > 0 { configureZone(lower: true, members: mpeZones.lower) }
        if mpeZones.upper > 0 { configureZone(lower: false, members: mpeZones.upper) }
        readControls()
    }

    func release() {
        voices.deallocate()
        channels.deallocate()
        controls.deallocate()
        channelControls.deallocate()
        unitValues.deallocate()
        time.deallocate()
        now.deallocate()
        ageCounter.deallocate()
        noteStack.deallocate()
        noteStackCount.deallocate()
        presetValues.deallocate()
        presetRows.deallocate()
        drumVoices.deallocate()
        drumModels.deallocate()
        drumOfKey.deallocate()
        drumOffsetOfKey.deallocate()
        drumDecayOfKey.deallocate()
        controllerValues.deallocate()
        mpeMembers.deallocate()
        groupCounts.deallocate()
        groupOrder.deallocate()
        groupScratch.deallocate()
        richScratch.deallocate()
        zoneOf.deallocate()
        scratch.deallocate()
        hostSlice.deallocate()
        arp.deallocate()
        arpNotes.deallocate()
        mixed.deallocate()
        computedCycle.deallocate()
        keyPitches.deallocate()
        pendingKeyTuning.deallocate()
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

    // MARK: Rendering

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
        events.beginSlice()
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

    /// Renders frames [from, to) of every voice. Plain voices that share a patch and an output go four at a
    /// time through SIMD lanes (`renderVoiceGroup`), the rest one by one. The groups are found by a counting
    /// sort into buckets — the patch (the unit's, or a channel's own), or with sends the channel — that
    /// keeps voice order, so the same voices make the same groups whatever the slice size.
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
        for bucket in 0..<18 { groupCounts[bucket] = 0 }
        for index in 0..<polyphony where voices[index].active && !voices[index].fading {
            let bucket = groupBucket(Int(voices[index].channel))
            if bucket >= 0 { groupCounts[bucket + 1] += 1 }
        }
        for bucket in 1..<18 { groupCounts[bucket] += groupCounts[bucket - 1] }
        // groupCounts[b] is now where bucket b starts; fill, advancing each start.
        for index in 0..<polyphony where voices[index].active && !voices[index].fading {
            let bucket = groupBucket(Int(voices[index].channel))
            guard bucket >= 0 else { continue }
            groupOrder[groupCounts[bucket]] = Int32(index)
            groupCounts[bucket] += 1
        }
        // Each bucket now ends at groupCounts[b] and starts at groupCounts[b − 1] (or 0).
        var start = 0
        for bucket in 0..<17 {
            let end = groupCounts[bucket]
            if start < end {
                let (outLeft, outRight) = outputs(
                    of: Int(voices[Int(groupOrder[start])].channel), frameCount: frameCount, left: left, right: right)
                var next = start
                while next + 4 <= end {
                    renderVoiceGroup(groupOrder + next, from: from, to: to, left: outLeft, right: outRight)
                    next += 4
                }
                while next < end {
                    renderVoice(voices + Int(groupOrder[next]), from: from, to: to, left: outLeft, right: outRight)
                    next += 1
                }
            }
            start = end
        }
        // Rich and fading voices, one by one.
        for index in 0..<(polyphony + Self.fadeSlots) where voices[index].active {
            let channel = Int(voices[index].channel)
            let rich = patch(channel).pointee.isRich
            guard rich || voices[index].fading else { continue }
            let (outLeft, outRight) = outputs(of: channel, frameCount: frameCount, left: left, right: right)
            if rich {
                renderRichVoice(voices + index, from: from, to: to, left: outLeft, right: outRight)
            } else {
                renderVoice(voices + index, from: from, to: to, left: outLeft, right: outRight)
            }
        }
    }

    /// The SIMD bucket of a plain voice on `channel` (0…16), or −1 for a rich patch: with sends the
    /// channel (its own output buffer); else its patch, the unit's (0) or a channel's own (1 + channel).
    @inline(__always) @_noAllocation @_noLocks
    func groupBucket(_ channel: Int) -> Int {
        if patch(channel).pointee.isRich { return -1 }
        if sends != nil { return channel }
        let owner = owner(channel)
        return channels[owner].program >= 0 ? owner + 1 : 0
    }

    /// Renders frames [from, to) of four plain voices of one patch into one output, side by side in SIMD
    /// lanes: oscillators into lane-interleaved scratch, then mix, filter, both envelopes and the gains
    /// four at a time. Each lane computes exactly what `renderVoice` would; the four are summed into the
    /// output per frame.
    @_noAllocation @_noLocks
    func renderVoiceGroup(
        _ lanes: UnsafeMutablePointer<Int32>, from: Int, to: Int, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>
    ) {
        let v0 = voices + Int(lanes[0])
        let v1 = voices + Int(lanes[1])
        let v2 = voices + Int(lanes[2])
        let v3 = voices + Int(lanes[3])
        let c = patch(Int(v0.pointee.channel))
        let count = to - from
        let a = groupScratch
        let b = groupScratch + 4 * Self.controlInterval
        var mix = SIMD4<Float>(repeating: 0)
        for lane in 0..<4 {
            let voice = voices + Int(lanes[lane])
            let pulseWidth = max(0.05, min(0.95, c.pointee.pulseWidth + voice.pointee.widthOffset))
            let width = UInt32(truncatingIfNeeded: Int64(pulseWidth * 4_294_967_296))
            mix[lane] = max(0, min(1, c.pointee.mix + voice.pointee.mixOffset))
            fillOscillator(
                a + lane, stride: 4, count: count, wave: c.pointee.wave1, phase: &voice.pointee.phase1,
                increment: voice.pointee.increment1, band: voice.pointee.band1, width: width,
                noise: &voice.pointee.noise, morphFrame: voice.pointee.morphFrame,
                morphFraction: voice.pointee.morphFraction)
            fillOscillator(
                b + lane, stride: 4, count: count, wave: c.pointee.wave2, phase: &voice.pointee.phase2,
                increment: voice.pointee.increment2, band: voice.pointee.band2, width: width,
                noise: &voice.pointee.noise2, morphFrame: voice.pointee.morphFrame,
                morphFraction: voice.pointee.morphFraction)
        }
        var filter = StateVariableFilterLanes(
            v0.pointee.filter, v1.pointee.filter, v2.pointee.filter, v3.pointee.filter)
        var amp = EnvelopeLanes(v0.pointee.amp, v1.pointee.amp, v2.pointee.amp, v3.pointee.amp)
        var filterEnvelope = EnvelopeLanes(
            v0.pointee.filterEnvelope, v1.pointee.filterEnvelope, v2.pointee.filterEnvelope, v3.pointee.filterEnvelope)
        var gainLeft = SIMD4(v0.pointee.gain.left, v1.pointee.gain.left, v2.pointee.gain.left, v3.pointee.gain.left)
        var gainRight = SIMD4(
            v0.pointee.gain.right, v1.pointee.gain.right, v2.pointee.gain.right, v3.pointee.gain.right)
        let stepLeft = SIMD4(
            v0.pointee.gain.leftStep, v1.pointee.gain.leftStep, v2.pointee.gain.leftStep, v3.pointee.gain.leftStep)
        let stepRight = SIMD4(
            v0.pointee.gain.rightStep, v1.pointee.gain.rightStep, v2.pointee.gain.rightStep, v3.pointee.gain.rightStep)
        let outLeft = left + from
        let outRight = right + from
        let mode = c.pointee.filterMode
        for i in 0..<count {
            let oscillator1 = UnsafeRawPointer(a + 4 &* i).loadUnaligned(as: SIMD4<Float>.self)
            let oscillator2 = UnsafeRawPointer(b + 4 &* i).loadUnaligned(as: SIMD4<Float>.self)
            let filtered = filter.process(oscillator1 + (oscillator2 - oscillator1) * mix, mode: mode)
            _ = filterEnvelope.next(c.pointee.filterShape)
            let sample = filtered * amp.next(c.pointee.ampShape)
            gainLeft += stepLeft
            gainRight += stepRight
            outLeft[i] += (sample * gainLeft).sum()
            outRight[i] += (sample * gainRight).sum()
        }
        for lane in 0..<4 {
            let voice = voices + Int(lanes[lane])
            filter.store(lane: lane, into: &voice.pointee.filter)
            amp.store(lane: lane, into: &voice.pointee.amp)
            filterEnvelope.store(lane: lane, into: &voice.pointee.filterEnvelope)
            voice.pointee.gain.left = gainLeft[lane]
            voice.pointee.gain.right = gainRight[lane]
        }
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
    static func lfoValue(shape: Int, phase: Double, cycle: Int64, seed: UInt32) -> Double {
        switch shape {
        case 1: phase < 0.25 ? 4 * phase : phase < 0.75 ? 2 - 4 * phase : 4 * phase - 4
        case 2: 2 * phase - 1
        case 3: phase < 0.5 ? 1 : -1
        case 4: heldValue(cycle: cycle, seed: seed)
        default: FastMath.sine(phase)
        }
    }

    /// Sample and hold: a value in −1…1 for each cycle, from the cycle number and a seed.
    @inline(__always) @_noAllocation @_noLocks
    static func heldValue(cycle: Int64, seed: UInt32) -> Double {
        var draw = NoiseGenerator(seed: (UInt32(truncatingIfNeeded: cycle &* 2_654_435_761) ^ seed) | 1)
        _ = draw.next()
        return Double(draw.next())
    }

    /// At a control tick: a voice's second LFO moves on (free, retriggered from the note's start, or on the
    /// host's beat), its glide closes in on the note's pitch.
    @_noAllocation @_noLocks
    func advanceVoiceModulators(_ voice: UnsafeMutablePointer<SynthVoice>, frame: Int) {
        let c = patch(Int(voice.pointee.channel)).pointee
        if c.usesLFO2 {
            let host = hostSlice.pointee
            if c.lfo2Sync && host.valid {
                let cycles = (host.beat + Double(frame) * host.beatsPerFrame) / c.lfo2SyncBeats
                voice.pointee.lfo2Cycle = Int64(cycles)
                voice.pointee.lfo2Phase = cycles - Double(Int64(cycles))
            } else {
                voice.pointee.lfo2Phase += c.lfo2Rate * Double(Self.controlInterval) / sampleRate
                if voice.pointee.lfo2Phase >= 1 {
                    voice.pointee.lfo2Cycle += Int64(voice.pointee.lfo2Phase)
                    voice.pointee.lfo2Phase -= Double(Int(voice.pointee.lfo2Phase))
                }
            }
            voice.pointee.lfo2Value = Float(
                Self.lfoValue(
                    shape: c.lfo2Shape, phase: voice.pointee.lfo2Phase, cycle: voice.pointee.lfo2Cycle,
                    seed: UInt32(truncatingIfNeeded: voice.pointee.age)))
        }
        if voice.pointee.glideOffset != 0 {
            // Within 1 % (−40 dB) of the distance after the glide time.
            let ticks = max(1e-9, c.glideTime * sampleRate / Double(Self.controlInterval))
            voice.pointee.glideOffset *= FastMath.exp(-4.605_170_185_988_091 / ticks)
            if abs(voice.pointee.glideOffset) < 1e-4 { voice.pointee.glideOffset = 0 }
        }
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

    /// The unit's parameters as controls, for every channel that plays them.
    @_noAllocation @_noLocks
    func readControls() {
        for slot in 0..<Self.parameterCount { unitValues[slot] = parameters.value(slot) }
        readControls(from: unitValues, into: controls)
    }

    /// A patch's `parameterCount` values (in `OscillatorSynthUnit.Parameter` order) as controls.
    @_noAllocation @_noLocks
    func readControls(from p: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<SynthControls>) {
        var c = target.pointee
        c.wave1 = Int(p[0])
        c.wave2 = Int(p[1])
        c.osc2Offset = Double(p[2]) + Double(p[3]) / 100
        c.mix = p[4]
        c.pulseWidth = Double(p[5])
        c.filterMode = Int(p[6])
        c.cutoff = Double(p[7])
        c.resonance = p[8]
        c.filterEnvAmount = Double(p[9])
        c.keyTracking = Double(p[10])
        let amp = EnvelopeShape(
            attack: Double(p[11]), decay: Double(p[12]), sustain: p[13],
            release: Double(p[14]), sampleRate: sampleRate)
        c.ampShape = amp
        let filter = EnvelopeShape(
            attack: Double(p[15]), decay: Double(p[16]), sustain: p[17],
            release: Double(p[18]), sampleRate: sampleRate)
        c.filterShape = filter
        c.velocitySensitivity = p[19]
        c.lfoRate = Double(p[20])
        c.lfoToPitch = Double(p[21])
        c.lfoToFilter = Double(p[22])
        c.lfoToAmp = p[23]
        c.voiceMode = Int(p[24])
        c.volume = Float(FastMath.exp2(Double(p[25]) / 6.020_599_913_279_624))
        c.lfoSync = p[26] >= 0.5
        c.lfoSyncBeats = Self.rateBeats(Int(p[27]))
        c.arpMode = Int(p[28])
        c.arpBeats = Self.rateBeats(Int(p[29]))
        c.arpGate = Double(p[30])
        c.arpOctaves = max(1, Int(p[31]))
        c.arpLatch = p[32] >= 0.5
        c.modulation = ModulationMatrix(p + Self.modulationSlot)
        c.unison1 = max(1, min(16, Int(p[65])))
        c.detune1 = Double(p[66])
        c.width1 = p[67]
        c.unison2 = max(1, min(16, Int(p[68])))
        c.detune2 = Double(p[69])
        c.width2 = p[70]
        c.subLevel = p[71]
        c.ringMod = p[72]
        c.fmAmount = p[73]
        c.sync = p[74] >= 0.5
        c.filter2Routing = Int(p[75])
        c.cutoff2 = Double(p[76])
        c.resonance2 = p[77]
        c.drive = p[78]
        c.glideTime = Double(p[79])
        c.glideMode = Int(p[80])
        c.lfoShape = Int(p[81])
        c.lfo2Rate = Double(p[82])
        c.lfo2Shape = Int(p[83])
        c.lfo2Sync = p[84] >= 0.5
        c.lfo2SyncBeats = Self.rateBeats(Int(p[85]))
        c.lfo2Retrigger = p[86] >= 0.5
        c.modEnvelopeShape = EnvelopeShape(
            attack: Double(p[87]), decay: Double(p[88]), sustain: p[89], release: Double(p[90]),
            sampleRate: sampleRate)
        c.wavetablePosition = p[91]
        let matrix = c.modulation
        var matrixReachesRich = false
        var readsLFO2 = false
        var readsModEnvelope = false
        for slot in 0..<8 where matrix.isActive && matrix.sources[slot] != 0 && matrix.amounts[slot] != 0 {
            if matrix.destinations[slot] >= 10 && matrix.destinations[slot] <= 15 { matrixReachesRich = true }
            let (source, via) = (matrix.sources[slot], matrix.vias[slot])
            if source == 14 || via == 14 { readsLFO2 = true }
            if source == 15 || via == 15 { readsModEnvelope = true }
        }
        c.usesLFO2 = readsLFO2
        c.usesModEnvelope = readsModEnvelope
        c.isRich =
            c.unison1 > 1 || c.unison2 > 1 || c.subLevel > 0 || c.ringMod > 0 || c.fmAmount > 0 || c.sync
            || c.filter2Routing != 0 || c.drive > 0 || matrixReachesRich
        target.pointee = c
    }

    /// Pitch, filter and output gains of one voice from the current controls. With `interpolate`, gains glide
    /// to their new values over the next tick (no zipper noise from CC 7/10/11); a new note jumps.
    @_noAllocation @_noLocks
    func updateVoice(_ voice: UnsafeMutablePointer<SynthVoice>, interpolate: Bool) {
        let own = Int(voice.pointee.channel)
        // In an MPE zone the manager channel's controllers and patch apply to every note; a member channel
        // adds its own bend, pressure and slide to its note.
        let channel = channels[owner(own)]
        let c = patch(own)
        let depth = Double(channel.modulation) / 127
        let lfo = channel.lfoValue
        let modulation =
            c.pointee.modulation.isActive ? c.pointee.modulation.offsets(inputs(of: voice)) : ModulationOffsets()
        var bend = Double(channels[own].bend) / 8192 * channels[own].bendRange
        if isMember(own) { bend += Double(channel.bend) / 8192 * channel.bendRange }
        let pitch =
            voice.pointee.pitch + voice.pointee.glideOffset + bend + lfo * c.pointee.lfoToPitch / 100 * depth
            + Double(modulation.pitch) * 24
        voice.pointee.increment1 = Wavetable.phaseIncrement(FastMath.frequency(ofNote: pitch) / sampleRate)
        voice.pointee.band1 = Wavetable.band(forNote: pitch)
        let pitch2 = pitch + c.pointee.osc2Offset + Double(modulation.osc2Pitch) * 24
        voice.pointee.increment2 = Wavetable.phaseIncrement(FastMath.frequency(ofNote: pitch2) / sampleRate)
        voice.pointee.band2 = Wavetable.band(forNote: pitch2)
        if morph != nil {
            let position =
                max(0, min(1, c.pointee.wavetablePosition + modulation.wavetablePosition))
                * Float(morphFrames - 1)
            voice.pointee.morphFrame = min(Int(position), max(0, morphFrames - 1))
            voice.pointee.morphFraction = position - Float(voice.pointee.morphFrame)
        }
        voice.pointee.mixOffset = modulation.oscMix
        voice.pointee.widthOffset = Double(modulation.pulseWidth) * 0.45
        let envelopeOctaves = c.pointee.filterEnvAmount + Double(modulation.filterEnvAmount) * 8
        let octaves =
            Double(voice.pointee.filterEnvelope.level) * envelopeOctaves + c.pointee.keyTracking * (pitch - 60) / 12
            + lfo * c.pointee.lfoToFilter * depth + Double(modulation.cutoff) * 8
        voice.pointee.filter.setCoefficients(
            cutoff: c.pointee.cutoff * FastMath.exp2(octaves),
            resonance: c.pointee.resonance + modulation.resonance, sampleRate: sampleRate)
        if c.pointee.isRich {
            updateRichVoice(voice, c.pointee, pitch: pitch, pitch2: pitch2, octaves: octaves, modulation: modulation)
        }
        let volume = Float(channel.volume) / 127
        let expression = Float(channel.expression) / 127
        let tremolo = 1 - c.pointee.lfoToAmp * Float(depth) * Float(1 + lfo) / 2
        let swell = max(0, 1 + modulation.amp)
        voice.pointee.gain.aim(
            gain: c.pointee.volume * volume * volume * expression * expression * voice.pointee.velocityGain * tremolo
                * swell,
            position: GlidingGain.position(pan: channel.pan) + Double(modulation.pan) / 2,
            frames: Self.controlInterval, interpolate: interpolate)
    }

    /// Where a voice's modulation sources stand now.
    @_noAllocation @_noLocks
    func inputs(of voice: UnsafeMutablePointer<SynthVoice>) -> ModulationInputs {
        let own = Int(voice.pointee.channel)
        let manager = channels[owner(own)]
        var inputs = ModulationInputs(controllers: controllerValues + 128 * own)
        inputs.velocity = Float(voice.pointee.velocity) / 127
        inputs.key = Float(Int(voice.pointee.note) - 60) / 60
        inputs.releaseVelocity = Float(voice.pointee.releaseVelocity) / 127
        inputs.modWheel = Float(manager.modulation) / 127
        inputs.channelPressure = Float(channels[own].pressure) / 127
        inputs.polyPressure = Float(voice.pointee.pressure) / 127
        inputs.pitchBend = Float(channels[own].bend) / 8192
        inputs.lfo = Float(manager.lfoValue)
        inputs.ampEnvelope = voice.pointee.amp.level
        inputs.filterEnvelope = voice.pointee.filterEnvelope.level
        // A member channel carries one note: its pressure is the note's. Elsewhere poly pressure is.
        inputs.notePressure = isMember(own) ? inputs.channelPressure : inputs.polyPressure
        inputs.slide = Float(controllerValues[128 * own + 74]) / 127
        inputs.random = voice.pointee.random
        inputs.lfo2 = voice.pointee.lfo2Value
        inputs.modEnvelope = voice.pointee.modEnvelope.level
        return inputs
    }

    /// Fills `count` samples of one oscillator into `out`. The waveform is chosen once per block, not per
    /// sample, so each case is a tight loop (what keeps the kernel within reach of plain C).
    @inline(__always) @_noAllocation @_noLocks
    func fillOscillator(
        _ out: UnsafeMutablePointer<Float>, stride: Int = 1, count: Int, wave: Int, phase: inout UInt32,
        increment: UInt32, band: Int, width: UInt32, noise: inout NoiseGenerator, morphFrame: Int = 0,
        morphFraction: Float = 0
    ) {
        var p = phase
        switch wave {
        case 5 where morph != nil:
            // The wavetable: this frame and the next, crossfaded.
            let (first, next) = morphPair(morphFrame)
            for i in 0..<count {
                let a = first.sample(band: band, phase: p)
                out[i &* stride] = a + (next.sample(band: band, phase: p) - a) * morphFraction
                p &+= increment
            }
        case 0, 5:  // (a wavetable with no table loaded plays a saw)
            for i in 0..<count {
                out[i &* stride] = saw.sample(band: band, phase: p)
                p &+= increment
            }
        case 1:
            for i in 0..<count {
                out[i &* stride] = saw.sample(band: band, phase: p) - saw.sample(band: band, phase: p &+ width)
                p &+= increment
            }
        case 2:
            for i in 0..<count {
                out[i &* stride] = triangle.sample(band: band, phase: p)
                p &+= increment
            }
        case 3:
            // The top triangle band holds only the fundamental: a sine, scaled back to full level.
            let top = WavetableLayout.bandCount - 1
            for i in 0..<count {
                out[i &* stride] = triangle.sample(band: top, phase: p) * 1.233_700_550_136_17
                p &+= increment
            }
        default:
            for i in 0..<count { out[i &* stride] = noise.next() }
        }
        phase = p
    }

    /// Frame `frame` of the loaded wavetable and the one after it (the last frame pairs with itself), to
    /// crossfade. Only with a table loaded.
    @inline(__always) @_noAllocation @_noLocks
    func morphPair(_ frame: Int) -> (Wavetable, Wavetable) {
        let base = morph.unsafelyUnwrapped
        return (
            Wavetable(samples: base + frame &* morphFrameStride, stride: 2049),
            Wavetable(samples: base + min(frame + 1, morphFrames - 1) &* morphFrameStride, stride: 2049)
        )
    }

    /// Renders frames [from, to) of one voice (at most one control tick, 16 frames): oscillators into
    /// scratch buffers, then mix, filter, envelopes and gains in one loop over local copies of the hot state.
    @_noAllocation @_noLocks
    func renderVoice(
        _ voice: UnsafeMutablePointer<SynthVoice>, from: Int, to: Int,
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    ) {
        let c = patch(Int(voice.pointee.channel))
        let count = to - from
        let a = scratch
        let b = scratch + Self.controlInterval
        let pulseWidth = max(0.05, min(0.95, c.pointee.pulseWidth + voice.pointee.widthOffset))
        let width = UInt32(truncatingIfNeeded: Int64(pulseWidth * 4_294_967_296))
        fillOscillator(
            a, count: count, wave: c.pointee.wave1, phase: &voice.pointee.phase1, increment: voice.pointee.increment1,
            band: voice.pointee.band1, width: width, noise: &voice.pointee.noise,
            morphFrame: voice.pointee.morphFrame, morphFraction: voice.pointee.morphFraction)
        fillOscillator(
            b, count: count, wave: c.pointee.wave2, phase: &voice.pointee.phase2, increment: voice.pointee.increment2,
            band: voice.pointee.band2, width: width, noise: &voice.pointee.noise2,
            morphFrame: voice.pointee.morphFrame, morphFraction: voice.pointee.morphFraction)
        var filter = voice.pointee.filter
        var amp = voice.pointee.amp
        var filterEnvelope = voice.pointee.filterEnvelope
        var gainLeft = voice.pointee.gain.left
        var gainRight = voice.pointee.gain.right
        let stepLeft = voice.pointee.gain.leftStep
        let stepRight = voice.pointee.gain.rightStep
        let fading = voice.pointee.fading
        var fadeGain = voice.pointee.fadeGain
        let fadeStep = voice.pointee.fadeStep
        var active = true
        let outLeft = left + from
        let outRight = right + from
        let mix = max(0, min(1, c.pointee.mix + voice.pointee.mixOffset))
        let mode = c.pointee.filterMode
        for i in 0..<count {
            let filtered = filter.process(a[i] + (b[i] - a[i]) * mix, mode: mode)
            _ = filterEnvelope.next(c.pointee.filterShape)
            var sample = filtered * amp.next(c.pointee.ampShape)
            if fading {
                sample *= fadeGain
                fadeGain -= fadeStep
                if fadeGain <= 0 {
                    active = false
                    break
                }
            }
            gainLeft += stepLeft
            gainRight += stepRight
            outLeft[i] += sample * gainLeft
            outRight[i] += sample * gainRight
            if !amp.isActive {
                // A fading voice is done; any other stays until the next control tick (`retireFinishedVoices`),
                // so the voices grouped in SIMD lanes change only at ticks and events.
                if fading { active = false }
                break
            }
        }
        voice.pointee.filter = filter
        voice.pointee.amp = amp
        voice.pointee.filterEnvelope = filterEnvelope
        voice.pointee.gain.left = gainLeft
        voice.pointee.gain.right = gainRight
        voice.pointee.fadeGain = fadeGain
        voice.pointee.active = active
    }

    // MARK: Host time and the arpeggiator

    /// Reads beat, tempo and play state for this slice from the host callbacks (if installed).
    @_noAllocation @_noLocks
    func queryHost() {
        hostSlice.pointee.valid = false
        guard let now = host?.currentBeat() else { return }
        hostSlice.pointee = HostSlice(
            valid: true, playing: now.playing, beat: now.beat, beatsPerFrame: now.tempo / 60 / sampleRate)
    }

    /// The frame at which beat `target` is reached in this slice (frames count from the slice start).
    @inline(__always) @_noAllocation @_noLocks
    func frameOffset(ofBeat target: Double) -> Int {
        let host = hostSlice.pointee
        let exact = (target - host.beat) / host.beatsPerFrame
        let whole = Double(Int64(exact))
        // First frame at or after the boundary, robust to rounding in the beat arithmetic.
        return Int(whole) + (exact - whole > 1e-6 ? 1 : 0)
    }

    /// The frame (from the slice start) at which arpeggiator step `k` begins: the first frame at or after
    /// its beat. Every step decision goes through this one function, so "which step starts here" and "where
    /// does the next step start" can never disagree, whether boundaries fall on or between frames.
    @inline(__always) @_noAllocation @_noLocks
    func boundaryFrame(_ k: Int64) -> Int { frameOffset(ofBeat: Double(k) * controls.pointee.arpBeats) }

    /// The step in progress at `frame` (by the beat), as a starting point for the boundary search.
    @inline(__always) @_noAllocation @_noLocks
    func approximateStep(at frame: Int) -> Int64 {
        let host = hostSlice.pointee
        return Int64(max(0, (host.beat + Double(frame) * host.beatsPerFrame) / controls.pointee.arpBeats))
    }

    @_noAllocation @_noLocks
    func nextArpeggiatorFrame(after frame: Int, frameCount: Int) -> Int {
        let host = hostSlice.pointee
        guard controls.pointee.arpMode != 0, host.valid, host.playing else { return frameCount }
        var next = frameCount
        if arp.pointee.sounding >= 0 {
            let off = Int(arp.pointee.offAt - time.pointee)
            if off > frame && off < next { next = off }
        }
        if arp.pointee.count > 0 {
            let k0 = approximateStep(at: frame)
            for k in k0...(k0 + 2) {
                let boundary = boundaryFrame(k)
                if boundary > frame {
                    if boundary < next { next = boundary }
                    break
                }
            }
        }
        return next
    }

    /// At `frame`: closes the gate of the sounding arpeggio note when due, and plays the next step when a
    /// step boundary falls exactly here.
    @_noAllocation @_noLocks
    func runArpeggiator(at frame: Int) {
        let host = hostSlice.pointee
        guard controls.pointee.arpMode != 0, host.valid, host.playing else { return }
        let now = time.pointee + Int64(frame)
        if arp.pointee.sounding >= 0 && now >= arp.pointee.offAt {
            noteOff(UInt8(arp.pointee.sounding), channel: arp.pointee.channel)
            arp.pointee.sounding = -1
        }
        guard arp.pointee.count > 0 else { return }
        let k0 = approximateStep(at: frame)
        var step: Int64 = -1
        for k in max(0, k0 - 1)...(k0 + 1) where boundaryFrame(k) == frame { step = k }
        guard step >= 0 else { return }
        if arp.pointee.sounding >= 0 {
            noteOff(UInt8(arp.pointee.sounding), channel: arp.pointee.channel)
            arp.pointee.sounding = -1
        }
        let note = arpeggioNote(step: step)
        guard note >= 0 && note <= 127 else { return }
        noteOn(UInt8(note), velocity: arp.pointee.velocity, channel: arp.pointee.channel)
        arp.pointee.sounding = note
        let stepFrames = controls.pointee.arpBeats / host.beatsPerFrame
        arp.pointee.offAt = now + max(1, Int64(stepFrames * controls.pointee.arpGate))
    }

    /// The note of step `step` of the current pattern.
    @_noAllocation @_noLocks
    func arpeggioNote(step: Int64) -> Int {
        let count = arp.pointee.count
        let octaves = controls.pointee.arpOctaves
        let length = count * octaves
        // Sorted copy into the scratch tail (no allocation): insertion sort of at most 64 notes.
        let sorted = arpNotes + 32
        for index in 0..<count {
            var position = index
            let value = arpNotes[index]
            while position > 0 && sorted[position - 1] > value {
                sorted[position] = sorted[position - 1]
                position -= 1
            }
            sorted[position] = value
        }
        var index: Int
        switch controls.pointee.arpMode {
        case 1: index = Int(step % Int64(length))
        case 2: index = length - 1 - Int(step % Int64(length))
        case 3:
            let period = max(1, 2 * length - 2)
            let position = Int(step % Int64(period))
            index = position < length ? position : period - position
        case 4:
            index = Int(UInt32(bitPattern: Int32(arp.pointee.random.next() * 1_000_000)) % UInt32(length))
        default:
            let position = Int(step % Int64(length))
            return Int(arpNotes[position % count]) + 12 * (position / count)
        }
        return Int(sorted[index % count]) + 12 * (index / count)
    }

    @_noAllocation @_noLocks
    func arpeggiatorKeyDown(_ note: UInt8, velocity: UInt8, channel: Int) {
        // With latch, the first key after all were released starts a new chord.
        if controls.pointee.arpLatch && arp.pointee.keysDown == 0 { arp.pointee.count = 0 }
        arp.pointee.keysDown += 1
        arp.pointee.channel = channel
        arp.pointee.velocity = velocity
        for index in 0..<arp.pointee.count where arpNotes[index] == note { return }
        guard arp.pointee.count < 32 else { return }
        arpNotes[arp.pointee.count] = note
        arp.pointee.count += 1
    }

    @_noAllocation @_noLocks
    func arpeggiatorKeyUp(_ note: UInt8) {
        arp.pointee.keysDown = max(0, arp.pointee.keysDown - 1)
        guard !controls.pointee.arpLatch else { return }
        var write = 0
        for read in 0..<arp.pointee.count where arpNotes[read] != note {
            arpNotes[write] = arpNotes[read]
            write += 1
        }
        arp.pointee.count = write
    }

    // MARK: MIDI

    @_noAllocation @_noLocks
    func handle(_ event: MIDIEvent) {
        // A MIDI Tuning Standard key change: the key and semitone, then the fraction completes it.
        if event.status == MIDITuningMessage.keyStatus {
            pendingKeyTuning.pointee = UInt16(event.data1) << 8 | UInt16(event.data2)
            return
        }
        if event.status == MIDITuningMessage.fractionStatus {
            let pending = pendingKeyTuning.pointee
            if pending != 0xFFFF {
                let fraction = Double(UInt16(event.data1) << 7 | UInt16(event.data2)) / 16_384
                keyPitches[Int(pending >> 8) & 0x7F] = Double(pending & 0xFF) + fraction
                pendingKeyTuning.pointee = 0xFFFF
            }
            return
        }
        let channel = Int(event.status & 0x0F)
        if drumChannels & (1 << UInt16(channel)) != 0 {
            switch event.status & 0xF0 {
            case 0x90 where event.data2 > 0:
                drumNoteOn(event.data1, velocity: event.data2, channel: channel)
                return
            case 0x80, 0x90, 0xC0: return  // drums are one-shots; the kit is the only program
            default: break
            }
        }
        // The arpeggiator plays the unit's patch: it takes the keys of channels that play it.
        let arpeggiating =
            controls.pointee.arpMode != 0 && hostSlice.pointee.valid && channels[channel].program < 0
        switch event.status & 0xF0 {
        case 0x90 where event.data2 > 0 && arpeggiating:
            arpeggiatorKeyDown(event.data1, velocity: event.data2, channel: channel)
        case 0x80 where arpeggiating, 0x90 where arpeggiating: arpeggiatorKeyUp(event.data1)
        case 0x90 where event.data2 > 0: noteOn(event.data1, velocity: event.data2, channel: channel)
        case 0x80: noteOff(event.data1, velocity: event.data2, channel: channel)
        case 0x90: noteOff(event.data1, velocity: 64, channel: channel)
        case 0xB0: controlChange(event.data1, event.data2, channel: channel)
        case 0xC0: programChange(Int(event.data1), channel: owner(channel))
        case 0xE0:
            channels[channel].bend = Int(event.data1) | Int(event.data2) << 7 - 8192
        case 0xA0:
            for index in 0..<polyphony
            where voices[index].active && voices[index].note == event.data1 && Int(voices[index].channel) == channel {
                voices[index].pressure = event.data2
            }
        case 0xD0:
            channels[channel].pressure = event.data1
        default: break
        }
    }

    @_noAllocation @_noLocks
    func noteOn(_ note: UInt8, velocity: UInt8, channel: Int) {
        // A key the tuning leaves silent plays nothing.
        if keyPitches[Int(note & 0x7F)].isNaN { return }
        let mode = patch(channel).pointee.voiceMode
        if mode != 0 {
            monoNoteOn(note, velocity: velocity, channel: channel, legato: mode == 2)
            return
        }
        var chosen = -1
        // The same key struck again: re-strike it in place.
        for index in 0..<polyphony
        where voices[index].active && !voices[index].fading
            && voices[index].note == note && Int(voices[index].channel) == channel
        {
            chosen = index
            break
        }
        if chosen < 0 {
            // A free voice: never started, or its envelope has ended (it is freed at the next tick).
            for index in 0..<polyphony where !voices[index].active || isFinished(index) {
                chosen = index
                break
            }
        }
        if chosen < 0 { chosen = victim() }
        if voices[chosen].active && !isFinished(chosen) { fadeOut(chosen) }
        start(voices + chosen, note: note, velocity: velocity, channel: channel)
    }

    /// Whether a voice's envelope has ended while it waits for the next tick to be freed.
    @inline(__always) @_noAllocation @_noLocks
    func isFinished(_ index: Int) -> Bool {
        voices[index].active && !voices[index].fading && !voices[index].amp.isActive
    }

    /// The voice a mono or legato channel plays (at most one sounds per channel), or −1.
    @_noAllocation @_noLocks
    func monoVoice(_ channel: Int) -> Int {
        for index in 0..<polyphony
        where voices[index].active && !voices[index].fading && Int(voices[index].channel) == channel {
            return index
        }
        return -1
    }

    /// Under the host's overload limit, fades out voices beyond it (the stealing order: released first,
    /// then the oldest) and counts them. Fading voices no longer count: they are gone in 128 frames.
    @_noAllocation @_noLocks
    func shedToLimit() {
        let limit = budget.pointee.limit.load(ordering: .relaxed)
        guard limit < polyphony else { return }
        var held = 0
        for index in 0..<polyphony where voices[index].active { held += 1 }
        var shed = 0
        while held > limit {
            let index = victim(activeOnly: true)
            guard index >= 0 else { break }
            fadeOut(index)
            held -= 1
            shed += 1
        }
        if shed > 0 { budget.pointee.shed.add(shed, ordering: .relaxed) }
    }

    /// The voice to steal: released voices before held ones, then the oldest, then the quietest.
    @_noAllocation @_noLocks
    func victim(activeOnly: Bool = false) -> Int {
        var best = activeOnly ? -1 : 0
        for index in (activeOnly ? 0 : 1)..<polyphony {
            if activeOnly {
                guard voices[index].active && !voices[index].fading else { continue }
                if best < 0 {
                    best = index
                    continue
                }
            }
            let a = voices[index]
            let b = voices[best]
            if a.released != b.released {
                if a.released { best = index }
            } else if a.age != b.age {
                if a.age < b.age { best = index }
            } else if a.amp.level < b.amp.level {
                best = index
            }
        }
        return best
    }

    /// Moves a sounding voice into a fade slot, where it dies away over 128 frames instead of being cut.
    @_noAllocation @_noLocks
    func fadeOut(_ index: Int) {
        var slot = polyphony
        for candidate in polyphony..<(polyphony + Self.fadeSlots) where !voices[candidate].active {
            slot = candidate
            break
        }
        voices[slot] = voices[index]
        voices[slot].fading = true
        voices[slot].fadeGain = 1
        voices[slot].fadeStep = 1 / Self.fadeFrames
        voices[index].active = false
    }

    @_noAllocation @_noLocks
    func start(_ voice: UnsafeMutablePointer<SynthVoice>, note: UInt8, velocity: UInt8, channel: Int) {
        ageCounter.pointee += 1
        var v = SynthVoice()
        v.active = true
        v.note = note
        v.channel = UInt8(channel)
        v.velocity = velocity
        v.age = ageCounter.pointee
        v.pitch = keyPitches[Int(note & 0x7F)]
        // Start a quarter period in, where every waveform is non-zero (a band-limited saw is exactly 0 at
        // phase 0): the note is audible from its first frame.
        v.phase1 = 1 << 30
        v.phase2 = 1 << 30
        let sensitivity = patch(channel).pointee.velocitySensitivity
        let normalized = Float(velocity) / 127
        v.velocityGain = 1 - sensitivity + sensitivity * normalized * normalized
        v.noise = NoiseGenerator(seed: UInt32(truncatingIfNeeded: v.age &* 2_654_435_761) | 1)
        v.noise2 = NoiseGenerator(seed: UInt32(truncatingIfNeeded: v.age &* 2_246_822_519) | 1)
        var draw = NoiseGenerator(seed: UInt32(truncatingIfNeeded: v.age &* 3_266_489_917) | 1)
        v.random = (draw.next() + 1) / 2
        v.amp.start()
        v.filterEnvelope.start()
        v.modEnvelope.start()
        let c = patch(channel).pointee
        if c.isRich { v.rich.start(seed: UInt32(truncatingIfNeeded: v.age &* 2_166_136_261) | 1) }
        // Glide from the channel's last note: always, or (legato) only while another key is held.
        let last = channels[channel].lastPitch
        if c.glideTime > 0 && !last.isNaN && (c.glideMode == 2 || (c.glideMode == 1 && keyHeld(on: channel))) {
            v.glideOffset = last - v.pitch
        }
        channels[channel].lastPitch = v.pitch
        // The second LFO: from the start of its cycle when retriggered, else where free time puts it.
        if c.usesLFO2 && !c.lfo2Retrigger {
            // From the note's own frame, not the slice's: where a slice starts must not show.
            let cycles = Double(now.pointee) * c.lfo2Rate / sampleRate
            v.lfo2Phase = cycles - Double(Int64(cycles))
        }
        voice.pointee = v
        updateVoice(voice, interpolate: false)
    }

    /// Whether a key is held (a voice sounding, not released) on `channel`.
    @_noAllocation @_noLocks
    func keyHeld(on channel: Int) -> Bool {
        for index in 0..<polyphony
        where voices[index].active && !voices[index].fading && !voices[index].released
            && Int(voices[index].channel) == channel
        {
            return true
        }
        return false
    }

    @_noAllocation @_noLocks
    func monoNoteOn(_ note: UInt8, velocity: UInt8, channel: Int, legato: Bool) {
        removeFromStack(note, channel: channel)
        let stack = noteStack + 128 * channel
        if noteStackCount[channel] < 128 {
            stack[noteStackCount[channel]] = note
            noteStackCount[channel] += 1
        }
        var index = monoVoice(channel)
        if index < 0 {
            // The channel's first note: a free voice, or the one the pool can best spare.
            for candidate in 0..<polyphony where !voices[candidate].active || isFinished(candidate) {
                index = candidate
                break
            }
            if index < 0 { index = victim() }
        }
        let voice = voices + index
        if voice.pointee.active && !voice.pointee.fading && !voice.pointee.released
            && Int(voice.pointee.channel) == channel
        {
            let glide = patch(channel).pointee
            let previous = voice.pointee.pitch
            voice.pointee.note = note
            voice.pointee.pitch = keyPitches[Int(note & 0x7F)]
            // Keys overlap here: a glide in legato or always mode slides from where the voice was.
            if glide.glideTime > 0 && glide.glideMode != 0 {
                voice.pointee.glideOffset += previous - voice.pointee.pitch
            }
            channels[channel].lastPitch = voice.pointee.pitch
            if !legato {
                // Mono: restart the envelopes from where they are (no click), keep the oscillators running.
                voice.pointee.amp.start()
                voice.pointee.filterEnvelope.start()
                let sensitivity = patch(channel).pointee.velocitySensitivity
                let normalized = Float(velocity) / 127
                voice.pointee.velocityGain = 1 - sensitivity + sensitivity * normalized * normalized
            }
            updateVoice(voice, interpolate: true)
            return
        }
        if voice.pointee.active && !isFinished(index) { fadeOut(index) }
        start(voice, note: note, velocity: velocity, channel: channel)
    }

    @_noAllocation @_noLocks
    func removeFromStack(_ note: UInt8, channel: Int) {
        let stack = noteStack + 128 * channel
        var write = 0
        for read in 0..<noteStackCount[channel] where stack[read] != note {
            stack[write] = stack[read]
            write += 1
        }
        noteStackCount[channel] = write
    }

    @_noAllocation @_noLocks
    func noteOff(_ note: UInt8, velocity: UInt8 = 64, channel: Int) {
        // In an MPE zone the manager's pedal holds every note of the zone.
        let pedal = channels[channel].sustain || channels[owner(channel)].sustain
        if patch(channel).pointee.voiceMode != 0 {
            removeFromStack(note, channel: channel)
            let index = monoVoice(channel)
            guard index >= 0, voices[index].note == note else { return }
            let voice = voices + index
            if noteStackCount[channel] > 0 {
                // Fall back to the most recent key still held, legato.
                let previous = noteStack[128 * channel + noteStackCount[channel] - 1]
                voice.pointee.note = previous
                voice.pointee.pitch =
                    keyPitches[Int(previous & 0x7F)].isNaN ? voice.pointee.pitch : keyPitches[Int(previous & 0x7F)]
                updateVoice(voice, interpolate: true)
            } else if pedal {
                voice.pointee.sustained = true
            } else {
                voice.pointee.releaseVelocity = velocity
                voice.pointee.released = true
                voice.pointee.amp.release()
                voice.pointee.filterEnvelope.release()
                voice.pointee.modEnvelope.release()
            }
            return
        }
        for index in 0..<polyphony
        where voices[index].active && !voices[index].fading && !voices[index].released
            && voices[index].note == note && Int(voices[index].channel) == channel
        {
            voices[index].releaseVelocity = velocity
            if pedal {
                voices[index].sustained = true
            } else {
                releaseVoice(index)
            }
        }
    }

    @_noAllocation @_noLocks
    func releaseVoice(_ index: Int) {
        voices[index].released = true
        voices[index].sustained = false
        voices[index].amp.release()
        voices[index].filterEnvelope.release()
        voices[index].modEnvelope.release()
    }

    /// Whether a channel message on `channel` reaches a voice on `voiceChannel`: its own channel's, or its
    /// MPE zone manager's (which speaks for the whole zone).
    @inline(__always) @_noAllocation @_noLocks
    func reaches(_ voiceChannel: UInt8, from channel: Int) -> Bool {
        Int(voiceChannel) == channel || Int(zoneOf[Int(voiceChannel)]) == channel
    }

    @_noAllocation @_noLocks
    func controlChange(_ controller: UInt8, _ value: UInt8, channel: Int) {
        sends?.controlChange(controller, value, channel: channel)
        controllerValues[128 * channel + Int(controller & 0x7F)] = value
        if let change = channels[channel].numbers.handle(controller: controller, value: value) {
            if change.isRegistered && change.parameter == 0 {
                // RPN 0, pitch-bend sensitivity: MSB semitones, LSB cents. On an MPE member channel it sets
                // every member of the zone, as the MPE specification has it.
                let range = Double(change.value >> 7) + Double(change.value & 0x7F) / 100
                if isMember(channel) {
                    let manager = Int(zoneOf[channel])
                    for member in 0..<16 where isMember(member) && Int(zoneOf[member]) == manager {
                        channels[member].bendRange = range
                    }
                } else {
                    channels[channel].bendRange = range
                }
            } else if change.isRegistered && change.parameter == 6 && (channel == 0 || channel == 15) {
                // RPN 6 on channel 1 or 16: the MPE Configuration Message, MSB the zone's member channels.
                configureZone(lower: channel == 0, members: Int(change.value >> 7))
            }
            return
        }
        switch controller {
        case 1: channels[channel].modulation = value
        case 7: channels[channel].volume = value
        case 10: channels[channel].pan = value
        case 11: channels[channel].expression = value
        case 64:
            let down = value >= 64
            channels[channel].sustain = down
            if !down {
                for index in 0..<(polyphony)
                where voices[index].active && voices[index].sustained && reaches(voices[index].channel, from: channel)
                    && !channels[Int(voices[index].channel)].sustain && !channels[owner(channel)].sustain
                {
                    releaseVoice(index)
                }
            }
        case 120:  // all sound off: fade everything on the channel now
            for index in 0..<Self.drumVoiceCount
            where drumVoices[index].active && Int(drumVoices[index].channel) == channel {
                drumVoices[index].fadeStep = 1 / Self.fadeFrames
            }
            for index in 0..<(polyphony + Self.fadeSlots)
            where voices[index].active && reaches(voices[index].channel, from: channel) {
                if !voices[index].fading {
                    voices[index].fading = true
                    voices[index].fadeGain = 1
                    voices[index].fadeStep = 1 / Self.fadeFrames
                }
            }
            noteStackCount[channel] = 0
        case 121:  // reset all controllers
            channels[channel].resetControllers()
            for index in 0..<polyphony
            where voices[index].active && voices[index].sustained && reaches(voices[index].channel, from: channel) {
                releaseVoice(index)
            }
        case 123, 124, 125, 126, 127:  // all notes off (and the mode messages that imply it)
            for index in 0..<polyphony
            where voices[index].active && !voices[index].fading && reaches(voices[index].channel, from: channel) {
                releaseVoice(index)
            }
            noteStackCount[channel] = 0
        case 0:
            channels[channel].bank = value
        default:
            break
        }
    }

    // MARK: MPE

    /// Sets the lower (manager channel 1) or upper (manager channel 16) MPE zone to `members` member
    /// channels (0: off). The other zone shrinks if they would overlap; the zone's members bend ±48
    /// semitones and its manager ±2 from now on (the specification's defaults).
    @_noAllocation @_noLocks
    func configureZone(lower: Bool, members: Int) {
        let count = max(0, min(15, members))
        let (this, other) = lower ? (0, 1) : (1, 0)
        mpeMembers[this] = count
        if mpeMembers[other] > 14 - count { mpeMembers[other] = max(0, 14 - count) }
        for channel in 0..<16 { zoneOf[channel] = -1 }
        if mpeMembers[0] > 0 {
            for channel in 0...mpeMembers[0] { zoneOf[channel] = 0 }
        }
        if mpeMembers[1] > 0 {
            for channel in (15 - mpeMembers[1])...15 { zoneOf[channel] = 15 }
        }
        guard count > 0 else { return }
        let manager = lower ? 0 : 15
        for channel in 0..<16 where Int(zoneOf[channel]) == manager {
            channels[channel].bendRange = channel == manager ? 2 : 48
        }
    }

    // MARK: Drums

    /// A hit on a drum channel: the key's drum, tuned and decayed by its parameters, in a free hit slot or
    /// the oldest one's. A hit in a choke group cuts the others of its group on the channel short.
    @_noAllocation @_noLocks
    func drumNoteOn(_ note: UInt8, velocity: UInt8, channel: Int) {
        let drum = Int(drumOfKey[Int(note & 0x7F)])
        guard drum >= 0 else { return }
        let model = drumModels[drum]
        let slot = Self.parameterCount + 3 * drum
        let normalized = Float(velocity) / 127
        let decibels = Double(parameters.value(slot + 2))
        let level = 0.2 + 0.8 * normalized * normalized
        var chosen = 0
        for index in 0..<Self.drumVoiceCount {
            let voice = drumVoices[index]
            if model.chokeGroup != 0 && voice.active && voice.chokeGroup == model.chokeGroup
                && Int(voice.channel) == channel
            {
                drumVoices[index].fadeStep = 1 / Self.fadeFrames
            }
            if !voice.active {
                if drumVoices[chosen].active { chosen = index }
            } else if drumVoices[chosen].active && voice.age < drumVoices[chosen].age {
                chosen = index
            }
        }
        ageCounter.pointee += 1
        var hit = DrumVoice(
            model: model, semitones: drumOffsetOfKey[Int(note & 0x7F)] + parameters.value(slot),
            decayScale: parameters.value(slot + 1) * drumDecayOfKey[Int(note & 0x7F)],
            level: level * Float(FastMath.exp2(decibels / 6.020_599_913_279_624)), sampleRate: sampleRate,
            seed: UInt32(truncatingIfNeeded: ageCounter.pointee &* 2_654_435_761) | 1)
        hit.note = note
        hit.channel = UInt8(channel)
        hit.age = ageCounter.pointee
        drumVoices[chosen] = hit
        updateDrumGains(drumVoices + chosen, interpolate: false)
    }

    /// A drum hit's output gains from its channel's volume, expression and pan and the drum's own place in
    /// the stereo picture; like a synth voice's, they glide over a control tick.
    @_noAllocation @_noLocks
    func updateDrumGains(_ voice: UnsafeMutablePointer<DrumVoice>, interpolate: Bool) {
        let channel = channels[Int(voice.pointee.channel)]
        let volume = Float(channel.volume) / 127
        let expression = Float(channel.expression) / 127
        voice.pointee.gain.aim(
            gain: 0.5 * volume * volume * expression * expression,
            position: GlidingGain.position(pan: channel.pan) + Double(voice.pointee.pan) / 2,
            frames: Self.controlInterval, interpolate: interpolate)
    }

    /// Program change, here on the render thread: the preset at the channel's bank and `program` (bank 0's
    /// when that bank has none). On the base channel it loads the unit's parameters; on any other channel it
    /// becomes that channel's own patch. A program no preset answers leaves the channel as it was.
    @_noAllocation @_noLocks
    func programChange(_ program: Int, channel: Int) {
        var row = presetRows[Int(channels[channel].bank) * 128 + program]
        if row < 0 { row = presetRows[program] }
        guard row >= 0 else { return }
        let values = presetValues + Int(row) * Self.parameterCount
        if channel == baseChannel {
            for slot in 0..<Self.parameterCount { parameters.setFromRender(slot, values[slot]) }
            readControls()
            channels[channel].program = -1
        } else {
            readControls(from: values, into: channelControls + channel)
            channels[channel].program = Int16(program)
        }
    }
}

/// One key's pitch (MIDI note units; NaN: silent), on its way from the control thread to the synth's
/// render side.
public struct KeyTuning: BitwiseCopyable, Sendable {
    public var key: UInt8
    public var pitch: Double
    public init(key: UInt8, pitch: Double) { (self.key, self.pitch) = (key, pitch) }
}

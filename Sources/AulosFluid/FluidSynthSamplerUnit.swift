import AulosCore
import AulosMIDI
import AulosRealtime
import CFluidSynth
import Foundation
import Synchronization

/// A SoundFont sampler (`aumu/fsmp/Auls`) built on libfluidsynth: all 16 MIDI channels, bank select and
/// program change, reverb and chorus, polyphony as a property and gain as a parameter.
///
/// How it stays real-time safe: the unit owns a `fluid_synth_t` created with `synth.threadsafe-api = 0`
/// (no FluidSynth mutex) and is the only caller, from its kernel on the render thread; FluidSynth's own
/// audio and MIDI drivers are never used. Loading a SoundFont builds a whole new synth on the control thread
/// and swaps it in through a hazard-pointer exchange; the old one is deleted here once the render thread has
/// let go. FluidSynth's logging is switched off because it would print from the render thread; load errors
/// are reported by the unit instead.
///
/// Effects: FluidSynth's built-in reverb and chorus are off by default. Debian's libfluidsynth is built
/// with OpenMP and runs the effects in an OpenMP parallel region, which allocates (and synchronises) on
/// every render call even with one core configured; switching them on is allowed, but the render path is
/// then no longer allocation-free.
///
/// Effect sends: with a second output (`enableEffectSendOutput`), FluidSynth renders its 16 MIDI channels to
/// 16 stereo buffers (`synth.audio-groups` = 16) and `ChannelEffectSends` mixes them, sending each channel
/// to Aulos's own reverb and chorus by its CC 91 and CC 93 (GM defaults 40 and 0). What differs from
/// FluidSynth's own rendering: FluidSynth sends each *voice* by the SoundFont's reverb/chorus-send
/// generators (and its default CC 91/93 modulators, at most 20 %); here the send is per channel, by the
/// controllers alone, so a font's per-instrument send amounts are not heard — and FluidSynth's own
/// controller state starts CC 91 at 0, where General MIDI (and this unit's sends) start at 40.
///
/// Timing: FluidSynth reacts to events only at its internal 64-frame blocks (a library limit). The kernel
/// renders in chunks ending on those block boundaries and applies each block's events just before it, so
/// an event lands within 63 frames of its offset whatever the slice size, and a note whose on and off fall
/// in one slice still sounds (FluidSynth's 10 ms minimum note length).
///
/// Threads: control side as for every unit; `FluidSamplerKernel` runs on the render thread.
public final class FluidSynthSamplerUnit: AudioUnit, MusicDevice, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(
        type: .musicDevice, subtype: "fsmp", manufacturer: .aulos)

    /// The SoundFont file (String). Settable at any time: while initialized the font loads on the calling
    /// thread and replaces the old one without touching the render thread.
    public static let soundFontProperty = PropertyID(rawValue: 64201)
    /// Maximum voices (UInt32, 16…4096, default 512), settable while uninitialized.
    public static let polyphonyProperty = PropertyID(rawValue: 64202)
    /// Voices sounding now (UInt32, read-only).
    public static let activeVoicesProperty = PropertyID(rawValue: 64203)

    public enum Parameter: UInt32, CaseIterable, Sendable {
        case gain, reverbEnabled, reverbLevel, chorusEnabled, chorusLevel

        public var id: ParameterID { ParameterID(rawValue) }

        public var info: ParameterInfo {
            switch self {
            case .gain: .init(id: id, name: "Gain", unit: .linearGain, range: 0...5, defaultValue: 0.2)
            // FluidSynth's reverb and chorus are off by default: Debian's libfluidsynth runs them through
            // OpenMP, whose parallel region allocates on every render call — not real-time safe.
            case .reverbEnabled: .init(id: id, name: "Reverb", unit: .boolean, range: 0...1, defaultValue: 0)
            case .reverbLevel: .init(id: id, name: "Reverb Level", unit: .generic, range: 0...1, defaultValue: 0.7)
            case .chorusEnabled: .init(id: id, name: "Chorus", unit: .boolean, range: 0...1, defaultValue: 0)
            case .chorusLevel: .init(id: id, name: "Chorus Level", unit: .generic, range: 0...10, defaultValue: 2)
            }
        }
    }

    public let midiInput = MIDIEventQueue(capacity: 4096)
    public private(set) var soundFontPath: String?
    /// What `SoundFontFile` found wrong with the font that still lets it load (some samples broken, the
    /// file truncated): lines for the user.
    public private(set) var soundFontWarnings: [String] = []
    /// Notes started and slices that made sound, counted on the render thread: a font that sounds for no
    /// note at all is reported rather than rendered as silence without a word.
    let activity = UnsafeMutablePointer<SamplerActivity>.allocate(capacity: 1)

    /// Note-ons sent to FluidSynth, and slices with any sound in them, since initialize.
    public var playedNotes: Int { activity.pointee.notes.load(ordering: .relaxed) }
    public var audibleSlices: Int { activity.pointee.audibleSlices.load(ordering: .relaxed) }
    public private(set) var polyphony: UInt32 = 512
    private let exchange = HazardExchange()
    private var current: FluidInstance?
    private var retired: [FluidInstance] = []

    public init(soundFont: String? = nil) {
        soundFontPath = soundFont
        activity.initialize(to: SamplerActivity())
        FluidInstance.silenceLogging
        super.init(
            description: Self.componentDescription, name: "Aulos: FluidSynth Sampler", inputs: 0, outputs: 1,
            parameters: Parameter.allCases.map(\.info))
    }

    deinit {
        _ = exchange.publish(nil)
        exchange.deallocate()
        activity.deinitialize(count: 1)
        activity.deallocate()
    }

    public let voiceBudget = VoiceBudget()

    public var activeVoiceCount: Int { voiceBudget.active }

    // MARK: State

    public override var stateProperties: [String: String] {
        var properties = super.stateProperties.merging(["polyphony": String(polyphony)]) { $1 }
        if let soundFontPath { properties["soundFont"] = soundFontPath }
        return properties
    }

    public override func restoreStateProperties(_ properties: [String: String]) throws(AudioUnitError) {
        try super.restoreStateProperties(properties)
        if let text = properties["polyphony"], let voices = UInt32(text), voices != polyphony {
            try setProperty(Self.polyphonyProperty, scope: .global, element: 0, value: voices)
        }
        if let path = properties["soundFont"], path != soundFontPath { try loadSoundFont(path) }
    }

    // MARK: Properties

    public override func customPropertyInfo(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> PropertyInfo?
    {
        switch id {
        case Self.soundFontProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 0, isWritable: true, isWritableWhileInitialized: true)
        case Self.polyphonyProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: true)
        case Self.activeVoicesProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: false)
        default:
            return nil
        }
    }

    public override func customGetProperty(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> Any?
    {
        switch id {
        case Self.soundFontProperty:
            guard let soundFontPath else { throw AudioUnitError(.propertyNotInUse, "\(name) has no SoundFont") }
            return soundFontPath
        case Self.polyphonyProperty: return polyphony
        case Self.activeVoicesProperty: return UInt32(activeVoiceCount)
        default: return nil
        }
    }

    public override func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any)
        throws(AudioUnitError) -> Bool
    {
        switch id {
        case Self.soundFontProperty:
            guard let path = value as? String else {
                throw AudioUnitError(.invalidPropertyValue, "the SoundFont property takes a path")
            }
            let inspected = try SoundFontFile.inspect(path)
            if isInitialized {
                try swapIn(
                    FluidInstance(
                        soundFont: path, sampleRate: outputFormat(0).sampleRate, polyphony: polyphony,
                        channelGroups: channelGroups, tuning: tuning, locksMemory: locksSampleMemory))
            }
            soundFontPath = path
            soundFontWarnings = inspected.warnings
            return true
        case Self.polyphonyProperty:
            guard let voices = value as? UInt32, (16...4096).contains(voices) else {
                throw AudioUnitError(.invalidPropertyValue, "sampler polyphony must be a UInt32 in 16…4096")
            }
            polyphony = voices
            return true
        default:
            return false
        }
    }

    /// Whether FluidSynth locks the font's samples in memory (`synth.lock-memory`, on by FluidSynth's
    /// default): for live play, where a page fault on the render thread is a dropout. An offline render turns
    /// it off — nothing there waits on a deadline, and locking a large font's whole sample pool costs start-up
    /// time (or, past the memlock limit, a failed attempt) for nothing. Read when a font loads: set it before
    /// initialize.
    public var locksSampleMemory = true

    /// The Scala tuning every channel but the drums' plays (nil: equal temperament).
    public private(set) var tuning: TuningTable?

    /// Retunes the sampler: while it plays, a new FluidSynth instance with the tuning takes over (the font
    /// loaded again, as when a SoundFont changes). Control thread.
    public func setTuning(_ table: TuningTable?) throws(AudioUnitError) {
        if isInitialized, let soundFontPath {
            try swapIn(
                FluidInstance(
                    soundFont: soundFontPath, sampleRate: outputFormat(0).sampleRate, polyphony: polyphony,
                    channelGroups: channelGroups, tuning: table, locksMemory: locksSampleMemory))
        }
        tuning = table
    }

    /// Loads a SoundFont (see `soundFontProperty`).
    public func loadSoundFont(_ path: String) throws(AudioUnitError) {
        try set(PropertyKey<String>(Self.soundFontProperty), path)
    }

    // MARK: Kernel

    /// Output 1, when the host asks for two outputs, is the effect-send output (`enableEffectSendOutput`).
    public override func canChangeElementCount(_ scope: Scope) -> Bool { scope == .output }

    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        try super.validateFormat(format, scope: scope, element: element)
        if scope == .output { try checkInstrumentOutput(format, element: element) }
    }

    /// FluidSynth's audio groups: one per MIDI channel when the sends need the channels apart.
    private var channelGroups: Int32 { hasEffectSendOutput ? Int32(ChannelEffectSends.channelCount) : 1 }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let format = outputFormat(0)
        try checkInstrumentOutput(format, element: 0)
        if hasEffectSendOutput { try checkInstrumentOutput(outputFormat(1), element: 1) }
        guard outputBusCount <= 2 else {
            throw AudioUnitError(
                .invalidPropertyValue, "\(name) has at most two outputs (the mix and its effect sends)")
        }
        guard let soundFontPath else {
            throw AudioUnitError(.failedInitialization, "\(name) needs a SoundFont: set its SoundFont property first")
        }
        try swapIn(
            FluidInstance(
                soundFont: soundFontPath, sampleRate: format.sampleRate, polyphony: polyphony,
                channelGroups: channelGroups, tuning: tuning, locksMemory: locksSampleMemory))
        activity.pointee.notes.store(0, ordering: .relaxed)
        activity.pointee.audibleSlices.store(0, ordering: .relaxed)
        let frames = Int(maximumFramesPerSlice)
        let sends = hasEffectSendOutput ? ChannelEffectSends(maximumFrames: frames) : nil
        let mixed = UnsafeMutablePointer<Float>.allocate(capacity: sends == nil ? 1 : 6 * frames)
        mixed.initialize(repeating: 0, count: sends == nil ? 1 : 6 * frames)
        let cycle = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        cycle.initialize(to: .max)
        let silent = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        silent.initialize(to: true)
        let memory = UnsafeMutablePointer<SamplerChannelMemory>.allocate(capacity: 16)
        memory.initialize(repeating: SamplerChannelMemory(), count: 16)
        let kernel = FluidSamplerKernel(
            exchange: exchange, events: midiInput.list, parameters: renderParameters,
            budget: voiceBudget.counters, activity: activity, sends: sends, mixed: mixed, mixFrames: frames,
            computedCycle: cycle, computedSilent: silent, channels: memory)
        return UnitKernel.make(kernel, render: FluidSamplerKernel.render) { kernel in
            kernel.channels.deallocate()
            kernel.sends?.deallocate()
            kernel.mixed.deallocate()
            kernel.computedCycle.deallocate()
            kernel.computedSilent.deallocate()
        }
    }

    public override func willUninitialize() throws(AudioUnitError) {
        let old = exchange.publish(nil)
        if let old { _ = exchange.waitUntilUnused(old, timeout: .seconds(5)) }
        current = nil
        retired.removeAll()
    }

    /// Publishes a new FluidSynth instance; frees the previous one once the render thread has let go.
    private func swapIn(_ instance: FluidInstance) throws(AudioUnitError) {
        soundFontWarnings = instance.inspection.warnings
        let old = exchange.publish(UnsafeMutableRawPointer(instance.state))
        if let previous = current { retired.append(previous) }
        current = instance
        if let old { _ = exchange.waitUntilUnused(old, timeout: .seconds(1)) }
        retired.removeAll { !exchange.isInUse(UnsafeMutableRawPointer($0.state)) }
    }
}

/// Render-side state of one FluidSynth instance.
struct FluidRenderState {
    var synth: OpaquePointer
    /// Frames rendered by this instance: its internal 64-frame blocks start at multiples of 64.
    var framesRendered: Int64
    var gain: Float
    var reverbEnabled: Float
    var reverbLevel: Float
    var chorusEnabled: Float
    var chorusLevel: Float
    /// The output buffer pointers (two per audio group, up to 16 groups) and the four effect ones (reverb
    /// left/right, chorus left/right) `fluid_synth_process` takes, aimed into the slice's channels before
    /// each call; FluidSynth's own effects (when switched on) mix into the same channels — MIDI channel 1's,
    /// with the effect-send output.
    var out: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    var effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    /// The polyphony the synth was created with, and room for that many voice pointers (overload shedding
    /// lists the playing voices here without allocating).
    var polyphony: Int32
    /// Audio groups: 1, or 16 (a stereo pair per MIDI channel).
    var groups: Int32
    var voiceList: UnsafeMutablePointer<OpaquePointer?>
    /// The last slice had no voice and came out exactly silent: with no events due, the next whole blocks
    /// can be skipped (FluidSynth would compute exact zeros), which is what makes an idle rig nearly free.
    var resting = false
    /// A new instance (a SoundFont or tuning change while playing): the channels' state is played into it
    /// before its first block.
    var fresh = true
}

/// One `fluid_settings_t` + `fluid_synth_t` with a SoundFont loaded. Control side creates and deletes it.
final class FluidInstance {
    let settings: OpaquePointer
    let synth: OpaquePointer
    let state: UnsafeMutablePointer<FluidRenderState>
    /// What `SoundFontFile` found in the font.
    let inspection: SoundFontFile

    /// FluidSynth logs from whichever thread hits a problem, including the render thread: switch it off once.
    /// GLib's messages (libinstpatch's CRITICAL lines on a corrupt font) are counted instead of printed: a
    /// font that fails to load is reported as one line of Aulos's own.
    static let silenceLogging: Void = {
        for level in [FLUID_PANIC, FLUID_ERR, FLUID_WARN, FLUID_INFO, FLUID_DBG] {
            _ = fluid_set_log_function(Int32(level.rawValue), nil, nil)
        }
        _ = g_log_set_default_handler({ _, _, _, _ in FluidInstance.glibMessages.add(1, ordering: .relaxed) }, nil)
    }()

    /// GLib messages swallowed (for tests: a corrupt font did produce them).
    static let glibMessages = Atomic<Int>(0)

    /// The font is inspected first (`SoundFontFile`): clear errors for the common ways it is wrong.
    init(
        soundFont path: String, sampleRate: Double, polyphony: UInt32, channelGroups: Int32 = 1,
        tuning: TuningTable? = nil, locksMemory: Bool = true
    ) throws(AudioUnitError) {
        inspection = try SoundFontFile.inspect(path)
        guard let settings = new_fluid_settings() else {
            throw AudioUnitError(.failedInitialization, "FluidSynth could not create its settings")
        }
        fluid_settings_setnum(settings, "synth.sample-rate", sampleRate)
        fluid_settings_setint(settings, "synth.threadsafe-api", 0)
        fluid_settings_setint(settings, "synth.polyphony", Int32(polyphony))
        fluid_settings_setint(settings, "synth.cpu-cores", 1)
        fluid_settings_setint(settings, "synth.dynamic-sample-loading", 0)
        fluid_settings_setint(settings, "synth.verbose", 0)
        fluid_settings_setint(settings, "synth.lock-memory", locksMemory ? 1 : 0)
        fluid_settings_setint(settings, "synth.audio-groups", channelGroups)
        fluid_settings_setint(settings, "synth.audio-channels", channelGroups)
        guard let synth = new_fluid_synth(settings) else {
            delete_fluid_settings(settings)
            throw AudioUnitError(.failedInitialization, "FluidSynth could not create a synthesizer")
        }
        if fluid_synth_sfload(synth, path, 1) == FLUID_FAILED {
            delete_fluid_synth(synth)
            delete_fluid_settings(settings)
            throw AudioUnitError(
                .invalidFile, "SoundFont \(path): FluidSynth could not load it (corrupt or unsupported)")
        }
        if let tuning {
            // FluidSynth's key tuning, in cents per key, on every channel but the drums'. A key a Scala
            // mapping leaves silent keeps its equal-tempered pitch: FluidSynth cannot silence a key.
            var cents = tuning.pitches.enumerated().map { key, pitch in (pitch ?? Double(key)) * 100 }
            fluid_synth_activate_key_tuning(synth, 0, 0, "Aulos", &cents, 1)
            for channel: Int32 in 0..<16 where channel != 9 { fluid_synth_activate_tuning(synth, channel, 0, 0, 1) }
        }
        self.settings = settings
        self.synth = synth
        let voiceList = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: Int(polyphony) + 1)
        voiceList.initialize(repeating: nil, count: Int(polyphony) + 1)
        let out = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2 * Int(channelGroups))
        let effects = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 4)
        out.initialize(repeating: nil, count: 2 * Int(channelGroups))
        effects.initialize(repeating: nil, count: 4)
        state = .allocate(capacity: 1)
        state.initialize(
            to: FluidRenderState(
                synth: synth, framesRendered: 0, gain: -1, reverbEnabled: -1, reverbLevel: -1, chorusEnabled: -1,
                chorusLevel: -1,
                out: out, effects: effects, polyphony: Int32(polyphony), groups: channelGroups, voiceList: voiceList))
    }

    deinit {
        state.pointee.out.deallocate()
        state.pointee.effects.deallocate()
        state.pointee.voiceList.deallocate()
        state.deallocate()
        delete_fluid_synth(synth)
        delete_fluid_settings(settings)
    }
}

/// Render side of the sampler. Holds no class references: the instance arrives through the exchange.
///
/// Threads: render thread only.
/// What the render thread tells the unit about what it played.
struct SamplerActivity: ~Copyable {
    let notes = Atomic<Int>(0)
    let audibleSlices = Atomic<Int>(0)
}

struct FluidSamplerKernel {
    let exchange: HazardExchange
    let events: MIDIEventList
    let parameters: ParameterKernel
    let budget: UnsafeMutablePointer<VoiceBudget.Counters>
    let activity: UnsafeMutablePointer<SamplerActivity>
    /// With the effect-send output in use: the 16 channels apart and weighed by CC 91/93; the main mix and
    /// the four send channels made once per render cycle into `mixed` (6 × `mixFrames`).
    let sends: ChannelEffectSends?
    let mixed: UnsafeMutablePointer<Float>
    let mixFrames: Int
    let computedCycle: UnsafeMutablePointer<UInt64>
    /// Whether the cycle computed was silent.
    let computedSilent: UnsafeMutablePointer<Bool>
    /// What each channel was told (bank, program, controllers, bend and its range), for a new instance.
    let channels: UnsafeMutablePointer<SamplerChannelMemory>

    static let render: KernelRenderFunction = { state, inputs, flags, _, bus, frameCount, io in
        let kernel = state.assumingMemoryBound(to: FluidSamplerKernel.self)
        guard kernel.pointee.sends != nil else {
            return kernel.pointee.render(
                flags: flags, frameCount: Int(frameCount), left: io.pointee.floatChannel(0),
                right: io.pointee.floatChannel(1))
        }
        return kernel.pointee.renderWithSends(
            cycle: RenderInputs.cycle(inputs), flags: flags, bus: Int(bus), frameCount: Int(frameCount), io: io)
    }

    /// With the effect-send output: the slice once per cycle (the main mix and the sends into `mixed`), then
    /// output `bus`'s channels copied out — the mix on output 0, the four send channels on output 1.
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

    /// Renders one slice into `left`/`right`: FluidSynth straight there, or with the effect-send output
    /// each MIDI channel into its own buffer, then mixed into `left`/`right` and the send channels after
    /// them in `mixed`.
    @_noAllocation @_noLocks
    func render(
        flags: UnsafeMutablePointer<RenderActionFlags>, frameCount: Int, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>
    ) -> AulosStatus {
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
        sends?.beginSlice()
        events.beginSlice(frameCount: frameCount)
        parameters.beginSlice()
        parameters.applyEvents(dueAt: frameCount)
        guard let raw = exchange.acquire() else {
            exchange.release()
            while let _ = events.popDue(at: frameCount) {}  // no synth: drop this slice's events
            flags.pointee.insert(.outputIsSilence)
            return 0
        }
        let state = raw.assumingMemoryBound(to: FluidRenderState.self)
        if state.pointee.fresh {
            state.pointee.fresh = false
            for channel in 0..<16 { channels[channel].replay(into: state.pointee.synth, channel: Int32(channel)) }
        }
        applyParameters(state)
        applyVoiceLimit(state)
        // Idle: skip FluidSynth while it would only compute silence. Whole 64-frame blocks only, so its
        // block grid keeps its phase against the slice clock and output stays what it would have been
        // (FluidSynth's chorus LFO, if chorus is on, does not advance while skipped).
        if state.pointee.resting && !events.hasPendingEvents && frameCount & 63 == 0
            && state.pointee.framesRendered & 63 == 0
        {
            exchange.release()
            budget.pointee.active.store(0, ordering: .relaxed)
            events.endSlice(frameCount: frameCount)
            parameters.endSlice(frameCount: frameCount)
            mixSends(frameCount: frameCount, left: left, right: right)
            flags.pointee.insert(.outputIsSilence)
            return 0
        }
        sends?.beginAllChannels(frameCount: frameCount)
        var frame = 0
        while frame < frameCount {
            let intoBlock = Int(state.pointee.framesRendered & 63)
            let end = min(frameCount, frame + 64 - intoBlock)
            if intoBlock == 0 {
                // FluidSynth is about to compute a new block: hand it every event due before the block ends.
                while let event = events.popDue(at: end - 1) { send(event, to: state.pointee.synth) }
            }
            let groups = Int(state.pointee.groups)
            if let sends, groups == ChannelEffectSends.channelCount {
                for group in 0..<groups {
                    let channel = sends.buffers + 2 * group * sends.maximumFrames
                    state.pointee.out[2 * group] = channel + frame
                    state.pointee.out[2 * group + 1] = channel + sends.maximumFrames + frame
                }
            } else {
                // (A font loaded while the output count changed cannot happen: outputs are fixed while
                // initialized. One group goes to the mix.)
                state.pointee.out[0] = left + frame
                state.pointee.out[1] = right + frame
            }
            for index in 0..<2 {
                state.pointee.effects[2 * index] = state.pointee.out[0]
                state.pointee.effects[2 * index + 1] = state.pointee.out[1]
            }
            let synth = state.pointee.synth
            let out = state.pointee.out
            let effects = state.pointee.effects
            let length = Int32(end - frame)
            let outCount = Int32(2 * groups)
            _ = _unsafePerformance { fluid_synth_process(synth, length, 4, effects, outCount, out) }
            state.pointee.framesRendered += Int64(end - frame)
            frame = end
        }
        mixSends(frameCount: frameCount, left: left, right: right)
        let synth = state.pointee.synth
        let voices = _unsafePerformance { fluid_synth_get_active_voice_count(synth) }
        budget.pointee.active.store(Int(voices), ordering: .relaxed)
        // Silent only when it is: reverb and chorus ring on after the last voice ends.
        var silent = true
        for index in 0..<frameCount where left[index] != 0 || right[index] != 0 {
            silent = false
            break
        }
        state.pointee.resting = voices == 0 && silent
        if !silent { activity.pointee.audibleSlices.add(1, ordering: .relaxed) }
        exchange.release()
        events.endSlice(frameCount: frameCount)
        parameters.endSlice(frameCount: frameCount)
        if silent { flags.pointee.insert(.outputIsSilence) }
        return 0
    }

    /// With the effect-send output: the channels into the mix and the sends (after `mixed`'s first two).
    @_noAllocation @_noLocks
    func mixSends(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        guard let sends else { return }
        sends.mix(
            frameCount: frameCount, left: left, right: right, sends: mixed + 2 * mixFrames, sendStride: mixFrames)
    }

    /// Sheds voices under the host's overload limit: while more voices are held on than the limit, the
    /// oldest notes (lowest FluidSynth voice IDs) get a 15 ms release and are stopped, at most 32 voices a
    /// slice. (FluidSynth exports no way to end a voice outright, and lowering its polyphony neither ends
    /// playing voices nor can be raised again without allocating.) Voices held only by the sustain pedal
    /// are not shed: stopping them is a no-op until the pedal lifts.
    @_noAllocation @_noLocks
    func applyVoiceLimit(_ state: UnsafeMutablePointer<FluidRenderState>) {
        let limit = budget.pointee.limit.load(ordering: .relaxed)
        guard limit < Int(state.pointee.polyphony) else { return }
        let synth = state.pointee.synth
        let list = state.pointee.voiceList
        let capacity = state.pointee.polyphony
        _unsafePerformance { fluid_synth_get_voicelist(synth, list, capacity, -1) }
        var on = 0
        var count = 0
        while count < Int(capacity), let voice = list[count] {
            if _unsafePerformance({ fluid_voice_is_on(voice) }) != 0 { on += 1 }
            count += 1
        }
        var shed = 0
        while on > limit && shed < 32 {
            // The oldest note still held on.
            var oldest: UInt32 = .max
            for index in 0..<count {
                guard let voice = list[index], _unsafePerformance({ fluid_voice_is_on(voice) }) != 0 else { continue }
                oldest = min(oldest, UInt32(truncatingIfNeeded: _unsafePerformance { fluid_voice_get_id(voice) }))
            }
            guard oldest != .max else { break }
            var stopped = 0
            for index in 0..<count {
                guard let voice = list[index],
                    UInt32(truncatingIfNeeded: _unsafePerformance { fluid_voice_get_id(voice) }) == oldest,
                    _unsafePerformance({ fluid_voice_is_on(voice) }) != 0
                else { continue }
                _unsafePerformance {
                    fluid_voice_gen_set(voice, Int32(GEN_VOLENVRELEASE.rawValue), -7200)
                    fluid_voice_update_param(voice, Int32(GEN_VOLENVRELEASE.rawValue))
                }
                stopped += 1
            }
            _ = _unsafePerformance { fluid_synth_stop(synth, UInt32(oldest)) }
            // Voices the stop left sustained (the pedal is down) sound on: not shed.
            var sustained = 0
            for index in 0..<count {
                guard let voice = list[index],
                    UInt32(truncatingIfNeeded: _unsafePerformance { fluid_voice_get_id(voice) }) == oldest
                else { continue }
                if _unsafePerformance({ fluid_voice_is_sustained(voice) }) != 0 { sustained += 1 }
            }
            on -= stopped
            shed += stopped - sustained
        }
        if shed > 0 { budget.pointee.shed.add(shed, ordering: .relaxed) }
    }

    /// Pushes changed parameter values into FluidSynth (render thread: the only caller).
    @_noAllocation @_noLocks
    func applyParameters(_ state: UnsafeMutablePointer<FluidRenderState>) {
        let synth = state.pointee.synth
        let gain = parameters.value(0)
        if gain != state.pointee.gain {
            state.pointee.gain = gain
            _unsafePerformance { fluid_synth_set_gain(synth, gain) }
        }
        let reverbOn = parameters.value(1)
        if reverbOn != state.pointee.reverbEnabled {
            state.pointee.reverbEnabled = reverbOn
            _ = _unsafePerformance { fluid_synth_reverb_on(synth, -1, reverbOn >= 0.5 ? 1 : 0) }
        }
        let reverbLevel = parameters.value(2)
        if reverbLevel != state.pointee.reverbLevel {
            state.pointee.reverbLevel = reverbLevel
            _ = _unsafePerformance { fluid_synth_set_reverb_group_level(synth, -1, Double(reverbLevel)) }
        }
        let chorusOn = parameters.value(3)
        if chorusOn != state.pointee.chorusEnabled {
            state.pointee.chorusEnabled = chorusOn
            _ = _unsafePerformance { fluid_synth_chorus_on(synth, -1, chorusOn >= 0.5 ? 1 : 0) }
        }
        let chorusLevel = parameters.value(4)
        if chorusLevel != state.pointee.chorusLevel {
            state.pointee.chorusLevel = chorusLevel
            _ = _unsafePerformance { fluid_synth_set_chorus_group_level(synth, -1, Double(chorusLevel)) }
        }
    }

    @_noAllocation @_noLocks
    func send(_ event: MIDIEvent, to synth: OpaquePointer) {
        let channel = Int32(event.status & 0x0F)
        let data1 = Int32(event.data1)
        let data2 = Int32(event.data2)
        _ = _unsafePerformance { () -> Int32 in
            switch event.status & 0xF0 {
            case 0x90 where data2 > 0:
                activity.pointee.notes.add(1, ordering: .relaxed)
                return fluid_synth_noteon(synth, channel, data1, data2)
            case 0x80, 0x90: return fluid_synth_noteoff(synth, channel, data1)
            case 0xA0: return fluid_synth_key_pressure(synth, channel, data1, data2)
            case 0xB0:
                sends?.controlChange(event.data1, event.data2, channel: Int(channel))
                channels[Int(channel)].controlChange(event.data1, event.data2)
                return fluid_synth_cc(synth, channel, data1, data2)
            case 0xC0:
                channels[Int(channel)].program = Int16(data1)
                return fluid_synth_program_change(synth, channel, data1)
            case 0xD0: return fluid_synth_channel_pressure(synth, channel, data1)
            case 0xE0:
                channels[Int(channel)].bend = Int32(data1 | data2 << 7)
                return fluid_synth_pitch_bend(synth, channel, data1 | data2 << 7)
            default: return 0
            }
        }
    }
}

/// What one MIDI channel of the sampler was last told that outlives a note: bank, program, the lasting
/// controllers, pitch bend and its range. A new FluidSynth instance (a SoundFont or tuning change while
/// playing) starts from its defaults; this is played into it first, so the channel keeps its sound.
/// Plain value in the kernel's memory; render thread.
struct SamplerChannelMemory: BitwiseCopyable {
    /// The controllers kept, in the order they are played back (bank select first, before the program):
    /// bank, mod wheel, volume, pan, expression, sustain and the others of 64–68, the effect sends 91 and
    /// 93. (Lanes 13–15 are unused.)
    static var kept: SIMD16<Int16> { SIMD16(0, 32, 1, 7, 10, 11, 64, 65, 66, 67, 68, 91, 93, -1, -1, -1) }
    /// Their values, lane for lane with `kept`; −1 where never set.
    var controllers = SIMD16<Int16>(repeating: -1)
    var program: Int16 = -1
    var bend: Int32 = -1
    /// RPN 0 (bend range) as data entry MSB << 7 | LSB, −1 while never set.
    var bendRange: Int32 = -1
    var numbers = ParameterNumberTracker()

    @_noAllocation @_noLocks
    init() {}

    @_noAllocation @_noLocks
    mutating func controlChange(_ controller: UInt8, _ value: UInt8) {
        if let change = numbers.handle(controller: controller, value: value) {
            if change.isRegistered && change.parameter == 0 { bendRange = Int32(change.value) }
            return
        }
        if controller == 121 {
            // Reset All Controllers: what it resets, FluidSynth resets too; bank (lanes 0 and 1) and program stay.
            let bank = (controllers[0], controllers[1])
            controllers = SIMD16(repeating: -1)
            (controllers[0], controllers[1]) = bank
            bend = -1
            return
        }
        controllers.replace(with: Int16(value), where: Self.kept .== Int16(controller))
    }

    /// Plays the remembered state into `synth`'s `channel`: bank, program, controllers, bend range, bend.
    @_noAllocation @_noLocks
    func replay(into synth: OpaquePointer, channel: Int32) {
        let kept = Self.kept
        for lane in 0..<2 where controllers[lane] >= 0 {
            _ = _unsafePerformance { fluid_synth_cc(synth, channel, Int32(kept[lane]), Int32(controllers[lane])) }
        }
        if program >= 0 { _ = _unsafePerformance { fluid_synth_program_change(synth, channel, Int32(program)) } }
        for lane in 2..<13 where controllers[lane] >= 0 {
            _ = _unsafePerformance { fluid_synth_cc(synth, channel, Int32(kept[lane]), Int32(controllers[lane])) }
        }
        if bendRange >= 0 {
            // RPN 0 selected, its value entered, then the null RPN (so a stray data entry changes nothing).
            let range = bendRange
            _ = _unsafePerformance { () -> Int32 in
                fluid_synth_cc(synth, channel, 101, 0)
                fluid_synth_cc(synth, channel, 100, 0)
                fluid_synth_cc(synth, channel, 6, range >> 7)
                fluid_synth_cc(synth, channel, 38, range & 0x7F)
                fluid_synth_cc(synth, channel, 101, 127)
                return fluid_synth_cc(synth, channel, 100, 127)
            }
        }
        if bend >= 0 { _ = _unsafePerformance { fluid_synth_pitch_bend(synth, channel, bend) } }
    }
}

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
            case .gain: .init(id: id, name: "Gain", unit: .linearGain, range: 0...5, defaultValue: 0.6)
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
                try swapIn(FluidInstance(soundFont: path, sampleRate: outputFormat(0).sampleRate, polyphony: polyphony))
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

    /// Loads a SoundFont (see `soundFontProperty`).
    public func loadSoundFont(_ path: String) throws(AudioUnitError) {
        try set(PropertyKey<String>(Self.soundFontProperty), path)
    }

    // MARK: Kernel

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let format = outputFormat(0)
        guard format.channelsPerFrame == 2 else {
            throw AudioUnitError(
                .formatNotSupported, "\(name) renders stereo; its output has \(format.channelsPerFrame) channels")
        }
        guard let soundFontPath else {
            throw AudioUnitError(.failedInitialization, "\(name) needs a SoundFont: set its SoundFont property first")
        }
        try swapIn(FluidInstance(soundFont: soundFontPath, sampleRate: format.sampleRate, polyphony: polyphony))
        activity.pointee.notes.store(0, ordering: .relaxed)
        activity.pointee.audibleSlices.store(0, ordering: .relaxed)
        let kernel = FluidSamplerKernel(
            exchange: exchange, events: midiInput.list, parameters: renderParameters,
            budget: voiceBudget.counters, activity: activity)
        return UnitKernel.make(kernel, render: FluidSamplerKernel.render)
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
    /// The two output buffer pointers and the four effect ones (reverb left/right, chorus left/right)
    /// `fluid_synth_process` takes, aimed into the slice's channels before each call; the effects mix
    /// into the same channels.
    var out: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    var effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    /// The polyphony the synth was created with, and room for that many voice pointers (overload shedding
    /// lists the playing voices here without allocating).
    var polyphony: Int32
    var voiceList: UnsafeMutablePointer<OpaquePointer?>
    /// The last slice had no voice and came out exactly silent: with no events due, the next whole blocks
    /// can be skipped (FluidSynth would compute exact zeros), which is what makes an idle rig nearly free.
    var resting = false
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
    init(soundFont path: String, sampleRate: Double, polyphony: UInt32) throws(AudioUnitError) {
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
        self.settings = settings
        self.synth = synth
        let voiceList = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: Int(polyphony) + 1)
        voiceList.initialize(repeating: nil, count: Int(polyphony) + 1)
        let out = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2)
        let effects = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 4)
        out.initialize(repeating: nil, count: 2)
        effects.initialize(repeating: nil, count: 4)
        state = .allocate(capacity: 1)
        state.initialize(
            to: FluidRenderState(
                synth: synth, framesRendered: 0, gain: -1, reverbEnabled: -1, reverbLevel: -1, chorusEnabled: -1,
                chorusLevel: -1,
                out: out, effects: effects, polyphony: Int32(polyphony), voiceList: voiceList))
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

    static let render: KernelRenderFunction = { state, _, flags, _, _, frameCount, io in
        state.assumingMemoryBound(to: FluidSamplerKernel.self).pointee.render(
            flags: flags, frameCount: Int(frameCount), io: io)
    }

    @_noAllocation @_noLocks
    func render(
        flags: UnsafeMutablePointer<RenderActionFlags>, frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let left = io.pointee.floatChannel(0)
        let right = io.pointee.floatChannel(1)
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
        events.beginSlice()
        parameters.beginSlice()
        parameters.applyEvents(dueAt: frameCount)
        guard let raw = exchange.acquire() else {
            exchange.release()
            while let _ = events.popDue(at: frameCount) {}  // no synth: drop this slice's events
            flags.pointee.insert(.outputIsSilence)
            return 0
        }
        let state = raw.assumingMemoryBound(to: FluidRenderState.self)
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
            flags.pointee.insert(.outputIsSilence)
            return 0
        }
        var frame = 0
        while frame < frameCount {
            let intoBlock = Int(state.pointee.framesRendered & 63)
            let end = min(frameCount, frame + 64 - intoBlock)
            if intoBlock == 0 {
                // FluidSynth is about to compute a new block: hand it every event due before the block ends.
                while let event = events.popDue(at: end - 1) { send(event, to: state.pointee.synth) }
            }
            state.pointee.out[0] = left + frame
            state.pointee.out[1] = right + frame
            for index in 0..<2 {
                state.pointee.effects[2 * index] = left + frame
                state.pointee.effects[2 * index + 1] = right + frame
            }
            let synth = state.pointee.synth
            let out = state.pointee.out
            let effects = state.pointee.effects
            let length = Int32(end - frame)
            _ = _unsafePerformance { fluid_synth_process(synth, length, 4, effects, 2, out) }
            state.pointee.framesRendered += Int64(end - frame)
            frame = end
        }
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
            case 0xB0: return fluid_synth_cc(synth, channel, data1, data2)
            case 0xC0: return fluid_synth_program_change(synth, channel, data1)
            case 0xD0: return fluid_synth_channel_pressure(synth, channel, data1)
            case 0xE0: return fluid_synth_pitch_bend(synth, channel, data1 | data2 << 7)
            default: return 0
            }
        }
    }
}

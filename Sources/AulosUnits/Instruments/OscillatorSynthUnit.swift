import AulosCore
import AulosDSP
import AulosMIDI
import AulosRealtime
import Synchronization

/// Aulos's own synthesizer (`aumu/osyn/Auls`), sixteen channels deep. A voice has two band-limited
/// oscillators (saw, pulse with width, triangle, sine, noise, or a loaded morphing wavetable) with unison
/// stacks, a sub-oscillator, ring modulation, FM and hard sync; a resonant state-variable filter (low-,
/// high-, band-pass, notch) with envelope, key tracking and LFO, and a ladder filter after or beside it with
/// drive; amp, filter and a third envelope; a channel LFO and a per-voice LFO (shapes, tempo sync); an
/// eight-slot modulation matrix; glide; poly, mono and legato modes; an arpeggiator on the host's beat.
/// Each channel plays the unit's parameters or, after a program change (with bank select), a factory
/// preset of its own; drum channels play a General MIDI kit; MPE zones, tuning tables (Scala, MIDI Tuning
/// Standard) and an effect-send output (CC 91/93 per channel) are there for hosts that want them.
///
/// Timing: notes are sample-exact (a note-on at offset k sounds from frame k). Controllers, bends and
/// parameter changes take effect on a 16-frame control grid aligned to absolute sample time, so output is
/// bit-identical whatever the slice size.
///
/// Where things are: this file is the control side (properties, presets, the kernel's making);
/// `SynthPatch.swift` the parameters and how the kernel reads them; `OscillatorSynthKernel.swift` the render
/// loop and control tick; `SynthVoice.swift`, `SynthRichVoice.swift`, `SynthNotes.swift`, `SynthChannel.swift`,
/// `SynthModulation.swift`, `SynthArpeggiator.swift`, `SynthDrumKit.swift` the voice, the rich voice, note
/// allocation, channel messages, the matrix, the arpeggiator and the drums; `SynthKernelMemory.swift` the
/// kernel's memory.
///
/// Threads: control side as for every unit; `OscillatorSynthKernel` runs on the render thread.
public final class OscillatorSynthUnit: AudioUnit, MusicDevice, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(
        type: .musicDevice, subtype: "osyn", manufacturer: .aulos)

    /// Voices (a property, since it sizes the voice table): settable while uninitialized, 1…4096.
    public static let polyphonyProperty = PropertyID(rawValue: 64001)
    /// Voices sounding now (read-only, readable while rendering).
    public static let activeVoicesProperty = PropertyID(rawValue: 64002)
    /// The MIDI channel (0…15, a UInt32; default 0) whose program changes load the unit's own parameters:
    /// settable while uninitialized. A program change on any other channel gives that channel a patch of
    /// its own, so sixteen channels can play sixteen presets.
    public static let baseChannelProperty = PropertyID(rawValue: 64003)
    /// The channels that play the drum kit, a bit per channel (a UInt32; default 1 << 9, channel 10):
    /// settable while uninitialized; 0 for none.
    public static let drumChannelsProperty = PropertyID(rawValue: 64004)
    /// MPE zones at the start (a UInt32: lower-zone member channels | upper-zone member channels << 8; 0
    /// for none): settable while uninitialized. An MPE Configuration Message (RPN 6) changes them while
    /// the synth plays.
    public static let mpeZonesProperty = PropertyID(rawValue: 64005)

    public let midiInput = MIDIEventQueue(capacity: 2048)
    public private(set) var polyphony: UInt32 = 32
    public private(set) var baseChannel: UInt32 = 0
    public private(set) var drumChannels: UInt32 = 1 << 9
    public private(set) var mpeZones: (lower: Int, upper: Int) = (0, 0)
    public let presets: [SynthPreset]
    private var selectedPreset: Preset?
    public let voiceBudget = VoiceBudget()
    /// What each key plays (twelve-tone equal temperament unless a scale is given), and the ring that takes
    /// a change to the render side while the synth plays.
    public private(set) var tuning = TuningTable.equal
    /// The cycles the `wavetable` waveform morphs through (nil: it plays a saw).
    public private(set) var wavetable: MorphingWavetable?
    private let tuningChanges = SPSCRing<KeyTuning>(minimumCapacity: 512)

    public init(presets: [SynthPreset] = []) {
        self.presets = presets
        super.init(
            description: Self.componentDescription, name: "Aulos: Oscillator Synth", inputs: 0, outputs: 1,
            parameters: Parameter.allCases.map(\.info) + SynthDrum.parameterInfos)
    }

    public var activeVoiceCount: Int { voiceBudget.active }

    deinit { tuningChanges.deallocate() }

    /// Retunes the keys (a Scala scale, a tuning message): at once if the synth is not playing, else from
    /// the next slice (notes already sounding keep their pitch). Control thread.
    public func setTuning(_ table: TuningTable) throws(AudioUnitError) {
        if isInitialized {
            guard tuningChanges.capacity - tuningChanges.count >= 128 else {
                throw AudioUnitError(
                    .cannotDoInCurrentContext, "\(name): tuning changes are waiting (is it rendering?)")
            }
            for (key, pitch) in table.pitches.enumerated() {
                _ = tuningChanges.push(KeyTuning(key: UInt8(key), pitch: pitch ?? .nan))
            }
        }
        tuning = table
    }

    /// Loads the table the `wavetable` waveform plays. Control thread, while the synth is uninitialized (the
    /// kernel reads the table's memory directly).
    public func setWavetable(_ table: MorphingWavetable?) throws(AudioUnitError) {
        guard !isInitialized else {
            throw AudioUnitError(.cannotDoInCurrentContext, "\(name): a wavetable is loaded before the synth starts")
        }
        wavetable = table
    }

    // MARK: Presets

    /// A preset's number is its bank · 128 + program (its program, in bank 0).
    public override var factoryPresets: [Preset] { presets.map { Preset(number: Int32($0.number), name: $0.name) } }
    public override var currentPreset: Preset? { selectedPreset }

    public override func applyPreset(_ preset: Preset) throws(AudioUnitError) {
        guard let match = presets.first(where: { $0.number == Int(preset.number) }) else {
            throw AudioUnitError(.invalidPropertyValue, "\(name) has no preset \(preset.number)")
        }
        for (parameter, value) in zip(Parameter.allCases, match.orderedValues) {
            try setParameter(parameter.id, value: value)
        }
        selectedPreset = Preset(number: Int32(match.number), name: match.name)
    }

    /// Selects a factory preset by name (case-insensitive) or program number.
    public func selectPreset(_ nameOrNumber: String) throws(AudioUnitError) {
        let match =
            presets.first { $0.name.lowercased() == nameOrNumber.lowercased() }
            ?? Int(nameOrNumber).flatMap { number in presets.first { $0.number == number } }
        guard let match else {
            let names = presets.map(\.name).joined(separator: ", ")
            throw AudioUnitError(.invalidPropertyValue, "no synth preset '\(nameOrNumber)' (presets: \(names))")
        }
        try set(.presentPreset, Preset(number: Int32(match.number), name: match.name))
    }

    // MARK: State

    public override var stateProperties: [String: String] {
        super.stateProperties.merging(["polyphony": String(polyphony)]) { $1 }
    }

    public override func restoreStateProperties(_ properties: [String: String]) throws(AudioUnitError) {
        try super.restoreStateProperties(properties)
        if let text = properties["polyphony"], let voices = UInt32(text), voices != polyphony {
            try setProperty(Self.polyphonyProperty, scope: .global, element: 0, value: voices)
        }
    }

    // MARK: Properties

    public override func customPropertyInfo(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> PropertyInfo?
    {
        switch id {
        case Self.polyphonyProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: true)
        case Self.activeVoicesProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: false)
        case Self.baseChannelProperty, Self.drumChannelsProperty, Self.mpeZonesProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: true)
        default:
            return nil
        }
    }

    public override func customGetProperty(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> Any?
    {
        switch id {
        case Self.polyphonyProperty: polyphony
        case Self.activeVoicesProperty: UInt32(activeVoiceCount)
        case Self.baseChannelProperty: baseChannel
        case Self.drumChannelsProperty: drumChannels
        case Self.mpeZonesProperty: UInt32(mpeZones.lower | mpeZones.upper << 8)
        default: nil
        }
    }

    public override func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any)
        throws(AudioUnitError) -> Bool
    {
        switch id {
        case Self.polyphonyProperty:
            guard let voices = value as? UInt32, (1...4096).contains(voices) else {
                throw AudioUnitError(.invalidPropertyValue, "polyphony must be a UInt32 in 1…4096")
            }
            polyphony = voices
        case Self.baseChannelProperty:
            guard let channel = value as? UInt32, channel < 16 else {
                throw AudioUnitError(.invalidPropertyValue, "the base channel must be a UInt32 in 0…15")
            }
            baseChannel = channel
        case Self.drumChannelsProperty:
            guard let channels = value as? UInt32, channels <= 0xFFFF else {
                throw AudioUnitError(.invalidPropertyValue, "the drum channels must be a UInt32 mask of 16 bits")
            }
            drumChannels = channels
        case Self.mpeZonesProperty:
            guard let zones = value as? UInt32, zones <= 0xFFFF else {
                throw AudioUnitError(.invalidPropertyValue, "MPE zones must be a UInt32: lower | upper << 8")
            }
            let (lower, upper) = (Int(zones & 0xFF), Int(zones >> 8))
            guard lower <= 15, upper <= 15, lower == 0 || upper == 0 || lower + upper <= 14 else {
                throw AudioUnitError(
                    .invalidPropertyValue,
                    "MPE zones of \(lower) and \(upper) member channels do not fit (together at most 14, or one of 15)")
            }
            mpeZones = (lower, upper)
        default:
            return false
        }
        return true
    }

    // MARK: Outputs

    /// Output 1, when the host asks for two outputs, is the effect-send output (`enableEffectSendOutput`).
    public override func canChangeElementCount(_ scope: Scope) -> Bool { scope == .output }

    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        try super.validateFormat(format, scope: scope, element: element)
        if scope == .output { try checkInstrumentOutput(format, element: element) }
    }

    // MARK: Kernel

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let format = outputFormat(0)
        try checkInstrumentOutput(format, element: 0)
        if hasEffectSendOutput { try checkInstrumentOutput(outputFormat(1), element: 1) }
        guard outputBusCount <= 2 else {
            throw AudioUnitError(
                .invalidPropertyValue, "\(name) has at most two outputs (the mix and its effect sends)")
        }
        let tables = WavetableSet.shared(sampleRate: format.sampleRate)
        retainForKernel(tables)
        if let wavetable { retainForKernel(wavetable) }
        let (values, rows) = SynthPreset.levelledRows(presets)
        let kernel = OscillatorSynthKernel(
            parameters: renderParameters, events: midiInput.list, saw: tables.saw, triangle: tables.triangle,
            sampleRate: format.sampleRate, polyphony: Int(polyphony), presetValues: values.flatMap { $0 },
            presetRows: rows, baseChannel: Int(baseChannel), drumChannels: UInt16(drumChannels),
            wavetable: wavetable, mpeZones: mpeZones,
            budget: voiceBudget.counters, host: hostCallbackInfo, effectSends: hasEffectSendOutput,
            maximumFrames: Int(maximumFramesPerSlice), tuning: tuning, tuningChanges: tuningChanges)
        return UnitKernel.make(kernel, render: OscillatorSynthKernel.render) { $0.release() }
    }
}

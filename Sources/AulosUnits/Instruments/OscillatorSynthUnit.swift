import AulosCore
import AulosDSP
import AulosMIDI
import AulosRealtime
import Synchronization

/// Aulos's own subtractive synthesizer (`aumu/osyn/Auls`): two band-limited oscillators (saw, pulse with
/// width, triangle, sine, noise) with detune and mix, a resonant multimode filter with envelope amount and
/// key tracking, amp and filter ADSR, velocity sensitivity, an LFO to pitch/filter/amp scaled by the mod
/// wheel, pitch bend with an RPN 0 range, sustain, volume, expression and pan per MIDI channel, and poly,
/// mono and legato modes.
///
/// Timing: notes are sample-exact (a note-on at offset k sounds from frame k). Controllers, bends and
/// parameter changes take effect on a 16-frame control grid aligned to absolute sample time, so output is
/// bit-identical whatever the slice size.
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

    public enum Parameter: UInt32, CaseIterable, Sendable {
        case osc1Waveform, osc2Waveform, osc2Coarse, osc2Fine, oscMix, pulseWidth
        case filterMode, cutoff, resonance, filterEnvAmount, keyTracking
        case ampAttack, ampDecay, ampSustain, ampRelease
        case filterAttack, filterDecay, filterSustain, filterRelease
        case velocitySensitivity, lfoRate, lfoToPitch, lfoToFilter, lfoToAmp, voiceMode, volume
        case lfoSync, lfoSyncRate, arpMode, arpRate, arpGate, arpOctaves, arpLatch
        /// The modulation matrix: eight slots of source, destination, amount (−1…1) and via (a second source
        /// scaling the amount).
        case mod1Source, mod1Destination, mod1Amount, mod1Via
        case mod2Source, mod2Destination, mod2Amount, mod2Via
        case mod3Source, mod3Destination, mod3Amount, mod3Via
        case mod4Source, mod4Destination, mod4Amount, mod4Via
        case mod5Source, mod5Destination, mod5Amount, mod5Via
        case mod6Source, mod6Destination, mod6Amount, mod6Via
        case mod7Source, mod7Destination, mod7Amount, mod7Via
        case mod8Source, mod8Destination, mod8Amount, mod8Via
        /// The deeper voice: unison stacks per oscillator (voices, detune spread in cents, stereo width), a
        /// sub-oscillator an octave below osc 1, ring modulation, osc 2 → osc 1 FM and osc 2 hard-synced to
        /// osc 1; a ladder filter after (serial) or beside (parallel) the state-variable one, with drive;
        /// glide; LFO shapes, a second LFO per voice, a third envelope.
        case osc1Unison, osc1Detune, osc1Width, osc2Unison, osc2Detune, osc2Width
        case subLevel, ringMod, fmAmount, oscSync
        case filter2Routing, filter2Cutoff, filter2Resonance, drive
        case glideTime, glideMode
        case lfoShape, lfo2Rate, lfo2Shape, lfo2Sync, lfo2SyncRate, lfo2Retrigger
        case env3Attack, env3Decay, env3Sustain, env3Release
        /// Where in a loaded wavetable the `wavetable` waveform plays (0 its first cycle, 1 its last).
        case wavetablePosition

        public var id: ParameterID { ParameterID(rawValue) }

        /// The key used in preset files: the case name.
        public var key: String { String(describing: self) }

        public init?(key: String) {
            guard let match = Self.allCases.first(where: { $0.key == key }) else { return nil }
            self = match
        }

        public static let waveforms = ["saw", "pulse", "triangle", "sine", "noise", "wavetable"]
        public static let lfoShapes = ["sine", "triangle", "saw", "square", "sample and hold"]

        /// The modulation slot (0…7) and field (0 source, 1 destination, 2 amount, 3 via) of a matrix
        /// parameter.
        public var modulationField: (slot: Int, field: Int)? {
            guard rawValue >= Self.mod1Source.rawValue, rawValue <= Self.mod8Via.rawValue else { return nil }
            let index = Int(rawValue - Self.mod1Source.rawValue)
            return (index / 4, index % 4)
        }

        public var info: ParameterInfo {
            if let (slot, field) = modulationField {
                let name = "Mod \(slot + 1) " + ["Source", "Destination", "Amount", "Via"][field]
                switch field {
                case 1:
                    return .init(
                        id: id, name: name, unit: .indexed,
                        range: 0...Float(ModulationDestination.allCases.count - 1), defaultValue: 0,
                        valueNames: ModulationDestination.names)
                case 2:
                    return .init(id: id, name: name, unit: .generic, range: -1...1, defaultValue: 0)
                default:
                    return .init(
                        id: id, name: name, unit: .indexed, range: 0...Float(ModulationSource.names.count - 1),
                        defaultValue: 0, valueNames: ModulationSource.names)
                }
            }
            return switch self {
            case .osc1Waveform:
                .init(
                    id: id, name: "Osc 1 Waveform", unit: .indexed, range: 0...5, defaultValue: 0,
                    valueNames: Self.waveforms)
            case .osc2Waveform:
                .init(
                    id: id, name: "Osc 2 Waveform", unit: .indexed, range: 0...5, defaultValue: 0,
                    valueNames: Self.waveforms)
            case .osc2Coarse: .init(id: id, name: "Osc 2 Coarse", unit: .generic, range: -24...24, defaultValue: 0)
            case .osc2Fine: .init(id: id, name: "Osc 2 Fine", unit: .cents, range: -100...100, defaultValue: 7)
            case .oscMix: .init(id: id, name: "Osc Mix", unit: .generic, range: 0...1, defaultValue: 0.5)
            case .pulseWidth: .init(id: id, name: "Pulse Width", unit: .generic, range: 0.05...0.95, defaultValue: 0.5)
            case .filterMode:
                .init(
                    id: id, name: "Filter Mode", unit: .indexed, range: 0...3, defaultValue: 0,
                    valueNames: ["lowpass", "highpass", "bandpass", "notch"])
            case .cutoff: .init(id: id, name: "Cutoff", unit: .hertz, range: 20...20_000, defaultValue: 5000)
            case .resonance: .init(id: id, name: "Resonance", unit: .generic, range: 0...1, defaultValue: 0.1)
            case .filterEnvAmount:
                .init(id: id, name: "Filter Env Amount", unit: .generic, range: -8...8, defaultValue: 0)
            case .keyTracking: .init(id: id, name: "Key Tracking", unit: .generic, range: 0...1, defaultValue: 0.5)
            case .ampAttack: .init(id: id, name: "Amp Attack", unit: .seconds, range: 0...10, defaultValue: 0.005)
            case .ampDecay: .init(id: id, name: "Amp Decay", unit: .seconds, range: 0.001...10, defaultValue: 0.3)
            case .ampSustain: .init(id: id, name: "Amp Sustain", unit: .generic, range: 0...1, defaultValue: 0.8)
            case .ampRelease: .init(id: id, name: "Amp Release", unit: .seconds, range: 0.001...10, defaultValue: 0.3)
            case .filterAttack: .init(id: id, name: "Filter Attack", unit: .seconds, range: 0...10, defaultValue: 0.01)
            case .filterDecay: .init(id: id, name: "Filter Decay", unit: .seconds, range: 0.001...10, defaultValue: 0.4)
            case .filterSustain: .init(id: id, name: "Filter Sustain", unit: .generic, range: 0...1, defaultValue: 0.5)
            case .filterRelease:
                .init(id: id, name: "Filter Release", unit: .seconds, range: 0.001...10, defaultValue: 0.4)
            case .velocitySensitivity:
                .init(id: id, name: "Velocity Sensitivity", unit: .generic, range: 0...1, defaultValue: 0.7)
            case .lfoRate: .init(id: id, name: "LFO Rate", unit: .hertz, range: 0.01...20, defaultValue: 5)
            case .lfoToPitch: .init(id: id, name: "LFO to Pitch", unit: .cents, range: 0...100, defaultValue: 20)
            case .lfoToFilter: .init(id: id, name: "LFO to Filter", unit: .generic, range: 0...4, defaultValue: 0)
            case .lfoToAmp: .init(id: id, name: "LFO to Amp", unit: .generic, range: 0...1, defaultValue: 0)
            case .voiceMode:
                .init(
                    id: id, name: "Voice Mode", unit: .indexed, range: 0...2, defaultValue: 0,
                    valueNames: ["poly", "mono", "legato"])
            case .volume: .init(id: id, name: "Volume", unit: .decibels, range: -60...6, defaultValue: -6)
            case .lfoSync: .init(id: id, name: "LFO Tempo Sync", unit: .boolean, range: 0...1, defaultValue: 0)
            case .lfoSyncRate:
                .init(
                    id: id, name: "LFO Synced Rate", unit: .indexed, range: 0...Float(NoteRate.allCases.count - 1),
                    defaultValue: Float(NoteRate.quarter.rawValue), valueNames: NoteRate.allCases.map(\.name))
            case .arpMode:
                .init(
                    id: id, name: "Arpeggiator", unit: .indexed, range: 0...Float(ArpeggiatorMode.allCases.count - 1),
                    defaultValue: 0, valueNames: ArpeggiatorMode.allCases.map(\.name))
            case .arpRate:
                .init(
                    id: id, name: "Arpeggiator Rate", unit: .indexed, range: 0...Float(NoteRate.allCases.count - 1),
                    defaultValue: Float(NoteRate.sixteenth.rawValue), valueNames: NoteRate.allCases.map(\.name))
            case .arpGate: .init(id: id, name: "Arpeggiator Gate", unit: .generic, range: 0.05...1, defaultValue: 0.5)
            case .arpOctaves: .init(id: id, name: "Arpeggiator Octaves", unit: .indexed, range: 1...4, defaultValue: 1)
            case .arpLatch: .init(id: id, name: "Arpeggiator Latch", unit: .boolean, range: 0...1, defaultValue: 0)
            case .osc1Unison, .osc2Unison:
                .init(
                    id: id, name: self == .osc1Unison ? "Osc 1 Unison" : "Osc 2 Unison", unit: .indexed, range: 1...16,
                    defaultValue: 1)
            case .osc1Detune, .osc2Detune:
                .init(
                    id: id, name: self == .osc1Detune ? "Osc 1 Detune" : "Osc 2 Detune", unit: .cents, range: 0...100,
                    defaultValue: 20)
            case .osc1Width, .osc2Width:
                .init(
                    id: id, name: self == .osc1Width ? "Osc 1 Width" : "Osc 2 Width", unit: .generic, range: 0...1,
                    defaultValue: 0.5)
            case .subLevel: .init(id: id, name: "Sub Level", unit: .generic, range: 0...1, defaultValue: 0)
            case .ringMod: .init(id: id, name: "Ring Mod", unit: .generic, range: 0...1, defaultValue: 0)
            case .fmAmount: .init(id: id, name: "FM Amount", unit: .generic, range: 0...4, defaultValue: 0)
            case .oscSync: .init(id: id, name: "Osc 2 Sync", unit: .boolean, range: 0...1, defaultValue: 0)
            case .filter2Routing:
                .init(
                    id: id, name: "Filter 2 Routing", unit: .indexed, range: 0...2, defaultValue: 0,
                    valueNames: ["off", "serial", "parallel"])
            case .filter2Cutoff:
                .init(id: id, name: "Filter 2 Cutoff", unit: .hertz, range: 20...20_000, defaultValue: 2000)
            case .filter2Resonance:
                .init(id: id, name: "Filter 2 Resonance", unit: .generic, range: 0...1, defaultValue: 0)
            case .drive: .init(id: id, name: "Drive", unit: .decibels, range: 0...36, defaultValue: 0)
            case .glideTime: .init(id: id, name: "Glide Time", unit: .seconds, range: 0...5, defaultValue: 0)
            case .glideMode:
                .init(
                    id: id, name: "Glide Mode", unit: .indexed, range: 0...2, defaultValue: 0,
                    valueNames: ["off", "legato", "always"])
            case .lfoShape:
                .init(
                    id: id, name: "LFO Shape", unit: .indexed, range: 0...4, defaultValue: 0,
                    valueNames: Self.lfoShapes)
            case .lfo2Rate: .init(id: id, name: "LFO 2 Rate", unit: .hertz, range: 0.01...20, defaultValue: 2)
            case .lfo2Shape:
                .init(
                    id: id, name: "LFO 2 Shape", unit: .indexed, range: 0...4, defaultValue: 0,
                    valueNames: Self.lfoShapes)
            case .lfo2Sync: .init(id: id, name: "LFO 2 Tempo Sync", unit: .boolean, range: 0...1, defaultValue: 0)
            case .lfo2SyncRate:
                .init(
                    id: id, name: "LFO 2 Synced Rate", unit: .indexed,
                    range: 0...Float(NoteRate.allCases.count - 1), defaultValue: Float(NoteRate.quarter.rawValue),
                    valueNames: NoteRate.allCases.map(\.name))
            case .lfo2Retrigger:
                .init(id: id, name: "LFO 2 Retrigger", unit: .boolean, range: 0...1, defaultValue: 1)
            case .env3Attack: .init(id: id, name: "Env 3 Attack", unit: .seconds, range: 0...10, defaultValue: 0.01)
            case .env3Decay: .init(id: id, name: "Env 3 Decay", unit: .seconds, range: 0.001...10, defaultValue: 0.5)
            case .env3Sustain: .init(id: id, name: "Env 3 Sustain", unit: .generic, range: 0...1, defaultValue: 0)
            case .env3Release:
                .init(id: id, name: "Env 3 Release", unit: .seconds, range: 0.001...10, defaultValue: 0.5)
            case .wavetablePosition:
                .init(id: id, name: "Wavetable Position", unit: .generic, range: 0...1, defaultValue: 0)
            default: fatalError("the modulation matrix's parameters are described above")
            }
        }
    }

    /// Arpeggiator patterns.
    public enum ArpeggiatorMode: Int, CaseIterable, Sendable {
        case off, up, down, upDown, random, asPlayed
        public var name: String { ["off", "up", "down", "updown", "random", "played"][rawValue] }
    }

    /// Note lengths for the arpeggiator and the synced LFO, in beats (quarter notes).
    public enum NoteRate: Int, CaseIterable, Sendable {
        case quarter, quarterTriplet, eighth, eighthTriplet, sixteenth, sixteenthTriplet, thirtySecond,
            thirtySecondTriplet
        public var name: String { ["1/4", "1/4t", "1/8", "1/8t", "1/16", "1/16t", "1/32", "1/32t"][rawValue] }
        public var beats: Double { [1, 2.0 / 3, 0.5, 1.0 / 3, 0.25, 1.0 / 6, 0.125, 1.0 / 12][rawValue] }
    }

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
        let tables = WavetableSet(sampleRate: format.sampleRate)
        retainForKernel(tables)
        if let wavetable { retainForKernel(wavetable) }
        let count = Parameter.allCases.count
        let (values, rows) = SynthPreset.levelledRows(presets)
        let presetValues = UnsafeMutablePointer<Float>.allocate(capacity: max(1, values.count * count))
        for (row, preset) in values.enumerated() {
            (presetValues + row * count).initialize(from: preset, count: count)
        }
        let presetRows = UnsafeMutablePointer<Int16>.allocate(capacity: rows.count)
        presetRows.initialize(from: rows, count: rows.count)
        let kernel = OscillatorSynthKernel(
            parameters: renderParameters, events: midiInput.list, saw: tables.saw, triangle: tables.triangle,
            sampleRate: format.sampleRate, polyphony: Int(polyphony), presetValues: presetValues,
            presetRows: presetRows, baseChannel: Int(baseChannel), drumChannels: UInt16(drumChannels),
            wavetable: wavetable, mpeZones: mpeZones,
            budget: voiceBudget.counters, host: hostCallbackInfo, effectSends: hasEffectSendOutput,
            maximumFrames: Int(maximumFramesPerSlice), tuning: tuning, tuningChanges: tuningChanges)
        return UnitKernel.make(kernel, render: OscillatorSynthKernel.render) { $0.release() }
    }
}

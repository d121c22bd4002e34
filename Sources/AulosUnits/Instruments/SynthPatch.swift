import AulosCore
import AulosDSP
import AulosMIDI

/// The synth's patch: its parameters (their addresses are what presets, rigs and saved states store, pinned
/// by `SynthParameterPinTests`), the values the kernel derives from them (`SynthControls`), and how the
/// kernel reads a row of values into controls by name. The enums live in this file so the render-side
/// checker sees their raw values where `readControls` reads them.
extension OscillatorSynthUnit {
    /// The patch's parameters. A case's raw value is its parameter ID and its slot in every row of values (the
    /// unit's, each factory preset's): append new ones at the end, never in the middle.
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
            guard let match = Self.byKey[key] else { return nil }
            self = match
        }

        /// Every parameter by its key, made once: loading the factory presets looks up thousands of keys, and
        /// formatting every case's name for each was most of a render's start-up.
        private static let byKey = Dictionary(uniqueKeysWithValues: allCases.map { ($0.key, $0) })

        /// Every parameter's info, made once (a modulation slot's lists 144 source names).
        private static let infos = allCases.map(\.describedInfo)

        public static let waveforms = ["saw", "pulse", "triangle", "sine", "noise", "wavetable"]
        public static let lfoShapes = ["sine", "triangle", "saw", "square", "sample and hold"]

        /// The modulation slot (0…7) and field (0 source, 1 destination, 2 amount, 3 via) of a matrix
        /// parameter.
        public var modulationField: (slot: Int, field: Int)? {
            guard rawValue >= Self.mod1Source.rawValue, rawValue <= Self.mod8Via.rawValue else { return nil }
            let index = Int(rawValue - Self.mod1Source.rawValue)
            return (index / 4, index % 4)
        }

        public var info: ParameterInfo { Self.infos[Int(rawValue)] }

        private var describedInfo: ParameterInfo {
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
    public enum ArpeggiatorMode: Int, CaseIterable, Sendable, BitwiseCopyable {
        case off, up, down, upDown, random, asPlayed
        public var name: String { ["off", "up", "down", "updown", "random", "played"][rawValue] }

        var isOn: Bool {
            @inline(__always) @_noAllocation @_noLocks get {
                if case .off = self { return false }
                return true
            }
        }
    }

    /// Note lengths for the arpeggiator and the synced LFO, in beats (quarter notes).
    public enum NoteRate: Int, CaseIterable, Sendable {
        case quarter, quarterTriplet, eighth, eighthTriplet, sixteenth, sixteenthTriplet, thirtySecond,
            thirtySecondTriplet
        public var name: String { ["1/4", "1/4t", "1/8", "1/8t", "1/16", "1/16t", "1/32", "1/32t"][rawValue] }
        public var beats: Double { [1, 2.0 / 3, 0.5, 1.0 / 3, 0.25, 1.0 / 6, 0.125, 1.0 / 12][rawValue] }
    }
}

/// A row of patch values (the unit's parameters gathered at a tick, or a factory preset's row), read by
/// parameter name. Render thread.
struct PatchValues {
    let base: UnsafeMutablePointer<Float>

    @inline(__always) @_noAllocation @_noLocks
    init(_ base: UnsafeMutablePointer<Float>) { self.base = base }

    @inline(__always) @_noAllocation @_noLocks
    subscript(_ parameter: OscillatorSynthUnit.Parameter) -> Float { base[Int(parameter.rawValue)] }

    /// Where `parameter`'s value is (the modulation matrix reads its eight slots from the first).
    @inline(__always) @_noAllocation @_noLocks
    func address(of parameter: OscillatorSynthUnit.Parameter) -> UnsafeMutablePointer<Float> {
        base + Int(parameter.rawValue)
    }
}

/// What an oscillator plays (`Parameter.waveforms` order). Plain value, any thread.
enum SynthWaveform: Int, BitwiseCopyable {
    case saw, pulse, triangle, sine, noise, wavetable

    /// Saw or pulse: the shapes hard sync computes from a naive saw.
    var isSawOrPulse: Bool {
        @inline(__always) @_noAllocation @_noLocks get {
            switch self {
            case .saw, .pulse: true
            case .triangle, .sine, .noise, .wavetable: false
            }
        }
    }

    var isPulse: Bool {
        @inline(__always) @_noAllocation @_noLocks get {
            if case .pulse = self { return true }
            return false
        }
    }
}

/// How a channel plays its keys: a voice per key, or one voice that restarts its envelopes (mono) or not
/// (legato) on each new key. Plain value, any thread.
enum VoiceMode: Int, BitwiseCopyable {
    case poly, mono, legato

    /// Mono or legato: one voice per channel and a stack of the keys held.
    var isMonophonic: Bool {
        @inline(__always) @_noAllocation @_noLocks get {
            if case .poly = self { return false }
            return true
        }
    }
}

/// When a new note glides from the channel's last one: never, only while a key is still held, or always.
/// Plain value, any thread.
enum GlideMode: Int, BitwiseCopyable {
    case off, legato, always

    var isOn: Bool {
        @inline(__always) @_noAllocation @_noLocks get {
            if case .off = self { return false }
            return true
        }
    }
}

/// Where the second (ladder) filter sits: nowhere, after the state-variable filter, or beside it. Plain
/// value, any thread.
enum FilterRouting: Int, BitwiseCopyable {
    case off, serial, parallel

    var isOn: Bool {
        @inline(__always) @_noAllocation @_noLocks get {
            if case .off = self { return false }
            return true
        }
    }
}

/// An LFO's wave (`Parameter.lfoShapes` order). Plain value, any thread.
enum LFOShape: Int, BitwiseCopyable {
    case sine, triangle, saw, square, sampleAndHold
}

/// A patch as the voices use it: the parameters' values turned into what the DSP needs (envelope
/// coefficients, beats, gains, the modulation matrix), once per control tick for the unit's parameters and
/// once per program change for a channel's own patch.
///
/// Threads: the render thread reads and writes it (a plain value in the kernel's memory); the control thread
/// makes it at initialize.
struct SynthControls: BitwiseCopyable {
    var wave1 = SynthWaveform.saw
    var wave2 = SynthWaveform.saw
    var osc2Offset = 0.0
    var mix: Float = 0.5
    var pulseWidth = 0.5
    /// A `StateVariableFilter.Mode` raw value (the filter takes it as one).
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
    var voiceMode = VoiceMode.poly
    var volume: Float = 0.5
    var lfoSync = false
    var lfoSyncBeats = 1.0
    var arpMode = OscillatorSynthUnit.ArpeggiatorMode.off
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
    var filter2Routing = FilterRouting.off
    var cutoff2 = 2000.0
    var resonance2: Float = 0
    var drive: Float = 0
    var glideTime = 0.0
    var glideMode = GlideMode.off
    var lfoShape = LFOShape.sine
    var lfo2Rate = 2.0
    var lfo2Shape = LFOShape.sine
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

/// How the kernel reads a patch: the unit's parameters or a preset row, into `SynthControls`.
///
/// Threads: render thread.
extension OscillatorSynthKernel {
    /// Values in a patch row: `OscillatorSynthUnit.Parameter.allCases.count` (pinned by a test), as a raw
    /// value the render-side checker can see.
    static var parameterCount: Int {
        @inline(__always) @_noAllocation @_noLocks get {
            Int(OscillatorSynthUnit.Parameter.wavetablePosition.rawValue) + 1
        }
    }

    /// `OscillatorSynthUnit.NoteRate.beats` (an array there), as a switch the render-side checker can see.
    @inline(__always) @_noAllocation @_noLocks
    static func rateBeats(_ index: Int) -> Double {
        switch OscillatorSynthUnit.NoteRate(rawValue: index) {
        case .quarter: 1
        case .quarterTriplet: 2.0 / 3
        case .eighth: 0.5
        case .eighthTriplet: 1.0 / 3
        case .sixteenth: 0.25
        case .sixteenthTriplet: 1.0 / 6
        case .thirtySecond: 0.125
        case .thirtySecondTriplet, nil: 1.0 / 12
        }
    }

    /// The unit's parameters as controls, for every channel that plays them.
    @_noAllocation @_noLocks
    func readControls() {
        for slot in 0..<Self.parameterCount { unitValues[slot] = parameters.value(slot) }
        readControls(from: unitValues, into: controls)
    }

    /// A patch's values (in `OscillatorSynthUnit.Parameter` order) as controls.
    @_noAllocation @_noLocks
    func readControls(from values: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<SynthControls>) {
        let p = PatchValues(values)
        var c = target.pointee
        c.wave1 = SynthWaveform(rawValue: Int(p[.osc1Waveform])) ?? .saw
        c.wave2 = SynthWaveform(rawValue: Int(p[.osc2Waveform])) ?? .saw
        c.osc2Offset = Double(p[.osc2Coarse]) + Double(p[.osc2Fine]) / 100
        c.mix = p[.oscMix]
        c.pulseWidth = Double(p[.pulseWidth])
        c.filterMode = Int(p[.filterMode])
        c.cutoff = Double(p[.cutoff])
        c.resonance = p[.resonance]
        c.filterEnvAmount = Double(p[.filterEnvAmount])
        c.keyTracking = Double(p[.keyTracking])
        c.ampShape = EnvelopeShape(
            attack: Double(p[.ampAttack]), decay: Double(p[.ampDecay]), sustain: p[.ampSustain],
            release: Double(p[.ampRelease]), sampleRate: sampleRate)
        c.filterShape = EnvelopeShape(
            attack: Double(p[.filterAttack]), decay: Double(p[.filterDecay]), sustain: p[.filterSustain],
            release: Double(p[.filterRelease]), sampleRate: sampleRate)
        c.velocitySensitivity = p[.velocitySensitivity]
        c.lfoRate = Double(p[.lfoRate])
        c.lfoToPitch = Double(p[.lfoToPitch])
        c.lfoToFilter = Double(p[.lfoToFilter])
        c.lfoToAmp = p[.lfoToAmp]
        c.voiceMode = VoiceMode(rawValue: Int(p[.voiceMode])) ?? .poly
        c.volume = Float(FastMath.exp2(Double(p[.volume]) / 6.020_599_913_279_624))
        c.lfoSync = p[.lfoSync] >= 0.5
        c.lfoSyncBeats = Self.rateBeats(Int(p[.lfoSyncRate]))
        c.arpMode = OscillatorSynthUnit.ArpeggiatorMode(rawValue: Int(p[.arpMode])) ?? .off
        c.arpBeats = Self.rateBeats(Int(p[.arpRate]))
        c.arpGate = Double(p[.arpGate])
        c.arpOctaves = max(1, Int(p[.arpOctaves]))
        c.arpLatch = p[.arpLatch] >= 0.5
        c.modulation = ModulationMatrix(p.address(of: .mod1Source))
        c.unison1 = max(1, min(16, Int(p[.osc1Unison])))
        c.detune1 = Double(p[.osc1Detune])
        c.width1 = p[.osc1Width]
        c.unison2 = max(1, min(16, Int(p[.osc2Unison])))
        c.detune2 = Double(p[.osc2Detune])
        c.width2 = p[.osc2Width]
        c.subLevel = p[.subLevel]
        c.ringMod = p[.ringMod]
        c.fmAmount = p[.fmAmount]
        c.sync = p[.oscSync] >= 0.5
        c.filter2Routing = FilterRouting(rawValue: Int(p[.filter2Routing])) ?? .off
        c.cutoff2 = Double(p[.filter2Cutoff])
        c.resonance2 = p[.filter2Resonance]
        c.drive = p[.drive]
        c.glideTime = Double(p[.glideTime])
        c.glideMode = GlideMode(rawValue: Int(p[.glideMode])) ?? .off
        c.lfoShape = LFOShape(rawValue: Int(p[.lfoShape])) ?? .sine
        c.lfo2Rate = Double(p[.lfo2Rate])
        c.lfo2Shape = LFOShape(rawValue: Int(p[.lfo2Shape])) ?? .sine
        c.lfo2Sync = p[.lfo2Sync] >= 0.5
        c.lfo2SyncBeats = Self.rateBeats(Int(p[.lfo2SyncRate]))
        c.lfo2Retrigger = p[.lfo2Retrigger] >= 0.5
        c.modEnvelopeShape = EnvelopeShape(
            attack: Double(p[.env3Attack]), decay: Double(p[.env3Decay]), sustain: p[.env3Sustain],
            release: Double(p[.env3Release]), sampleRate: sampleRate)
        c.wavetablePosition = p[.wavetablePosition]
        c.usesLFO2 = c.modulation.reads(.lfo2)
        c.usesModEnvelope = c.modulation.reads(.modEnvelope)
        c.isRich =
            c.unison1 > 1 || c.unison2 > 1 || c.subLevel > 0 || c.ringMod > 0 || c.fmAmount > 0 || c.sync
            || c.filter2Routing.isOn || c.drive > 0 || c.modulation.reachesRichVoice
        target.pointee = c
    }
}

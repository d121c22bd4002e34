import AulosCore

/// What can modulate a synth voice: per-note values (velocity, key, release velocity, pressure, slide, a
/// random value drawn at the note's start), its channel's controllers, and the voice's LFO and envelopes.
/// Indices from 16 on are controllers: `controller(n)` is CC n. Plain value, any thread; its raw values are
/// what presets and rigs store (pinned by `SynthParameterPinTests`).
public enum ModulationSource: Int, CaseIterable, Sendable {
    case none, velocity, key, releaseVelocity, modWheel, channelPressure, polyPressure, pitchBend, lfo
    case ampEnvelope, filterEnvelope, notePressure, slide, random, lfo2, modEnvelope

    /// Names as presets and rigs spell them, then "cc 0" … "cc 127".
    public static let names: [String] =
        [
            "none", "velocity", "key", "release velocity", "mod wheel", "channel pressure", "poly pressure",
            "pitch bend", "lfo", "amp envelope", "filter envelope", "mpe pressure", "mpe slide", "random", "lfo 2",
            "env 3",
        ] + (0..<128).map { "cc \($0)" }

    /// The source index of controller `number`.
    public static func controller(_ number: Int) -> Int { firstController + number }

    /// The source index of CC 0: the controllers follow the named sources.
    static var firstController: Int {
        @inline(__always) @_noAllocation @_noLocks get { Self.modEnvelope.rawValue + 1 }
    }
}

/// What a modulation slot can move, and how far an amount of 1 with a source at 1 moves it. Plain value, any
/// thread; its raw values are what presets and rigs store.
public enum ModulationDestination: Int, CaseIterable, Sendable {
    /// pitch and osc 2 pitch: 24 semitones; osc mix: all the way; pulse width: 0.45; cutoff: 8 octaves;
    /// resonance: all the way; amp: +100 % (−1 silences); pan: half the stereo width; filter envelope
    /// amount: 8 octaves.
    /// sub level, ring mod: all the way; fm amount: 4; unison detune: 100 cents; filter 2 cutoff: 8
    /// octaves; drive: 36 dB; wavetable position: the whole table.
    case none, pitch, osc2Pitch, oscMix, pulseWidth, cutoff, resonance, amp, pan, filterEnvAmount
    case subLevel, ringMod, fmAmount, unisonDetune, filter2Cutoff, drive, wavetablePosition

    public static let names: [String] = [
        "none", "pitch", "osc2 pitch", "osc mix", "pulse width", "cutoff", "resonance", "amp", "pan",
        "filter env amount", "sub level", "ring mod", "fm amount", "unison detune", "filter 2 cutoff", "drive",
        "wavetable position",
    ]
}

/// The modulation matrix of a patch: eight slots, each a source, a destination, an amount (−1…1) and an
/// optional second source that scales the amount ("via"). Plain value in the patch's controls: render thread.
struct ModulationMatrix: BitwiseCopyable {
    var sources = SIMD8<Int32>(repeating: 0)
    var destinations = SIMD8<Int32>(repeating: 0)
    var amounts = SIMD8<Float>(repeating: 0)
    var vias = SIMD8<Int32>(repeating: 0)
    /// Whether any slot has a source and a destination: a patch without modulation skips it entirely.
    var isActive = false

    @_noAllocation @_noLocks
    init() {}

    /// The slots from a patch's values: `values[k]` the first value of slot k (source, destination, amount,
    /// via in order).
    @_noAllocation @_noLocks
    init(_ values: UnsafeMutablePointer<Float>) {
        for slot in 0..<8 {
            let base = values + 4 * slot
            sources[slot] = Int32(base[0])
            destinations[slot] = Int32(base[1])
            amounts[slot] = base[2]
            vias[slot] = Int32(base[3])
            if sources[slot] != 0 && destinations[slot] != 0 && amounts[slot] != 0 { isActive = true }
        }
    }

    /// Whether a slot with a source and an amount reads `source`, as its source or its via.
    @_noAllocation @_noLocks
    func reads(_ source: ModulationSource) -> Bool {
        guard isActive else { return false }
        let wanted = Int32(source.rawValue)
        for slot in 0..<8 where sources[slot] != 0 && amounts[slot] != 0 {
            if sources[slot] == wanted || vias[slot] == wanted { return true }
        }
        return false
    }

    /// Whether a slot with a source and an amount moves what only a rich voice has: the sub, ring, FM,
    /// unison detune, the second filter or drive.
    var reachesRichVoice: Bool {
        @_noAllocation @_noLocks get {
            guard isActive else { return false }
            let first = Int32(ModulationDestination.subLevel.rawValue)
            let last = Int32(ModulationDestination.drive.rawValue)
            for slot in 0..<8 where sources[slot] != 0 && amounts[slot] != 0 {
                if destinations[slot] >= first && destinations[slot] <= last { return true }
            }
            return false
        }
    }

    /// How far each destination moves (indexed by `ModulationDestination`), for one voice's inputs.
    @_noAllocation @_noLocks
    func offsets(_ inputs: ModulationInputs) -> ModulationOffsets {
        var offsets = ModulationOffsets()
        guard isActive else { return offsets }
        for slot in 0..<8 {
            let destination = Int(destinations[slot])
            guard sources[slot] != 0, destination > ModulationDestination.none.rawValue,
                destination <= ModulationDestination.wavetablePosition.rawValue
            else { continue }
            var amount = amounts[slot] * inputs.value(Int(sources[slot]))
            if vias[slot] != 0 { amount *= inputs.value(Int(vias[slot])) }
            offsets.values[destination] += amount
        }
        return offsets
    }
}

/// The matrix's result for one voice: the offset of each destination, in units of its full reach. A local
/// value of the render thread's control tick.
struct ModulationOffsets: BitwiseCopyable {
    var values = SIMD32<Float>(repeating: 0)

    @_noAllocation @_noLocks
    init() {}

    // By destination.
    var pitch: Float { @inline(__always) @_noAllocation @_noLocks get { self[.pitch] } }
    var osc2Pitch: Float { @inline(__always) @_noAllocation @_noLocks get { self[.osc2Pitch] } }
    var oscMix: Float { @inline(__always) @_noAllocation @_noLocks get { self[.oscMix] } }
    var pulseWidth: Float { @inline(__always) @_noAllocation @_noLocks get { self[.pulseWidth] } }
    var cutoff: Float { @inline(__always) @_noAllocation @_noLocks get { self[.cutoff] } }
    var resonance: Float { @inline(__always) @_noAllocation @_noLocks get { self[.resonance] } }
    var amp: Float { @inline(__always) @_noAllocation @_noLocks get { self[.amp] } }
    var pan: Float { @inline(__always) @_noAllocation @_noLocks get { self[.pan] } }
    var filterEnvAmount: Float { @inline(__always) @_noAllocation @_noLocks get { self[.filterEnvAmount] } }
    var subLevel: Float { @inline(__always) @_noAllocation @_noLocks get { self[.subLevel] } }
    var ringMod: Float { @inline(__always) @_noAllocation @_noLocks get { self[.ringMod] } }
    var fmAmount: Float { @inline(__always) @_noAllocation @_noLocks get { self[.fmAmount] } }
    var unisonDetune: Float { @inline(__always) @_noAllocation @_noLocks get { self[.unisonDetune] } }
    var filter2Cutoff: Float { @inline(__always) @_noAllocation @_noLocks get { self[.filter2Cutoff] } }
    var drive: Float { @inline(__always) @_noAllocation @_noLocks get { self[.drive] } }
    var wavetablePosition: Float { @inline(__always) @_noAllocation @_noLocks get { self[.wavetablePosition] } }

    @inline(__always) @_noAllocation @_noLocks
    subscript(_ destination: ModulationDestination) -> Float { values[destination.rawValue] }
}

/// Where one voice's modulation sources stand at a control tick: each 0…1, or −1…1 for bend, key and LFO.
/// A local value of the render thread's control tick.
struct ModulationInputs {
    var velocity: Float = 0
    var key: Float = 0
    var releaseVelocity: Float = 0
    var modWheel: Float = 0
    var channelPressure: Float = 0
    var polyPressure: Float = 0
    var pitchBend: Float = 0
    var lfo: Float = 0
    var ampEnvelope: Float = 0
    var filterEnvelope: Float = 0
    var notePressure: Float = 0
    var slide: Float = 0
    var random: Float = 0
    var lfo2: Float = 0
    var modEnvelope: Float = 0
    /// The voice's channel's 128 controller values.
    var controllers: UnsafeMutablePointer<Float>

    @_noAllocation @_noLocks
    init(controllers: UnsafeMutablePointer<Float>) { self.controllers = controllers }

    /// The value of source number `index` (a `ModulationSource`, or a controller after them).
    @inline(__always) @_noAllocation @_noLocks
    func value(_ index: Int) -> Float {
        guard let source = ModulationSource(rawValue: index) else {
            let controller = index - ModulationSource.firstController
            return controller >= 0 && controller < 128 ? Float(controllers[controller]) / 127 : 0
        }
        return switch source {
        case .none: 0
        case .velocity: velocity
        case .key: key
        case .releaseVelocity: releaseVelocity
        case .modWheel: modWheel
        case .channelPressure: channelPressure
        case .polyPressure: polyPressure
        case .pitchBend: pitchBend
        case .lfo: lfo
        case .ampEnvelope: ampEnvelope
        case .filterEnvelope: filterEnvelope
        case .notePressure: notePressure
        case .slide: slide
        case .random: random
        case .lfo2: lfo2
        case .modEnvelope: modEnvelope
        }
    }
}

extension OscillatorSynthKernel {
    /// Where a voice's modulation sources stand now.
    @_noAllocation @_noLocks
    func inputs(of voice: UnsafeMutablePointer<SynthVoice>) -> ModulationInputs {
        let own = Int(voice.pointee.channel)
        let manager = channels[owner(own)]
        let note = voice.pointee.expression
        var inputs = ModulationInputs(controllers: controllerValues + 128 * own)
        inputs.velocity = voice.pointee.velocity / 127
        inputs.key = Float(Int(voice.pointee.note) - 60) / 60
        inputs.releaseVelocity = voice.pointee.releaseVelocity / 127
        inputs.modWheel = Float(note.own(note.modulation, manager.modulation)) / 127
        inputs.channelPressure = Float(channels[own].pressure) / 127
        inputs.polyPressure = voice.pointee.pressure / 127
        inputs.pitchBend = Float(channels[own].bend) / 8192
        inputs.lfo = Float(manager.lfoValue)
        inputs.ampEnvelope = voice.pointee.amp.level
        inputs.filterEnvelope = voice.pointee.filterEnvelope.level
        // A member channel carries one note: its pressure is the note's. Elsewhere poly pressure is.
        inputs.notePressure = isMember(own) ? inputs.channelPressure : inputs.polyPressure
        let slide = Double(controllerValues[128 * own + SynthController.slideIndex])
        inputs.slide = Float(note.own(note.slide, slide)) / 127
        inputs.random = voice.pointee.random
        inputs.lfo2 = voice.pointee.lfo2Value
        inputs.modEnvelope = voice.pointee.modEnvelope.level
        return inputs
    }
}

import AulosCore

/// What can modulate a synth voice: per-note values (velocity, key, release velocity, pressure, slide, a
/// random value drawn at the note's start), its channel's controllers, and the voice's LFO and envelopes.
/// Indices from 16 on are controllers: `controller(n)` is CC n.
public enum ModulationSource: Int, CaseIterable, Sendable {
    case none, velocity, key, releaseVelocity, modWheel, channelPressure, polyPressure, pitchBend, lfo
    case ampEnvelope, filterEnvelope, notePressure, slide, random, lfo2, modEnvelope

    /// Names as presets and rigs spell them, then "cc 0" … "cc 127".
    public static var names: [String] {
        [
            "none", "velocity", "key", "release velocity", "mod wheel", "channel pressure", "poly pressure",
            "pitch bend", "lfo", "amp envelope", "filter envelope", "mpe pressure", "mpe slide", "random", "lfo 2",
            "env 3",
        ] + (0..<128).map { "cc \($0)" }
    }

    /// The source index of controller `number`.
    public static func controller(_ number: Int) -> Int { allCases.count + number }
}

/// What a modulation slot can move, and how far an amount of 1 with a source at 1 moves it.
public enum ModulationDestination: Int, CaseIterable, Sendable {
    /// pitch and osc 2 pitch: 24 semitones; osc mix: all the way; pulse width: 0.45; cutoff: 8 octaves;
    /// resonance: all the way; amp: +100 % (−1 silences); pan: half the stereo width; filter envelope
    /// amount: 8 octaves.
    /// sub level, ring mod: all the way; fm amount: 4; unison detune: 100 cents; filter 2 cutoff: 8
    /// octaves; drive: 36 dB; wavetable position: the whole table.
    case none, pitch, osc2Pitch, oscMix, pulseWidth, cutoff, resonance, amp, pan, filterEnvAmount
    case subLevel, ringMod, fmAmount, unisonDetune, filter2Cutoff, drive, wavetablePosition

    public static var names: [String] {
        [
            "none", "pitch", "osc2 pitch", "osc mix", "pulse width", "cutoff", "resonance", "amp", "pan",
            "filter env amount", "sub level", "ring mod", "fm amount", "unison detune", "filter 2 cutoff", "drive",
            "wavetable position",
        ]
    }
}

/// The modulation matrix of a patch: eight slots, each a source, a destination, an amount (−1…1) and an
/// optional second source that scales the amount ("via"). Plain value in the patch's controls.
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

    /// How far each destination moves (indexed by `ModulationDestination`), for one voice's inputs.
    @_noAllocation @_noLocks
    func offsets(_ inputs: ModulationInputs) -> ModulationOffsets {
        var offsets = ModulationOffsets()
        guard isActive else { return offsets }
        for slot in 0..<8 {
            let destination = Int(destinations[slot])
            guard sources[slot] != 0, destination > 0, destination < 17 else { continue }
            var amount = amounts[slot] * inputs.value(Int(sources[slot]))
            if vias[slot] != 0 { amount *= inputs.value(Int(vias[slot])) }
            offsets.values[destination] += amount
        }
        return offsets
    }
}

/// The matrix's result for one voice: the offset of each destination, in units of its full reach.
struct ModulationOffsets: BitwiseCopyable {
    var values = SIMD32<Float>(repeating: 0)

    @_noAllocation @_noLocks
    init() {}

    // By destination (the indices of `ModulationDestination`, as literals the render-side checker can see).
    var pitch: Float { @inline(__always) @_noAllocation @_noLocks get { values[1] } }
    var osc2Pitch: Float { @inline(__always) @_noAllocation @_noLocks get { values[2] } }
    var oscMix: Float { @inline(__always) @_noAllocation @_noLocks get { values[3] } }
    var pulseWidth: Float { @inline(__always) @_noAllocation @_noLocks get { values[4] } }
    var cutoff: Float { @inline(__always) @_noAllocation @_noLocks get { values[5] } }
    var resonance: Float { @inline(__always) @_noAllocation @_noLocks get { values[6] } }
    var amp: Float { @inline(__always) @_noAllocation @_noLocks get { values[7] } }
    var pan: Float { @inline(__always) @_noAllocation @_noLocks get { values[8] } }
    var filterEnvAmount: Float { @inline(__always) @_noAllocation @_noLocks get { values[9] } }
    var subLevel: Float { @inline(__always) @_noAllocation @_noLocks get { values[10] } }
    var ringMod: Float { @inline(__always) @_noAllocation @_noLocks get { values[11] } }
    var fmAmount: Float { @inline(__always) @_noAllocation @_noLocks get { values[12] } }
    var unisonDetune: Float { @inline(__always) @_noAllocation @_noLocks get { values[13] } }
    var filter2Cutoff: Float { @inline(__always) @_noAllocation @_noLocks get { values[14] } }
    var drive: Float { @inline(__always) @_noAllocation @_noLocks get { values[15] } }
    var wavetablePosition: Float { @inline(__always) @_noAllocation @_noLocks get { values[16] } }
}

/// Where one voice's modulation sources stand at a control tick: each 0…1, or −1…1 for bend, key and LFO.
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
    var controllers: UnsafeMutablePointer<UInt8>

    @_noAllocation @_noLocks
    init(controllers: UnsafeMutablePointer<UInt8>) { self.controllers = controllers }

    @inline(__always) @_noAllocation @_noLocks
    func value(_ source: Int) -> Float {
        switch source {
        case 1: velocity
        case 2: key
        case 3: releaseVelocity
        case 4: modWheel
        case 5: channelPressure
        case 6: polyPressure
        case 7: pitchBend
        case 8: lfo
        case 9: ampEnvelope
        case 10: filterEnvelope
        case 11: notePressure
        case 12: slide
        case 13: random
        case 14: lfo2
        case 15: modEnvelope
        case 16..<144: Float(controllers[source - 16]) / 127
        default: 0
        }
    }
}

extension OscillatorSynthKernel {
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
}

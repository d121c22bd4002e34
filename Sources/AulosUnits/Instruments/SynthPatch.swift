import AulosCore
import AulosDSP
import AulosMIDI

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

/// How the kernel reads a patch: the unit's parameters or a preset row, into `SynthControls`.
///
/// Threads: render thread.
extension OscillatorSynthKernel {
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
}

import AulosDSP

/// What a controller (or, at note-on, an envelope stage) moves, in the flat modulation table.
///
/// Threads: a value.
enum SFZModulationTarget: UInt8, BitwiseCopyable {
    // Followed while the voice sounds (through `SFZVoiceInputs`).
    case volume, amplitude, pan, cutoff, pitch
    // Read at note-on only: the voice has no input for them.
    case width, position, resonance
    case amplitudeLFODepth, amplitudeLFOFrequency, filterLFODepth, filterLFOFrequency
    case pitchLFODepth, pitchLFOFrequency
    /// `envelopeStage + 8 · envelope + stage` (envelope 0 amplitude, 1 filter, 2 pitch; stage as
    /// `SFZEnvelopeStage`'s order): an envelope control (`ampeg_attackccN`).
    case envelopeStage = 32

    /// The raw values the render side compares with (volume…pitch are followed; envelope stages start at
    /// 32), as constants the real-time checker can see through.
    static var lastContinuous: UInt8 { @inline(__always) @_noAllocation @_noLocks get { 4 } }
    static var firstEnvelopeStage: UInt8 { @inline(__always) @_noAllocation @_noLocks get { 32 } }
}

/// One controller modulation of one region: `depth` × `curve[controller value]` added to (or, for the
/// amplitude, multiplied into) its target.
///
/// Threads: a value in the render-side tables.
struct SFZModulationEntry: BitwiseCopyable {
    var target: UInt8
    var controller: UInt8
    var curve: Int16
    var depth: Float
}

/// One controller crossfade of one region (`xfin_loccN`/`xfout_loccN`).
///
/// Threads: a value in the render-side tables.
struct SFZCrossfadeEntry: BitwiseCopyable {
    var controller: UInt8
    var low: UInt8
    var high: UInt8
    var fadesIn: Bool
    var power: Bool
}

/// Velocity's effect on an envelope (SFZ's `*_vel2*`): added at full velocity, scaled by velocity / 127.
///
/// Threads: a value.
struct SFZEnvelopeVelocity: BitwiseCopyable {
    var delay: Float = 0
    var attack: Float = 0
    var hold: Float = 0
    var decay: Float = 0
    var sustain: Float = 0
    var release: Float = 0
    var depth: Float = 0

    init(_ envelope: SFZRegionEnvelope) {
        (delay, attack, hold) = (envelope.velocityToDelay, envelope.velocityToAttack, envelope.velocityToHold)
        (decay, sustain, release) = (envelope.velocityToDecay, envelope.velocityToSustain, envelope.velocityToRelease)
        depth = envelope.velocityToDepth
    }
}

/// A region as the kernel plays it: every opcode resolved to numbers at load, so mapping a start to a voice
/// on the render thread reads plain memory (an `SFZRegion` holds arrays: reading it there would retain).
///
/// Threads: a value in the render-side tables.
struct SFZRegionPlan: BitwiseCopyable {
    /// Everything that does not depend on the note: sample, offsets, loop, envelopes' times, filter, LFOs.
    var base: SFZVoiceParameters
    var keycenter: Float
    var pitchKeytrack: Float
    /// `tune` + 100 × `transpose`, cents.
    var tune: Float
    var pitchVeltrack: Float
    var bendUp: Float
    var bendDown: Float
    /// `volume` as a linear gain.
    var volumeGain: Float
    /// `amplitude` as a fraction.
    var amplitude: Float
    /// The voice filters (a `cutoff` and a `fil_type` it has).
    var hasFilter: Bool
    var filterKeytrack: Float
    var filterKeycenter: Float
    var filterVeltrack: Float
    var amplitudeVelocity: SFZEnvelopeVelocity
    var filterVelocity: SFZEnvelopeVelocity
    var pitchVelocity: SFZEnvelopeVelocity
    /// `delay`, in output frames.
    var delayFrames: Int
    /// `off_mode=fast` (and `time`, played as fast): a choked voice fades out at once, else it releases.
    var offFast: Bool
    var sustainSwitch: Bool
    var sostenutoSwitch: Bool
    var modulationStart: Int32
    var modulationCount: Int32
    /// Whether a modulation or a controller crossfade is continuous (a controller move reaches a sounding
    /// voice).
    var hasContinuous: Bool
    var crossfadeStart: Int32
    var crossfadeCount: Int32
}

/// The render-side tables of a loaded library: one plan per region, each region's velocity and key gains
/// (128 each), the flat modulation and crossfade lists, and every curve (256 × 128 values). Allocated on the
/// control thread when the kernel is made, freed with it.
///
/// Threads: made and freed on the control thread; read-only on the render thread in between.
struct SFZRegionPlans: @unchecked Sendable {
    let plans: UnsafeMutablePointer<SFZRegionPlan>
    let count: Int
    /// Region r's gain at velocity v: `velocityGains[128 r + v]` (velocity curve and tracking, and the
    /// velocity crossfades); at key k: `keyGains[128 r + k]` (`amp_keytrack` and the key crossfades).
    let velocityGains: UnsafeMutablePointer<Float>
    let keyGains: UnsafeMutablePointer<Float>
    let modulations: UnsafeMutablePointer<SFZModulationEntry>
    let crossfades: UnsafeMutablePointer<SFZCrossfadeEntry>
    /// Curve c at controller value v: `curves[128 c + v]` (a curve the library does not define is linear).
    let curves: UnsafeMutablePointer<Float>

    static var curveCount: Int { @inline(__always) @_noAllocation @_noLocks get { 256 } }

    /// The plans of `library`'s regions playing `samples` (the store's ID of each of `library.samples`), at
    /// `sampleRate`. `fileLoops[i]` says whether sample i's file has a loop (`loop_mode`'s default), and
    /// `rootKeys[i]` the key it says it was recorded at (-1: none), for `pitch_keycenter=sample`.
    init(library: SFZLibrary, samples: [SFZSampleID], fileLoops: [Bool], rootKeys: [Int], sampleRate: Double) {
        let regions = library.regions
        count = regions.count
        let rows = max(1, regions.count)
        plans = .allocate(capacity: rows)
        velocityGains = .allocate(capacity: rows * 128)
        keyGains = .allocate(capacity: rows * 128)
        curves = .allocate(capacity: Self.curveCount * 128)
        for index in 0..<Self.curveCount {
            let curve = library.curves[index] ?? SFZCurve.builtIn(0)!
            for value in 0..<128 { curves[index * 128 + value] = curve[value] }
        }
        var modulations: [SFZModulationEntry] = []
        var crossfades: [SFZCrossfadeEntry] = []
        for (index, region) in regions.enumerated() {
            let sample = region.sampleIndex >= 0 ? samples[region.sampleIndex] : SFZSampleID(index: -1)
            let fileLoops = region.sampleIndex >= 0 ? fileLoops[region.sampleIndex] : false
            var base = SFZVoiceParameters(sample: sample)
            base.offset = region.offset
            base.end = region.end ?? -1
            base.loopMode =
                switch region.loopMode {
                case .noLoop: .noLoop
                case .oneShot: .oneShot
                case .loopContinuous: .loopContinuous
                case .loopSustain: .loopSustain
                case nil: fileLoops ? .loopContinuous : .noLoop
                }
            base.loopStart = region.loopStart ?? -1
            base.loopEnd = region.loopEnd ?? -1
            base.pan = region.pan / 100
            base.width = region.width / 100
            base.position = region.position / 100
            base.amplitudeEnvelope = Self.times(region.amplitudeEnvelope)
            base.filterEnvelope = Self.times(region.filterEnvelope)
            base.filterEnvelopeDepth = region.filterEnvelope.depth
            base.pitchEnvelope = Self.times(region.pitchEnvelope)
            base.pitchEnvelopeDepth = region.pitchEnvelope.depth
            if let cutoff = region.cutoff {
                base.filterType = Self.filter(region.filterType)
                base.cutoff = Double(cutoff)
                base.resonance = region.resonance
            }
            base.amplitudeLFO = Self.lfo(region.amplitudeLFO)
            base.filterLFO = Self.lfo(region.filterLFO)
            base.pitchLFO = Self.lfo(region.pitchLFO)
            base.group = UInt32(truncatingIfNeeded: region.group)

            let modulationStart = modulations.count
            func add(_ list: [SFZCCModulation], _ target: SFZModulationTarget) {
                for item in list where (0...127).contains(item.controller) {
                    modulations.append(
                        SFZModulationEntry(
                            target: target.rawValue, controller: UInt8(item.controller),
                            curve: Int16(min(max(item.curve, 0), Self.curveCount - 1)), depth: item.depth))
                }
            }
            add(region.volumeControllers, .volume)
            add(region.amplitudeControllers, .amplitude)
            add(region.panControllers, .pan)
            add(region.cutoffControllers, .cutoff)
            add(region.pitchControllers, .pitch)
            let hasContinuous =
                modulations.count > modulationStart
                || (region.crossfadeInControllers + region.crossfadeOutControllers).contains {
                    (0...127).contains($0.controller)
                }
            add(region.widthControllers, .width)
            add(region.positionControllers, .position)
            add(region.resonanceControllers, .resonance)
            add(region.amplitudeLFO.depthControllers, .amplitudeLFODepth)
            add(region.amplitudeLFO.frequencyControllers, .amplitudeLFOFrequency)
            add(region.filterLFO.depthControllers, .filterLFODepth)
            add(region.filterLFO.frequencyControllers, .filterLFOFrequency)
            add(region.pitchLFO.depthControllers, .pitchLFODepth)
            add(region.pitchLFO.frequencyControllers, .pitchLFOFrequency)
            let stages = SFZEnvelopeStage.allCases
            for (envelope, source) in [region.amplitudeEnvelope, region.filterEnvelope, region.pitchEnvelope]
                .enumerated()
            {
                for control in source.controllers where (0...127).contains(control.controller) {
                    let stage = stages.firstIndex(of: control.stage) ?? 0
                    modulations.append(
                        SFZModulationEntry(
                            target: SFZModulationTarget.envelopeStage.rawValue + UInt8(8 * envelope + stage),
                            controller: UInt8(control.controller), curve: 0, depth: control.amount))
                }
            }
            let crossfadeStart = crossfades.count
            for (list, fadesIn) in [(region.crossfadeInControllers, true), (region.crossfadeOutControllers, false)] {
                for range in list where (0...127).contains(range.controller) {
                    crossfades.append(
                        SFZCrossfadeEntry(
                            controller: UInt8(range.controller), low: UInt8(clamping: max(0, range.low)),
                            high: UInt8(clamping: max(0, range.high)), fadesIn: fadesIn,
                            power: region.crossfadeControllerCurve == .power))
                }
            }
            for value in 0..<128 {
                // The velocity and key crossfades alone: the controllers' are computed at each note-on.
                var alone = region
                alone.crossfadeInControllers = []
                alone.crossfadeOutControllers = []
                velocityGains[index * 128 + value] =
                    SFZGain.velocity(region, value)
                    * Self.crossfade(alone, key: -1, velocity: value)
                let keytrack = region.ampKeytrack * Float(value - region.ampKeycenter)
                keyGains[index * 128 + value] =
                    Float(FastMath.exp2(Double(keytrack) * 0.166_096_404_744_368_1))
                    * Self.crossfade(alone, key: value, velocity: -1)
            }
            let plan = SFZRegionPlan(
                base: base, keycenter: Float(Self.keycenter(region, rootKeys: rootKeys)),
                pitchKeytrack: region.pitchKeytrack,
                tune: region.tune + 100 * Float(region.transpose), pitchVeltrack: region.pitchVeltrack,
                bendUp: region.bendUp, bendDown: region.bendDown,
                volumeGain: Float(
                    FastMath.exp2(
                        Double(
                            region.volume + region.globalVolume + region.masterVolume + region.groupVolume)
                            * 0.166_096_404_744_368_1)),
                amplitude: region.amplitude / 100, hasFilter: base.filterType != .none,
                filterKeytrack: region.filterKeytrack,
                filterKeycenter: Float(region.filterKeycenter), filterVeltrack: region.filterVeltrack,
                amplitudeVelocity: SFZEnvelopeVelocity(region.amplitudeEnvelope),
                filterVelocity: SFZEnvelopeVelocity(region.filterEnvelope),
                pitchVelocity: SFZEnvelopeVelocity(region.pitchEnvelope),
                delayFrames: Int(Double(region.delay) * sampleRate + 0.5), offFast: region.offMode != .normal,
                sustainSwitch: region.sustainSwitch, sostenutoSwitch: region.sostenutoSwitch,
                modulationStart: Int32(modulationStart), modulationCount: Int32(modulations.count - modulationStart),
                hasContinuous: hasContinuous, crossfadeStart: Int32(crossfadeStart),
                crossfadeCount: Int32(crossfades.count - crossfadeStart))
            (plans + index).initialize(to: plan)
        }
        self.modulations = .allocate(capacity: max(1, modulations.count))
        for (index, entry) in modulations.enumerated() { (self.modulations + index).initialize(to: entry) }
        self.crossfades = .allocate(capacity: max(1, crossfades.count))
        for (index, entry) in crossfades.enumerated() { (self.crossfades + index).initialize(to: entry) }
    }

    /// Control thread, once the render thread has let go.
    func deallocate() {
        plans.deallocate()
        velocityGains.deallocate()
        keyGains.deallocate()
        modulations.deallocate()
        crossfades.deallocate()
        curves.deallocate()
    }

    /// A key (or velocity) crossfade alone: the other passed as −1 counts as fully in (no fade).
    /// `pitch_keycenter`, or with `pitch_keycenter=sample` the file's root key (60, SFZ's default key
    /// centre, when it states none).
    static func keycenter(_ region: SFZRegion, rootKeys: [Int]) -> Int {
        guard region.keycenterFromSample, rootKeys.indices.contains(region.sampleIndex) else { return region.keycenter }
        let root = rootKeys[region.sampleIndex]
        return root >= 0 ? root : 60
    }

    static func crossfade(_ region: SFZRegion, key: Int, velocity: Int) -> Float {
        var region = region
        if key < 0 {
            region.crossfadeInKeys = SFZSpan(low: 0, high: 0)
            region.crossfadeOutKeys = SFZSpan(low: 127, high: 127)
        }
        if velocity < 0 {
            region.crossfadeInVelocities = SFZSpan(low: 0, high: 0)
            region.crossfadeOutVelocities = SFZSpan(low: 127, high: 127)
        }
        return SFZGain.crossfade(region, key: max(0, key), velocity: max(0, velocity)) { _ in 0 }
    }

    static func times(_ envelope: SFZRegionEnvelope) -> SFZEnvelopeTimes {
        SFZEnvelopeTimes(
            delay: Double(envelope.delay), start: envelope.start / 100, attack: Double(envelope.attack),
            hold: Double(envelope.hold), decay: Double(envelope.decay), sustain: envelope.sustain / 100,
            release: Double(envelope.release))
    }

    static func lfo(_ lfo: SFZRegionLFO) -> SFZLFO {
        SFZLFO(frequency: Double(lfo.frequency), depth: lfo.depth, delay: Double(lfo.delay), fade: Double(lfo.fade))
    }

    /// The voice's filter for a `fil_type`: the 1- and 2-pole low-, high- and band-passes as they are; the
    /// 4- and 6-pole low- and high-passes as 2-pole ones; the rest (notch, all-pass, peaking, shelves) the
    /// voice does not have: no filter (the library's warning list says so).
    static func filter(_ type: SFZRegionFilterType) -> SFZFilterType {
        switch type {
        case .lpf1p: .lowPass1Pole
        case .hpf1p: .highPass1Pole
        case .lpf2p, .lpf2pSV, .lpf4p, .lpf6p: .lowPass2Pole
        case .hpf2p, .hpf2pSV, .hpf4p, .hpf6p: .highPass2Pole
        case .bpf2p, .bpf2pSV: .bandPass2Pole
        case .bpf1p: .bandPass1Pole
        case .brf2p, .brf2pSV, .brf1p, .apf1p, .pkf2p, .lsh, .hsh, .peq: .none
        }
    }
}

import AulosCore
import AulosDSP

/// The part of a synth voice only a rich patch uses: unison stacks, the sub-oscillator, FM, ring
/// modulation, hard sync, the second (ladder) filter, drive, and a right-hand filter for stereo unison.
/// Plain value inside a voice; render thread.
struct RichVoice: BitwiseCopyable {
    /// Each stack's copies: 32-bit phases, increments, and left/right gains (their place in the stereo
    /// width, scaled so a stack of n is as loud as one).
    var phases1 = SIMD16<UInt32>(repeating: 0)
    var phases2 = SIMD16<UInt32>(repeating: 0)
    var increments1 = SIMD16<UInt32>(repeating: 0)
    var increments2 = SIMD16<UInt32>(repeating: 0)
    var left1 = SIMD16<Float>(repeating: 0)
    var right1 = SIMD16<Float>(repeating: 0)
    var left2 = SIMD16<Float>(repeating: 0)
    var right2 = SIMD16<Float>(repeating: 0)
    var count1 = 1
    var count2 = 1
    /// The count and width the gains were laid out for (0: not yet).
    var layout1 = SIMD2<Float>(repeating: 0)
    var layout2 = SIMD2<Float>(repeating: 0)
    var band1 = 0
    var band2 = 0
    var subPhase: UInt32 = 0
    var subIncrement: UInt32 = 0
    var subBand = 0
    var subLevel: Float = 0
    var ring: Float = 0
    var fm: Float = 0
    var sync = false
    var routing = FilterRouting.off
    var driveGain: Float = 1
    var filterRight = StateVariableFilter()
    var ladderLeft = LadderFilter()
    var ladderRight = LadderFilter()
    /// Osc 2's output (left, right) held back two samples when synced, so a reset can correct the two
    /// samples before it; the correction already due for the next one; and osc 2's first copy's last
    /// value, osc 1's FM input.
    var held2 = SIMD4<Float>(repeating: 0)
    var pending2 = SIMD2<Float>(repeating: 0)
    var modulator: Float = 0
    var memo = RichVoiceMemo()

    @_noAllocation @_noLocks
    init() {}

    /// Spreads the copies' starting phases (a unison stack started in phase sounds like one loud
    /// oscillator until it drifts apart). Copy 0 starts where a plain oscillator does.
    @_noAllocation @_noLocks
    mutating func start(seed: UInt32) {
        var noise = NoiseGenerator(seed: seed)
        for copy in 0..<16 {
            // (Through Int64: noise can reach exactly ±1, and 2³¹ does not fit an Int32.)
            let spread =
                copy == 0 ? UInt32(1 << 30) : UInt32(truncatingIfNeeded: Int64(Double(noise.next()) * 2_147_483_648))
            phases1[copy] = spread
            phases2[copy] = spread &+ 0x1234_5678
        }
        subPhase = 1 << 30
    }
}

/// What a rich voice's last control tick computed its stacks, sub and drive from (as `VoiceControlMemo` for
/// the plain part): each result is a pure function of these inputs, recomputed only when they move, so the
/// output is the same to the bit. NaN (a new voice) never matches.
///
/// Threads: render thread (part of a `RichVoice`).
struct RichVoiceMemo: BitwiseCopyable {
    /// Pitch, copy count, spread and width of each stack.
    var stack1 = SIMD4<Double>(repeating: .nan)
    var stack2 = SIMD4<Double>(repeating: .nan)
    var subPitch = Double.nan
    var drive = Double.nan

    @_noAllocation @_noLocks
    init() {}
}

extension OscillatorSynthKernel {
    /// A rich voice's oscillator stacks, sub, FM, ring, sync, second filter and drive from the patch and
    /// the modulation offsets, at a control tick (or the note's start). `pitch` and `pitch2` are the
    /// oscillators' pitches in note units; `octaves` the filter's movement (envelope, keys, LFO, matrix).
    @_noAllocation @_noLocks
    func updateRichVoice(
        _ voice: UnsafeMutablePointer<SynthVoice>, _ c: SynthControls, pitch: Double, pitch2: Double,
        octaves: Double, modulation: ModulationOffsets
    ) {
        // In place (a rich voice is large: copying it out and back cost more than the work), and each result
        // recomputed only when what it is computed from moved (`RichVoiceMemo`: bit-identical).
        let extraDetune = Double(modulation.unisonDetune) * 100
        voice.pointee.rich.count1 = c.unison1
        voice.pointee.rich.count2 = c.unison2
        Self.stack(
            pitch: pitch, count: c.unison1, spread: max(0, c.detune1 + extraDetune), width: c.width1,
            sampleRate: sampleRate, increments: &voice.pointee.rich.increments1, left: &voice.pointee.rich.left1,
            right: &voice.pointee.rich.right1, band: &voice.pointee.rich.band1, laidOut: &voice.pointee.rich.layout1,
            memo: &voice.pointee.rich.memo.stack1)
        Self.stack(
            pitch: pitch2, count: c.unison2, spread: max(0, c.detune2 + extraDetune), width: c.width2,
            sampleRate: sampleRate, increments: &voice.pointee.rich.increments2, left: &voice.pointee.rich.left2,
            right: &voice.pointee.rich.right2, band: &voice.pointee.rich.band2, laidOut: &voice.pointee.rich.layout2,
            memo: &voice.pointee.rich.memo.stack2)
        if pitch != voice.pointee.rich.memo.subPitch {
            voice.pointee.rich.memo.subPitch = pitch
            voice.pointee.rich.subIncrement = Wavetable.phaseIncrement(
                FastMath.frequency(ofNote: pitch - 12) / sampleRate)
            voice.pointee.rich.subBand = Wavetable.band(forNote: pitch - 12)
        }
        voice.pointee.rich.subLevel = max(0, min(1, c.subLevel + modulation.subLevel))
        voice.pointee.rich.ring = max(0, min(1, c.ringMod + modulation.ringMod))
        voice.pointee.rich.fm = max(0, min(4, c.fmAmount + modulation.fmAmount * 4))
        voice.pointee.rich.sync = c.sync
        voice.pointee.rich.routing = c.filter2Routing
        let drive = max(0, min(36, Double(c.drive) + Double(modulation.drive) * 36))
        if drive != voice.pointee.rich.memo.drive {
            voice.pointee.rich.memo.drive = drive
            voice.pointee.rich.driveGain = Float(FastMath.exp2(drive / 6.020_599_913_279_624))
        }
        voice.pointee.rich.filterRight.copyCoefficients(from: voice.pointee.filter)
        if voice.pointee.rich.routing.isOn {
            let cutoff2 = c.cutoff2 * FastMath.exp2(octaves + Double(modulation.filter2Cutoff) * 8)
            let resonance2 = c.resonance2 + modulation.resonance
            voice.pointee.rich.ladderLeft.setCoefficients(
                cutoff: cutoff2, resonance: resonance2, sampleRate: sampleRate)
            voice.pointee.rich.ladderRight.setCoefficients(
                cutoff: cutoff2, resonance: resonance2, sampleRate: sampleRate)
        }
    }

    /// One unison stack: `count` copies spread evenly over `spread` cents around `pitch` and over `width` of
    /// the stereo field, each at 1/√count so the stack is as loud as one oscillator; the wavetable band
    /// for the highest copy, so none aliases. The copies' frequencies are one exp2 apart, multiplied up
    /// from the lowest; their gains depend only on count and width, so they are kept until those change.
    /// `memo` holds the inputs it was last made from (NaN: never).
    @inline(__always) @_noAllocation @_noLocks
    static func stack(
        pitch: Double, count: Int, spread: Double, width: Float, sampleRate: Double,
        increments: inout SIMD16<UInt32>, left: inout SIMD16<Float>, right: inout SIMD16<Float>, band: inout Int,
        laidOut: inout SIMD2<Float>, memo: inout SIMD4<Double>
    ) {
        // Nothing to do when pitch, count, spread and width are what the stack was last made from.
        let inputs = SIMD4(pitch, Double(count), spread, Double(width))
        guard inputs != memo else { return }
        memo = inputs
        if count == 1 {
            increments[0] = Wavetable.phaseIncrement(FastMath.frequency(ofNote: pitch) / sampleRate)
        } else {
            var cycles = FastMath.frequency(ofNote: pitch - spread / 200) / sampleRate
            let step = FastMath.exp2(spread / 1200 / Double(count - 1))
            for copy in 0..<count {
                increments[copy] = Wavetable.phaseIncrement(cycles)
                cycles *= step
            }
        }
        band = Wavetable.band(forNote: pitch + spread / 200)
        let layout = SIMD2(Float(count), width)
        guard layout != laidOut else { return }
        laidOut = layout
        let scale = Float(1 / FastMath.squareRoot(Double(count)))
        for copy in 0..<count {
            if count == 1 {
                // A single copy stays in the middle, at the voice's full level on both sides.
                (left[copy], right[copy]) = (1, 1)
            } else {
                let place = 0.5 + (Double(copy) / Double(count - 1) - 0.5) * Double(width)
                left[copy] = scale * Float(FastMath.sine(place / 4 + 0.25)) * 1.414_213_56
                right[copy] = scale * Float(FastMath.sine(place / 4)) * 1.414_213_56
            }
        }
    }

    /// Four samples' residuals at a copy's left and right gains, interleaved as the corrections are kept
    /// (two held samples, this one, the next; left then right).
    @inline(__always) @_noAllocation @_noLocks
    static func stereo(_ residuals: SIMD4<Float>, _ gains: SIMD2<Float>) -> SIMD8<Float> {
        let (left, right) = (residuals * gains[0], residuals * gains[1])
        return SIMD8(left[0], right[0], left[1], right[1], left[2], right[2], left[3], right[3])
    }

    /// The residuals of a band-limited unit step at the four samples around it — two before, this one,
    /// the next — when it falls `x` (0…1) of a sample before this one. The step is the integral of the
    /// cubic B-spline on [−2, 2]: S(t) = (2+t)⁴/24 on [−2, −1], 1/2 + (4t − 2t³ − 3t⁴/4)/6 on [−1, 0],
    /// 1 − S(−t) after; the residual is S minus the naive step.
    @inline(__always) @_noAllocation @_noLocks
    static func splineStepResiduals(_ x: Float) -> SIMD4<Float> {
        @inline(__always) func rising(_ t: Float) -> Float {
            // S(t) for t in [−2, 0].
            if t <= -1 {
                let u = 2 + t
                return u * u * u * u / 24
            }
            let t2 = t * t
            return 0.5 + (4 * t - 2 * t2 * t - 0.75 * t2 * t2) / 6
        }
        return SIMD4(rising(x - 2), rising(x - 1), -rising(-x), -rising(-x - 1))
    }

    /// One sample of a naive rising saw (−1…1) whose phase is `phase + offset`, advanced by `increment`;
    /// with `reset`, restarted at phase 0 (+ `offset`) `since` of a sample ago. Adds the band-limiting
    /// residuals of every jump in this sample (its wraps, the reset) to `residuals`; returns the new phase
    /// (without the offset) and the naive value.
    @inline(__always) @_noAllocation @_noLocks
    static func naiveSaw(
        phase: UInt32, increment: UInt32, offset: UInt32, reset: Bool, since: Float,
        residuals: inout SIMD4<Float>
    ) -> (phase: UInt32, value: Float) {
        let scale = 1 / 4_294_967_296.0
        let step = Double(increment) * scale
        var p = Double(phase &+ offset) * scale
        if reset {
            let untilReset = 1 - Double(since)
            if p + step * untilReset >= 1 {
                // Its own wrap came first.
                residuals += splineStepResiduals(Float(1 - (1 - p) / step)) * -2
                p -= 1
            }
            let atReset = p + step * untilReset
            let start = Double(offset) * scale
            residuals += splineStepResiduals(since) * Float(2 * (start - atReset))
            p = start + step * Double(since)
            let newPhase = UInt32(truncatingIfNeeded: Int64(step * Double(since) * 4_294_967_296))
            if p >= 1 {
                residuals += splineStepResiduals(Float((p - 1) / step)) * -2
                p -= 1
            }
            return (newPhase, Float(2 * p - 1))
        }
        p += step
        if p >= 1 {
            residuals += splineStepResiduals(Float((p - 1) / step)) * -2
            p -= 1
        }
        return (phase &+ increment, Float(2 * p - 1))
    }

    /// Adds `count` samples of one stack copy into `left`/`right` at its gains, advancing its phase first
    /// (as the synced path does): the waveform is chosen once for the block.
    @inline(__always) @_noAllocation @_noLocks
    func fillStack(
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int, wave: SynthWaveform,
        band: Int,
        phase: inout UInt32, increment: UInt32, gains: (Float, Float), width: UInt32, noise: inout NoiseGenerator,
        morph position: (frame: Int, fraction: Float)
    ) {
        var p = phase
        let (gainLeft, gainRight) = gains
        switch wave {
        case .saw:
            // Four frames at a time: their phases are p + k·increment (k = 1…4, wrapping as the 32-bit phase
            // does), read and interpolated as `Wavetable.sample(band:phase:)` reads them and added into the
            // output as one vector: the same arithmetic per frame, so the same bits.
            let table = saw.samples + band &* saw.stride
            let offsets = SIMD4<UInt32>(1, 2, 3, 4) &* increment
            let (toLeft, toRight) = (SIMD4(repeating: gainLeft), SIMD4(repeating: gainRight))
            var i = 0
            while i &+ 4 <= count {
                let phases = SIMD4(repeating: p) &+ offsets
                let sample = GroupOscillators.read((table, table, table, table), phases)
                let outLeft = UnsafeMutableRawPointer(left + i)
                let outRight = UnsafeMutableRawPointer(right + i)
                outLeft.storeBytes(
                    of: outLeft.loadUnaligned(as: SIMD4<Float>.self) + sample * toLeft, as: SIMD4<Float>.self)
                outRight.storeBytes(
                    of: outRight.loadUnaligned(as: SIMD4<Float>.self) + sample * toRight, as: SIMD4<Float>.self)
                p = phases[3]
                i &+= 4
            }
            while i < count {
                p &+= increment
                let sample = saw.sample(band: band, phase: p)
                left[i] += sample * gainLeft
                right[i] += sample * gainRight
                i &+= 1
            }
        default:
            for i in 0..<count {
                p &+= increment
                let sample = self.wave(wave, band: band, phase: p, width: width, noise: &noise, morph: position)
                left[i] += sample * gainLeft
                right[i] += sample * gainRight
            }
        }
        phase = p
    }

    /// One sample of a waveform (saw, pulse, triangle, sine, noise) at `phase`.
    @inline(__always) @_noAllocation @_noLocks
    func wave(
        _ shape: SynthWaveform, band: Int, phase: UInt32, width: UInt32, noise: inout NoiseGenerator,
        morph position: (frame: Int, fraction: Float) = (0, 0)
    ) -> Float {
        switch shape {
        case .wavetable where morph != nil:
            let (first, next) = morphPair(position.frame)
            let a = first.sample(band: band, phase: phase)
            return a + (next.sample(band: band, phase: phase) - a) * position.fraction
        case .saw, .wavetable: return saw.sample(band: band, phase: phase)
        case .pulse: return saw.sample(band: band, phase: phase) - saw.sample(band: band, phase: phase &+ width)
        case .triangle: return triangle.sample(band: band, phase: phase)
        case .sine: return triangle.sample(band: WavetableLayout.bandCount - 1, phase: phase) * 1.233_700_550_136_17
        case .noise: return noise.next()
        }
    }

    /// Renders frames [from, to) of a rich voice: both stacks (osc 2 first, so it can be synced to osc 1
    /// and modulate it), the sub, ring and mix, drive, the two filters in their routing, then the
    /// envelopes and gains, in stereo.
    @_noAllocation @_noLocks
    func renderRichVoice(
        _ voice: UnsafeMutablePointer<SynthVoice>, from: Int, to: Int,
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    ) {
        let controls = patch(Int(voice.pointee.channel))
        let count = to - from
        // Four blocks of a control tick (16 frames: `controlInterval`, spelled out because a computed static
        // in another file is opaque to the render-side checker in a debug build).
        let osc1Left = richScratch
        let osc1Right = richScratch + 16
        let osc2Left = richScratch + 32
        let osc2Right = richScratch + 48
        // No sync, no FM: each copy of each stack is a tight loop over the block, its waveform chosen once
        // (in the voice, before it is copied out below).
        let free = !voice.pointee.rich.sync && voice.pointee.rich.fm == 0
        if free { fillRichStacks(voice, controls, count: count, into: richScratch) }
        let c = controls.pointee
        var v = voice.pointee
        var rich = v.rich
        let width = pulseWidthPhase(voice, controls)
        let mix = max(0, min(1, c.mix + v.mixOffset))
        let subWidth: UInt32 = 1 << 31
        var active = true
        if !free {
            for i in 0..<count {
                // Osc 1's first copy is the sync master and FM carrier: where does it wrap this sample?
                let fmShift = rich.fm * rich.modulator
                var master = rich.increments1[0]
                if fmShift != 0 {
                    // Through-zero linear FM: the increment swings by ±fm times itself and may run backwards.
                    let delta = Int64(Float(Int64(master)) * fmShift)
                    master = UInt32(truncatingIfNeeded: Int64(master) + delta)
                }
                let before = rich.phases1[0]
                let after = before &+ master
                let forward = Int32(bitPattern: master) >= 0 || fmShift == 0
                let wrapped = rich.sync && forward && after < before && master != 0
                // The fraction of this sample since the wrap (0…1).
                let sinceWrap: Float = wrapped ? Float(after) / Float(master) : 0
                // Osc 2 (held back two samples when synced, so a reset's correction can reach them).
                var osc2 = SIMD2<Float>(repeating: 0)
                // Corrections for the two held samples, this one and the next, left and right: a reset's jump
                // J is smoothed by the residual of a step integrated from a cubic B-spline (four samples wide,
                // its spectrum sinc⁴), so the jump lands band-limited wherever it falls between samples.
                var correction = SIMD8<Float>(repeating: 0)
                // A synced saw or pulse is computed from its naive shape, every jump in it (its own wraps and
                // the resets) made band-limited by those residuals: the wavetable's own smoothed jump, cut in
                // half by a reset, would leave a kink that aliases.
                let naive = rich.sync && c.wave2.isSawOrPulse
                for copy in 0..<rich.count2 where naive {
                    let increment = rich.increments2[copy]
                    let gains = SIMD2(rich.left2[copy], rich.right2[copy])
                    var residuals = SIMD4<Float>(repeating: 0)
                    let (phase, rising) = Self.naiveSaw(
                        phase: rich.phases2[copy], increment: increment, offset: 0, reset: wrapped, since: sinceWrap,
                        residuals: &residuals)
                    var sample = rising
                    if c.wave2.isPulse {
                        var falling = SIMD4<Float>(repeating: 0)
                        sample -=
                            Self.naiveSaw(
                                phase: rich.phases2[copy], increment: increment, offset: width, reset: wrapped,
                                since: sinceWrap, residuals: &falling
                            ).value
                        residuals -= falling
                    }
                    correction += Self.stereo(residuals, gains)
                    osc2 += sample * gains
                    if copy == 0 { rich.modulator = sample }
                    rich.phases2[copy] = phase
                }
                for copy in 0..<rich.count2 where !naive {
                    let increment = rich.increments2[copy]
                    var phase = rich.phases2[copy] &+ increment
                    let gains = SIMD2(rich.left2[copy], rich.right2[copy])
                    if wrapped {
                        let atWrap = rich.phases2[copy] &+ UInt32(Float(increment) * (1 - sinceWrap))
                        let jump =
                            wave(
                                c.wave2, band: rich.band2, phase: 0, width: width, noise: &v.noise2,
                                morph: (v.morphFrame, v.morphFraction))
                            - wave(
                                c.wave2, band: rich.band2, phase: atWrap, width: width, noise: &v.noise2,
                                morph: (v.morphFrame, v.morphFraction))
                        phase = UInt32(Float(increment) * sinceWrap)
                        let residuals = Self.splineStepResiduals(sinceWrap) * jump
                        correction += Self.stereo(residuals, gains)
                    }
                    let sample = wave(
                        c.wave2, band: rich.band2, phase: phase, width: width, noise: &v.noise2,
                        morph: (v.morphFrame, v.morphFraction))
                    osc2 += sample * gains
                    if copy == 0 { rich.modulator = sample }
                    rich.phases2[copy] = phase
                }
                var o2Left = osc2[0]
                var o2Right = osc2[1]
                if rich.sync {
                    // Out goes the sample from two ago; the held ones and this one take their corrections.
                    let now = osc2 + rich.pending2 + SIMD2(correction[4], correction[5])
                    let older = SIMD2(rich.held2[0], rich.held2[1]) + SIMD2(correction[0], correction[1])
                    let newer = SIMD2(rich.held2[2], rich.held2[3]) + SIMD2(correction[2], correction[3])
                    (o2Left, o2Right) = (older[0], older[1])
                    rich.held2 = SIMD4(newer[0], newer[1], now[0], now[1])
                    rich.pending2 = SIMD2(correction[6], correction[7])
                }
                // Osc 1's stack, with the same FM swing on every copy.
                var o1Left: Float = 0
                var o1Right: Float = 0
                rich.phases1[0] = after
                for copy in 0..<rich.count1 {
                    var increment = rich.increments1[copy]
                    if copy > 0 {
                        if fmShift != 0 {
                            increment = UInt32(
                                truncatingIfNeeded: Int64(increment) + Int64(Float(Int64(increment)) * fmShift))
                        }
                        rich.phases1[copy] = rich.phases1[copy] &+ increment
                    }
                    let sample = wave(
                        c.wave1, band: rich.band1, phase: rich.phases1[copy], width: width, noise: &v.noise,
                        morph: (v.morphFrame, v.morphFraction))
                    o1Left += sample * rich.left1[copy]
                    o1Right += sample * rich.right1[copy]
                }
                osc1Left[i] = o1Left
                osc1Right[i] = o1Right
                osc2Left[i] = o2Left
                osc2Right[i] = o2Right
            }
        }
        // Envelopes at their sustain level stay there until a note-off, which comes between blocks: read once.
        let ampHeld = v.amp.stage == .sustain
        let filterHeld = v.filterEnvelope.stage == .sustain
        if ampHeld { v.amp.level = c.ampShape.sustainLevel }
        if filterHeld { v.filterEnvelope.level = c.filterShape.sustainLevel }
        // The loop's state in locals, so it stays in registers (through `v` and `rich` every access went to memory).
        let (ring, subLevel, driveGain, routing) = (rich.ring, rich.subLevel, rich.driveGain, rich.routing)
        let (mode, fading, fadeStep) = (c.filterMode, v.fading, v.fadeStep)
        let (subIncrement, subBand) = (rich.subIncrement, rich.subBand)
        let (stepLeft, stepRight) = (v.gain.leftStep, v.gain.rightStep)
        var (filterLeft, filterRight) = (v.filter, rich.filterRight)
        var (ladderLeft, ladderRight) = (rich.ladderLeft, rich.ladderRight)
        var (amp, filterEnvelope) = (v.amp, v.filterEnvelope)
        var (gainLeft, gainRight) = (v.gain.left, v.gain.right)
        var (subPhase, fadeGain) = (rich.subPhase, v.fadeGain)
        for i in 0..<count {
            let (o1Left, o1Right, o2Left, o2Right) = (osc1Left[i], osc1Right[i], osc2Left[i], osc2Right[i])
            // Mix, ring, sub.
            var sampleLeft = o1Left + (o2Left - o1Left) * mix
            var sampleRight = o1Right + (o2Right - o1Right) * mix
            if ring > 0 {
                sampleLeft += (o1Left * o2Left * 2 - sampleLeft) * ring
                sampleRight += (o1Right * o2Right * 2 - sampleRight) * ring
            }
            if subLevel > 0 {
                subPhase = subPhase &+ subIncrement
                let sub =
                    saw.sample(band: subBand, phase: subPhase) - saw.sample(band: subBand, phase: subPhase &+ subWidth)
                sampleLeft += sub * subLevel
                sampleRight += sub * subLevel
            }
            if driveGain > 1 {
                sampleLeft = FastMath.saturate(sampleLeft * driveGain)
                sampleRight = FastMath.saturate(sampleRight * driveGain)
            }
            // The filters in their routing.
            var filteredLeft = filterLeft.process(sampleLeft, mode: mode)
            var filteredRight = filterRight.process(sampleRight, mode: mode)
            switch routing {
            case .serial:
                filteredLeft = ladderLeft.process(filteredLeft)
                filteredRight = ladderRight.process(filteredRight)
            case .parallel:
                filteredLeft = (filteredLeft + ladderLeft.process(sampleLeft)) / 2
                filteredRight = (filteredRight + ladderRight.process(sampleRight)) / 2
            case .off:
                break
            }
            if !filterHeld { _ = filterEnvelope.next(c.filterShape) }
            var level = ampHeld ? c.ampShape.sustainLevel : amp.next(c.ampShape)
            if fading {
                level *= fadeGain
                fadeGain -= fadeStep
                if fadeGain <= 0 {
                    active = false
                    break
                }
            }
            gainLeft += stepLeft
            gainRight += stepRight
            left[from + i] += filteredLeft * level * gainLeft
            right[from + i] += filteredRight * level * gainRight
            if !amp.isActive {
                active = false
                break
            }
        }
        (v.filter, rich.filterRight) = (filterLeft, filterRight)
        (rich.ladderLeft, rich.ladderRight) = (ladderLeft, ladderRight)
        (v.amp, v.filterEnvelope) = (amp, filterEnvelope)
        (v.gain.left, v.gain.right) = (gainLeft, gainRight)
        (rich.subPhase, v.fadeGain) = (subPhase, fadeGain)
        v.rich = rich
        v.active = active
        voice.pointee = v
    }
}

import AulosDSP

/// The one place a region and a note become what a voice plays: `parameters` at the note-on (pitch, gain,
/// envelopes, filter, LFOs, what controllers set at the note-on) and `inputs` while it sounds (controller
/// modulation of volume, amplitude, pan, cutoff and pitch, the controller crossfades, and the pitch bend).
///
/// Threads: render thread (pure functions over the plans and the selector's controller values).
enum SFZVoiceMapping {
    /// What region `start.region` plays for its note. `selector` gives the channel's controllers.
    @_noAllocation @_noLocks
    static func parameters(
        _ start: SFZStart, plans: SFZRegionPlans, selector: UnsafeMutablePointer<SFZSelector>
    ) -> SFZVoiceParameters {
        let region = Int(start.region)
        let plan = plans.plans[region]
        var parameters = plan.base
        let key = Float(start.key)
        let velocity = Float(start.velocity) / 127
        let channel = Int(start.channel)

        // Pitch: key tracking from the key centre, tune and transpose, velocity tracking.
        parameters.pitchCents = Double(
            (key - plan.keycenter) * plan.pitchKeytrack + plan.tune + plan.pitchVeltrack * velocity)

        // Gain: volume, velocity (curve, tracking, crossfade), key (tracking, crossfade), a release region's
        // rt_decay. (`amplitude`, its controllers and the controller crossfades go through the inputs: they
        // follow the controllers while the voice sounds.)
        var gain = plan.volumeGain * plans.velocityGains[region * 128 + Int(start.velocity)]
        gain *= plans.keyGains[region * 128 + Int(start.key)] * start.gain
        parameters.gain = gain

        // Envelopes: velocity's share, then controllers' (at the note-on).
        // (Local copies: one inout access to `parameters` at a time.)
        var (amplitudeTimes, filterTimes, pitchTimes) = (
            parameters.amplitudeEnvelope, parameters.filterEnvelope, parameters.pitchEnvelope
        )
        var (noDepth, filterDepth, pitchDepth) = (
            Float(0), parameters.filterEnvelopeDepth, parameters.pitchEnvelopeDepth
        )
        apply(plan.amplitudeVelocity, velocity, to: &amplitudeTimes, depth: &noDepth)
        apply(plan.filterVelocity, velocity, to: &filterTimes, depth: &filterDepth)
        apply(plan.pitchVelocity, velocity, to: &pitchTimes, depth: &pitchDepth)

        // Filter: key and velocity tracking, in cents.
        if plan.hasFilter {
            let cents = (key - plan.filterKeycenter) * plan.filterKeytrack + plan.filterVeltrack * velocity
            parameters.cutoff *= FastMath.exp2(Double(cents) / 1200)
        }

        // What controllers set once, at the note-on.
        for index in Int(plan.modulationStart)..<Int(plan.modulationStart + plan.modulationCount) {
            let entry = plans.modulations[index]
            guard entry.target > SFZModulationTarget.lastContinuous else { continue }
            let raw = selector.pointee.controller(channel: channel, Int(entry.controller))
            let amount = entry.depth * plans.curves[Int(entry.curve) * 128 + Int(raw)]
            if entry.target >= SFZModulationTarget.firstEnvelopeStage {
                let code = Int(entry.target &- SFZModulationTarget.firstEnvelopeStage)
                // Envelope controls scale linearly with the controller (v1: the amount at 127).
                let scaled = entry.depth * Float(raw) / 127
                switch code / 8 {
                case 0: addStage(code % 8, scaled, to: &amplitudeTimes, depth: &noDepth)
                case 1: addStage(code % 8, scaled, to: &filterTimes, depth: &filterDepth)
                default: addStage(code % 8, scaled, to: &pitchTimes, depth: &pitchDepth)
                }
                continue
            }
            // (Raw values: an enum's init(rawValue:) is out of the real-time checker's sight.)
            switch entry.target {
            case 5: parameters.width += amount / 100  // width
            case 6: parameters.position += amount / 100  // position
            case 7: parameters.resonance += amount  // resonance
            case 8: parameters.amplitudeLFO.depth += amount
            case 9: parameters.amplitudeLFO.frequency += Double(amount)
            case 10: parameters.filterLFO.depth += amount
            case 11: parameters.filterLFO.frequency += Double(amount)
            case 12: parameters.pitchLFO.depth += amount
            case 13: parameters.pitchLFO.frequency += Double(amount)
            default: break
            }
        }
        (parameters.amplitudeEnvelope, parameters.filterEnvelope, parameters.pitchEnvelope) = (
            amplitudeTimes, filterTimes, pitchTimes
        )
        (parameters.filterEnvelopeDepth, parameters.pitchEnvelopeDepth) = (filterDepth, pitchDepth)
        parameters.width = max(-1, min(1, parameters.width))
        parameters.position = max(-1, min(1, parameters.position))
        parameters.resonance = max(0, min(40, parameters.resonance))
        parameters.amplitudeLFO.frequency = max(0, parameters.amplitudeLFO.frequency)
        parameters.filterLFO.frequency = max(0, parameters.filterLFO.frequency)
        parameters.pitchLFO.frequency = max(0, parameters.pitchLFO.frequency)
        return parameters
    }

    /// What the channel's controllers and bend (−8192…8191) make of a sounding voice of `region`: volume
    /// (`volume_onccN` in dB, and `amplitude` with `amplitude_onccN` and the controller crossfades multiplying
    /// it, as a dB change), pan, cutoff and pitch (`*_onccN`), and the bend through `bend_up`/`bend_down`.
    @_noAllocation @_noLocks
    static func inputs(
        region: Int32, channel: Int, bend: Int, plans: SFZRegionPlans, selector: UnsafeMutablePointer<SFZSelector>
    ) -> SFZVoiceInputs {
        let plan = plans.plans[Int(region)]
        var inputs = SFZVoiceInputs()
        var amplitude = plan.amplitude
        inputs.pitch = bend >= 0 ? Float(bend) / 8191 * plan.bendUp : Float(-bend) / 8192 * plan.bendDown
        if plan.hasContinuous {
            for index in Int(plan.modulationStart)..<Int(plan.modulationStart + plan.modulationCount) {
                let entry = plans.modulations[index]
                guard entry.target <= SFZModulationTarget.lastContinuous else { continue }
                let raw = selector.pointee.controller(channel: channel, Int(entry.controller))
                let amount = entry.depth * plans.curves[Int(entry.curve) * 128 + Int(raw)]
                switch entry.target {
                case 0: inputs.volume += amount  // volume
                case 1: amplitude *= amount / 100  // amplitude
                case 2: inputs.pan += amount / 100  // pan
                case 3: inputs.cutoff += amount  // cutoff
                default: inputs.pitch += amount  // pitch
                }
            }
        }
        // The controller crossfades (`xfin_loccN`…, `xf_cccurve`): a sustained note fades between its layers
        // as the controller moves (a dynamics crossfade on the modulation wheel).
        for index in Int(plan.crossfadeStart)..<Int(plan.crossfadeStart + plan.crossfadeCount) {
            let fade = plans.crossfades[index]
            let value = Int(selector.pointee.controller(channel: channel, Int(fade.controller)))
            let (low, high) = (Int(fade.low), Int(fade.high))
            var fraction: Float
            if fade.fadesIn {
                fraction = value < low ? 0 : value >= high ? 1 : Float(value - low) / Float(high - low)
            } else {
                fraction = value <= low ? 1 : value >= high ? 0 : 1 - Float(value - low) / Float(high - low)
            }
            if fade.power { fraction = Float(FastMath.squareRoot(Double(fraction))) }
            amplitude *= fraction
        }
        // 20·log10(amplitude) = 20·log10(2)·log2(amplitude); silence below −144 dB.
        inputs.volume += amplitude > 6.3e-8 ? 6.020_599_913 * log2(amplitude) : -144
        inputs.pan = max(-2, min(2, inputs.pan))
        return inputs
    }

    /// log₂ of a positive normal float from its bits: the exponent, and the mantissa's log through a quintic
    /// fitted by least squares (error under 0.001 dB as a gain). FastMath's is not inlinable, so the real-time
    /// checker cannot see through it.
    @inline(__always) @_noAllocation @_noLocks
    static func log2(_ x: Float) -> Float {
        let bits = x.bitPattern
        let exponent = Float(Int32(bitPattern: (bits >> 23) & 0xFF) - 127)
        let m = Float(bitPattern: (bits & 0x007F_FFFF) | 0x3F80_0000) - 1  // mantissa − 1, in [0, 1)
        let polynomial = -0.194_390_43 + m * 0.045_870_75
        return exponent + m * (1.441_825_12 + m * (-0.708_674_94 + m * (0.415_397_77 + m * polynomial)))
    }

    @_noAllocation @_noLocks
    static func apply(
        _ velocity: SFZEnvelopeVelocity, _ amount: Float, to times: inout SFZEnvelopeTimes,
        depth: inout Float
    ) {
        times.delay = max(0, times.delay + Double(velocity.delay * amount))
        times.attack = max(0, times.attack + Double(velocity.attack * amount))
        times.hold = max(0, times.hold + Double(velocity.hold * amount))
        times.decay = max(0, times.decay + Double(velocity.decay * amount))
        times.sustain = max(0, min(1, times.sustain + velocity.sustain * amount / 100))
        times.release = max(0, times.release + Double(velocity.release * amount))
        depth += velocity.depth * amount
    }

    /// Adds `amount` to stage `stage` (`SFZEnvelopeStage`'s order: delay, start, attack, hold, decay,
    /// sustain, release, depth): seconds, % for start and sustain, cents for depth.
    @_noAllocation @_noLocks
    static func addStage(
        _ stage: Int, _ amount: Float, to times: inout SFZEnvelopeTimes, depth: inout Float
    ) {
        switch stage {
        case 0: times.delay = max(0, times.delay + Double(amount))
        case 1: times.start = max(0, min(1, times.start + amount / 100))
        case 2: times.attack = max(0, times.attack + Double(amount))
        case 3: times.hold = max(0, times.hold + Double(amount))
        case 4: times.decay = max(0, times.decay + Double(amount))
        case 5: times.sustain = max(0, min(1, times.sustain + amount / 100))
        case 6: times.release = max(0, times.release + Double(amount))
        default: depth += amount
        }
    }
}

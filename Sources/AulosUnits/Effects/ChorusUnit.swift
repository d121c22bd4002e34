import AulosCore
import AulosDSP

#if canImport(Glibc)
import Glibc
#endif

/// A stereo chorus and ensemble, and a flanger as a mode (`aufx/chor/Auls`). Each of up to four voices per
/// channel reads the input back through a delay swept by a sine LFO, the voices spread evenly in phase; the
/// right channel's LFOs run a quarter cycle (× width) behind the left's, which is what makes it wide.
/// Chorus sweeps around 10 ms, the flanger around 1 ms with feedback. Parameters: mode, rate, depth,
/// voices, feedback, width, dry/wet mix.
///
/// Every change is smooth: gains and the feedback glide (5 ms), a voice switched on or off fades in or out,
/// and a mode change slides the delay instead of jumping. Memory is allocated when the unit is initialized,
/// for the longest sweep at 192 kHz.
///
/// Threads: control side as for every unit; `ChorusKernel` runs on the render thread.
public final class ChorusUnit: StereoEffectUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .effect, subtype: "chor", manufacturer: .aulos)

    public enum Parameter: UInt32, CaseIterable, Sendable {
        case mode = 0
        case rate, depth, voices, feedback, width, mix

        public var id: ParameterID { ParameterID(rawValue) }
    }

    static let longestMilliseconds = 32.0

    static let definitions: [ParameterInfo] = [
        ParameterInfo(
            id: Parameter.mode.id, name: "Mode", unit: .indexed, range: 0...1, defaultValue: 0,
            valueNames: ["chorus", "flanger"]),
        ParameterInfo(id: Parameter.rate.id, name: "Rate", unit: .hertz, range: 0.02...10, defaultValue: 0.6),
        ParameterInfo(id: Parameter.depth.id, name: "Depth", unit: .milliseconds, range: 0...20, defaultValue: 3),
        ParameterInfo(id: Parameter.voices.id, name: "Voices", unit: .indexed, range: 1...4, defaultValue: 2),
        ParameterInfo(id: Parameter.feedback.id, name: "Feedback", unit: .percent, range: -95...95, defaultValue: 0),
        ParameterInfo(id: Parameter.width.id, name: "Width", unit: .generic, range: 0...1, defaultValue: 1),
        ParameterInfo(id: Parameter.mix.id, name: "Dry/Wet Mix", unit: .percent, range: 0...100, defaultValue: 50),
    ]

    public static let presets: [(name: String, values: [Parameter: Float])] = [
        ("Chorus", [.mode: 0, .rate: 0.6, .depth: 3, .voices: 2, .feedback: 0, .width: 1, .mix: 50]),
        ("Ensemble", [.mode: 0, .rate: 0.35, .depth: 6, .voices: 4, .feedback: 0, .width: 1, .mix: 60]),
        ("Slow Shimmer", [.mode: 0, .rate: 0.12, .depth: 8, .voices: 3, .feedback: 20, .width: 1, .mix: 45]),
        ("Flanger", [.mode: 1, .rate: 0.25, .depth: 2, .voices: 1, .feedback: 70, .width: 0.6, .mix: 50]),
        ("Jet Flanger", [.mode: 1, .rate: 0.08, .depth: 4, .voices: 1, .feedback: 88, .width: 0.3, .mix: 55]),
        // FluidSynth's default chorus (3 voices, 0.3 Hz, 8 ms depth), all wet: for a return bus.
        ("FluidSynth", [.mode: 0, .rate: 0.3, .depth: 8, .voices: 3, .feedback: 0, .width: 1, .mix: 100]),
    ]

    public init() {
        super.init(
            description: Self.componentDescription, name: "Aulos: Chorus", parameters: Self.definitions,
            presets: Self.presets.map { ($0.name, $0.values.parameterValues) })
    }

    /// The longest a sound can linger: the sweep's delay, or with feedback the time it takes to fall 60 dB.
    public override var tailTime: Double {
        let feedback = Double(abs((try? getParameter(Parameter.feedback.id)) ?? 0)) / 100
        let delay = Self.longestMilliseconds / 1000
        return feedback < 0.01 ? delay : delay * min(1000, 3 / -log10(feedback))
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = try checkedStereoFormat()
        let (left, right, memory) = Self.stereoDelayLines(
            seconds: Self.longestMilliseconds / 1000, sampleRate: input.sampleRate)
        let sweeps = UnsafeMutablePointer<Float>.allocate(capacity: 16)
        sweeps.initialize(repeating: 0, count: 16)
        let kernel = ChorusKernel(
            parameters: renderParameters, left: left, right: right, sampleRate: Float(input.sampleRate),
            sweeps: sweeps)
        return UnitKernel.make(kernel, render: ChorusKernel.render) { _ in
            memory.deallocate()
            sweeps.deallocate()
        }
    }
}

/// Render side of the chorus.
///
/// Threads: render thread only.
struct ChorusKernel {
    typealias P = ChorusUnit.Parameter
    let parameters: ParameterKernel
    var left: DelayLine
    var right: DelayLine
    let sampleRate: Float
    /// The LFO's phase (cycles), the sweep's centre in samples (gliding on a mode change), each voice's gain
    /// (fading as voices come and go), and the last wet output per channel (the feedback).
    var phase = 0.0
    /// Per voice and side, the sweep's value now and its step per sample: the LFO is evaluated every 16
    /// samples and followed linearly between (a straight line through a sine below 10 Hz differs from it by
    /// less than 0.01 % of the depth), instead of eight sines a sample.
    let sweeps: UnsafeMutablePointer<Float>
    var sweepCountdown = 0
    static let sweepPeriod = 16
    var base: Float = -1
    var voiceGain: (Float, Float, Float, Float) = (1, 0, 0, 0)
    var feedbackLeft: Float = 0
    var feedbackRight: Float = 0
    /// Resting once the input has been silent past the longest sweep's delay (and, with feedback, its
    /// repeats' fall to −140 dB): worked out again whenever the feedback changes.
    var rest = TailRest()
    var restFrames = 0
    var restFeedback: Float = .nan
    /// `ChorusUnit.longestMilliseconds` in seconds, as the render thread reads it (a computed constant).
    static var longestSeconds: Double { 0.032 }

    init(
        parameters: ParameterKernel, left: DelayLine, right: DelayLine, sampleRate: Float,
        sweeps: UnsafeMutablePointer<Float>
    ) {
        self.parameters = parameters
        self.sweeps = sweeps
        self.left = left
        self.right = right
        self.sampleRate = sampleRate
    }

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: ChorusKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    @inline(__always) @_noAllocation @_noLocks
    static func fade(_ gain: Float, on: Bool) -> Float {
        on ? min(1, gain + 1.0 / 1024) : max(0, gain - 1.0 / 1024)
    }

    @_noAllocation @_noLocks
    mutating func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let status = RenderInputs.pullInPlace(
            inputs, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: io)
        if status != 0 { return status }
        parameters.beginSlice()
        let leftSamples = io.pointee.floatChannel(0)
        let rightSamples = io.pointee.floatChannel(1)
        let perMillisecond = sampleRate / 1000
        rest.beginSlice()
        for frame in 0..<frameCount {
            parameters.applyEvents(dueAt: frame)
            let mode = Int(parameters.next(Int(P.mode.rawValue)))
            let rate = Double(parameters.next(Int(P.rate.rawValue)))
            let depth = parameters.next(Int(P.depth.rawValue)) * perMillisecond
            let voices = Int(parameters.next(Int(P.voices.rawValue)))
            let feedback = parameters.next(Int(P.feedback.rawValue)) / 100
            let width = parameters.next(Int(P.width.rawValue))
            let wet = parameters.next(Int(P.mix.rawValue)) / 100
            // The sweep's centre slides (a sixteenth of a sample per sample) when the mode changes.
            // The centre of the sweep: around 10 ms for chorus, 1 ms for the flanger.
            let target = (mode == 1 ? 1 : 10) * perMillisecond
            base = base < 0 ? target : Slew.step(base, toward: target, by: 1.0 / 16)
            voiceGain = (
                Self.fade(voiceGain.0, on: true), Self.fade(voiceGain.1, on: voices >= 2),
                Self.fade(voiceGain.2, on: voices >= 3), Self.fade(voiceGain.3, on: voices >= 4)
            )
            let (dryLeft, dryRight) = (leftSamples[frame], rightSamples[frame])
            if feedback != restFeedback {
                restFeedback = feedback
                let gain = Double(feedback)
                let repeats = TailRest.repeatsToFall140dB(feedback: gain)
                restFrames = TailRest.restFrames(
                    rt60: 0, delay: Self.longestSeconds * repeats, sampleRate: Double(sampleRate))
            }
            // Resting: no sweep moves, nothing is written or read; the output is the silent input.
            if rest.rests(dryLeft, dryRight, restFrames: restFrames) { continue }
            // 1e-25: the feedback path never decays into denormal numbers.
            left.write(dryLeft + feedback * feedbackLeft + 1e-25)
            right.write(dryRight + feedback * feedbackRight + 1e-25)
            if sweepCountdown == 0 {
                // Values at this sample and 16 samples on, for each voice (left, right): slopes between.
                sweepCountdown = Self.sweepPeriod
                let ahead = rate * Double(Self.sweepPeriod) / Double(sampleRate)
                for voice in 0..<4 {
                    for side in 0..<2 {
                        let at = phase + Double(voice) / 4 + (side == 1 ? 0.25 * Double(width) : 0)
                        let now = Float(FastMath.sine(at))
                        let next = Float(FastMath.sine(at + ahead))
                        sweeps[4 * voice + 2 * side] = now
                        sweeps[4 * voice + 2 * side + 1] = (next - now) / Float(Self.sweepPeriod)
                    }
                }
                phase += ahead
                if phase >= 1 { phase -= Double(Int(phase)) }
            }
            sweepCountdown -= 1
            var sumLeft: Float = 0
            var sumRight: Float = 0
            var totalGain: Float = 0
            for voice in 0..<4 {
                let gain =
                    voice == 0 ? voiceGain.0 : voice == 1 ? voiceGain.1 : voice == 2 ? voiceGain.2 : voiceGain.3
                if gain == 0 { continue }
                let sweepLeft = sweeps[4 * voice]
                let sweepRight = sweeps[4 * voice + 2]
                let longest = Float(left.longestDelay - 1)
                let delayLeft = min(longest, max(1, base + depth * 0.5 * (1 + sweepLeft)))
                let delayRight = min(longest, max(1, base + depth * 0.5 * (1 + sweepRight)))
                sumLeft += gain * left.read(fractional: delayLeft)
                sumRight += gain * right.read(fractional: delayRight)
                totalGain += gain
            }
            for voice in 0..<4 {
                sweeps[4 * voice] += sweeps[4 * voice + 1]
                sweeps[4 * voice + 2] += sweeps[4 * voice + 3]
            }
            // Voices sum to a constant level however many play.
            let scale = 1 / Float(FastMath.squareRoot(Double(max(1, totalGain))))
            let wetLeft = sumLeft * scale
            let wetRight = sumRight * scale
            feedbackLeft = wetLeft
            feedbackRight = wetRight
            leftSamples[frame] = dryLeft + wet * (wetLeft - dryLeft)
            rightSamples[frame] = dryRight + wet * (wetRight - dryRight)
        }
        parameters.endSlice(frameCount: frameCount)
        rest.endSlice(frameCount: frameCount, flags: flags)
        return 0
    }
}

import AulosCore
import AulosDSP

/// An algorithmic reverb (`aufx/rvrb/Auls`): the eight-line feedback delay network described at
/// `FeedbackDelayNetwork` (zita-rev1's family: exact decay times, frequency-dependent loss, modulated
/// lines, decorrelated outputs). Stereo in, stereo out. Parameters: decay (RT60), pre-delay, size, damping,
/// diffusion, modulation, width, low cut and dry/wet mix (100 % wet by default: a return bus's reverb);
/// factory presets Room, Hall, Plate, Chamber, Cathedral and FluidSynth (the decay of FluidSynth's default
/// reverb, measured). `TailTime` is the pre-delay plus the time to fall 90 dB.
///
/// Parameter changes glide; the network's coefficients follow every 16 frames of absolute time, so the
/// output does not depend on how the render was sliced. Memory is allocated when the unit is initialized,
/// for the longest delays at 192 kHz.
///
/// Threads: control side as for every unit; `ReverbKernel` runs on the render thread.
public final class ReverbUnit: StereoEffectUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .effect, subtype: "rvrb", manufacturer: .aulos)

    public enum Parameter: UInt32, CaseIterable, Sendable {
        case decay = 0
        case preDelay, size, damping, diffusion, modulation, width, lowCut, mix

        public var id: ParameterID { ParameterID(rawValue) }
    }

    static let definitions: [ParameterInfo] = [
        ParameterInfo(id: Parameter.decay.id, name: "Decay Time", unit: .seconds, range: 0.1...30, defaultValue: 2),
        ParameterInfo(
            id: Parameter.preDelay.id, name: "Pre-delay", unit: .milliseconds, range: 0...500, defaultValue: 10),
        ParameterInfo(id: Parameter.size.id, name: "Size", unit: .generic, range: 0.25...2, defaultValue: 1),
        ParameterInfo(
            id: Parameter.damping.id, name: "Damping", unit: .generic, range: 0.05...1,
            defaultValue: 0.5),
        ParameterInfo(id: Parameter.diffusion.id, name: "Diffusion", unit: .generic, range: 0...1, defaultValue: 0.7),
        ParameterInfo(id: Parameter.modulation.id, name: "Modulation", unit: .generic, range: 0...1, defaultValue: 0.3),
        ParameterInfo(id: Parameter.width.id, name: "Width", unit: .generic, range: 0...1, defaultValue: 1),
        ParameterInfo(id: Parameter.lowCut.id, name: "Low Cut", unit: .hertz, range: 10...1000, defaultValue: 40),
        ParameterInfo(id: Parameter.mix.id, name: "Dry/Wet Mix", unit: .percent, range: 0...100, defaultValue: 100),
    ]

    /// The factory presets: each sets every parameter but the mix.
    public static let presets: [(name: String, values: [Parameter: Float])] = [
        (
            "Room",
            [
                .decay: 0.6, .preDelay: 4, .size: 0.45, .damping: 0.45, .diffusion: 0.6, .modulation: 0.2,
                .width: 0.8, .lowCut: 60,
            ]
        ),
        (
            "Hall",
            [
                .decay: 2.4, .preDelay: 22, .size: 1.3, .damping: 0.5, .diffusion: 0.75, .modulation: 0.35,
                .width: 1, .lowCut: 40,
            ]
        ),
        (
            "Plate",
            [
                .decay: 1.8, .preDelay: 0, .size: 0.7, .damping: 0.8, .diffusion: 1, .modulation: 0.5,
                .width: 1, .lowCut: 80,
            ]
        ),
        (
            "Chamber",
            [
                .decay: 1.2, .preDelay: 8, .size: 0.7, .damping: 0.55, .diffusion: 0.7, .modulation: 0.25,
                .width: 0.9, .lowCut: 50,
            ]
        ),
        (
            "Cathedral",
            [
                .decay: 6.5, .preDelay: 45, .size: 2, .damping: 0.4, .diffusion: 0.8, .modulation: 0.4,
                .width: 1, .lowCut: 30,
            ]
        ),
        // FluidSynth 2.3's default reverb (room size 0.2, damping 0, width 0.5, level 0.9), measured on
        // `fluidsynth -F` renders at 48 kHz by Schroeder integration: RT60 0.96 s at every frequency (no
        // damping), first reflection 54.5 ms in (its lines are 2,625–4,924 samples: size 1.3 and 13 ms here),
        // L/R correlation 0.6 (width 0.5).
        (
            "FluidSynth",
            [
                .decay: 0.96, .preDelay: 13, .size: 1.3, .damping: 1, .diffusion: 0.5, .modulation: 0.2,
                .width: 0.5, .lowCut: 20,
            ]
        ),
    ]

    public init() {
        super.init(
            description: Self.componentDescription, name: "Aulos: Reverb", parameters: Self.definitions,
            presets: Self.presets.map { ($0.name, $0.values.parameterValues) })
    }

    public override var tailTime: Double {
        let decay = Double((try? getParameter(Parameter.decay.id, scope: .global, element: 0)) ?? 2)
        let preDelay = Double((try? getParameter(Parameter.preDelay.id, scope: .global, element: 0)) ?? 0)
        return preDelay / 1000 + decay * 1.5
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = try checkedStereoFormat()
        let kernel = ReverbKernel(
            parameters: renderParameters, network: FeedbackDelayNetwork(sampleRate: input.sampleRate))
        return UnitKernel.make(kernel, render: ReverbKernel.render) { $0.network.deallocate() }
    }
}

/// Render side of the reverb.
///
/// Threads: render thread only.
struct ReverbKernel {
    let parameters: ParameterKernel
    var network: FeedbackDelayNetwork
    var configured = false
    /// Resting once the input has been silent past the tail; the rest time follows the decay and
    /// pre-delay at the 16-frame ticks (never before the first).
    var rest = TailRest()
    var restFrames = Int.max

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: ReverbKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    /// The settings the parameters ask for now.
    @_noAllocation @_noLocks
    func settings() -> FeedbackDelayNetwork.Settings {
        typealias P = ReverbUnit.Parameter
        var settings = FeedbackDelayNetwork.Settings()
        settings.decay = Double(parameters.value(Int(P.decay.rawValue)))
        settings.preDelay = Double(parameters.value(Int(P.preDelay.rawValue))) / 1000
        settings.size = Double(parameters.value(Int(P.size.rawValue)))
        settings.damping = Double(parameters.value(Int(P.damping.rawValue)))
        settings.diffusion = Double(parameters.value(Int(P.diffusion.rawValue)))
        settings.modulation = Double(parameters.value(Int(P.modulation.rawValue)))
        settings.lowCut = Double(parameters.value(Int(P.lowCut.rawValue)))
        return settings
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
        if !configured {
            network.configure(settings(), immediately: true)
            configured = true
        }
        let left = io.pointee.floatChannel(0)
        let right = io.pointee.floatChannel(1)
        let widthSlot = Int(ReverbUnit.Parameter.width.rawValue)
        let mixSlot = Int(ReverbUnit.Parameter.mix.rawValue)
        let start = timeStamp.pointee.sampleTime
        rest.beginSlice()
        var frame = 0
        // In segments that end at every 16th frame of absolute time (where the coefficients follow the
        // parameters) and at scheduled parameter events.
        while frame < frameCount {
            parameters.applyEvents(dueAt: frame)
            let absolute = start + Int64(frame)
            if absolute & 15 == 0 {
                let wanted = settings()
                if !(wanted == network.settings) { network.configure(wanted) }
                // After the pre-delay, the diffusers and the longest line (under 0.25 s), the decay.
                restFrames = TailRest.restFrames(
                    rt60: wanted.decay, delay: wanted.preDelay + 0.25, sampleRate: network.sampleRate)
            }
            let end = min(
                frame + 16 - Int(absolute & 15), parameters.nextEventOffset(after: frame, frameCount: frameCount))
            var steady = true
            for slot in 0..<parameters.slotCount where !parameters.isSteady(slot) {
                steady = false
                break
            }
            // Width and mix glide per sample while they move (read once a segment while steady); everything
            // else is read at the ticks.
            let steadyWidth = parameters.value(widthSlot)
            let steadyWet = parameters.value(mixSlot) / 100
            for index in frame..<end {
                var width = steadyWidth
                var wet = steadyWet
                if !steady {
                    width = parameters.next(widthSlot)
                    wet = parameters.next(mixSlot) / 100
                    for slot in 0..<parameters.slotCount where slot != widthSlot && slot != mixSlot {
                        _ = parameters.next(slot)
                    }
                }
                let (dryLeft, dryRight) = (left[index], right[index])
                // Resting: the input is silence, and so stays the output.
                if rest.rests(dryLeft, dryRight, restFrames: restFrames) { continue }
                let (reverbLeft, reverbRight) = network.process(dryLeft, dryRight)
                // Width: the wet signal's side (L − R) scaled, its mid (L + R) kept.
                let mid = (reverbLeft + reverbRight) * 0.5
                let side = (reverbLeft - reverbRight) * 0.5 * width
                left[index] = dryLeft + wet * (mid + side - dryLeft)
                right[index] = dryRight + wet * (mid - side - dryRight)
            }
            frame = end
        }
        parameters.endSlice(frameCount: frameCount)
        rest.endSlice(frameCount: frameCount, flags: flags)
        return 0
    }
}

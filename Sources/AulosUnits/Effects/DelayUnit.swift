import AulosCore
import AulosDSP

#if canImport(Glibc)
import Glibc
#endif

/// A stereo delay (`aufx/dely/Auls`): a time in milliseconds, or synced to the host's tempo (a note value,
/// straight, dotted or triplet, read from the host's beat-and-tempo callback every slice), feedback through
/// a low-pass (each repeat darker than the last), ping-pong (repeats alternate between the channels), and a
/// dry/wet mix.
///
/// The delay is a whole number of samples, so a time is exact to the sample. When it changes (a new time,
/// a tempo change) the old and new taps crossfade over 20 ms instead of the read position jumping or
/// sliding: no click and no pitch bend. Memory is allocated when the unit is initialized, for
/// `longestSeconds` at 192 kHz.
///
/// Threads: control side as for every unit; `DelayKernel` runs on the render thread.
public final class DelayUnit: StereoEffectUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .effect, subtype: "dely", manufacturer: .aulos)
    public static let longestSeconds = 5.0

    public enum Parameter: UInt32, CaseIterable, Sendable {
        case time = 0
        case sync, syncKind, feedback, damping, pingPong, mix

        public var id: ParameterID { ParameterID(rawValue) }
    }

    /// Note values for `sync` (after "off"), in quarter notes (beats).
    public static let noteValues: [(name: String, beats: Double)] = [
        ("1/1", 4), ("1/2", 2), ("1/4", 1), ("1/8", 0.5), ("1/16", 0.25), ("1/32", 0.125),
    ]

    static let definitions: [ParameterInfo] = [
        ParameterInfo(id: Parameter.time.id, name: "Time", unit: .milliseconds, range: 1...5000, defaultValue: 375),
        ParameterInfo(
            id: Parameter.sync.id, name: "Sync", unit: .indexed, range: 0...6, defaultValue: 0,
            valueNames: ["off"] + noteValues.map(\.name)),
        ParameterInfo(
            id: Parameter.syncKind.id, name: "Sync Kind", unit: .indexed, range: 0...2, defaultValue: 0,
            valueNames: ["straight", "dotted", "triplet"]),
        ParameterInfo(id: Parameter.feedback.id, name: "Feedback", unit: .percent, range: 0...98, defaultValue: 35),
        ParameterInfo(
            id: Parameter.damping.id, name: "Feedback Low-pass", unit: .hertz, range: 200...20_000, defaultValue: 6000),
        ParameterInfo(id: Parameter.pingPong.id, name: "Ping-pong", unit: .boolean, range: 0...1, defaultValue: 0),
        ParameterInfo(id: Parameter.mix.id, name: "Dry/Wet Mix", unit: .percent, range: 0...100, defaultValue: 30),
    ]

    public static let presets: [(name: String, values: [Parameter: Float])] = [
        ("Slapback", [.time: 110, .sync: 0, .feedback: 10, .damping: 5000, .pingPong: 0, .mix: 30]),
        ("Eighth Echo", [.sync: 4, .syncKind: 0, .feedback: 40, .damping: 6000, .pingPong: 0, .mix: 30]),
        ("Dotted Eighth", [.sync: 4, .syncKind: 1, .feedback: 45, .damping: 5000, .pingPong: 0, .mix: 30]),
        ("Ping-pong Quarter", [.sync: 3, .syncKind: 0, .feedback: 50, .damping: 7000, .pingPong: 1, .mix: 35]),
        ("Tape Echo", [.time: 320, .sync: 0, .feedback: 60, .damping: 2500, .pingPong: 0, .mix: 35]),
    ]

    public init() {
        super.init(
            description: Self.componentDescription, name: "Aulos: Delay", parameters: Self.definitions,
            presets: Self.presets.map { ($0.name, $0.values.parameterValues) })
    }

    /// Repeats until they fall 60 dB (feedback f per repeat), at most a minute.
    public override var tailTime: Double {
        let feedback = Double((try? getParameter(Parameter.feedback.id)) ?? 0) / 100
        let repeats = feedback <= 0.001 ? 1 : min(10_000, 1 + 3 / -log10(feedback))
        return min(60, Self.longestSeconds * repeats)
    }

    /// The delay in seconds for a synced note value at `tempo` BPM: a beat is a quarter note; dotted is 3/2,
    /// triplet 2/3 of the straight value. Nil when `sync` is off.
    public static func syncedSeconds(sync: Int, kind: Int, tempo: Double) -> Double? {
        guard sync >= 1, sync <= noteValues.count, tempo > 0 else { return nil }
        return DelayKernel.seconds(beats: noteValues[sync - 1].beats, kind: kind, tempo: tempo)
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = try checkedStereoFormat()
        let (left, right, memory) = Self.stereoDelayLines(seconds: Self.longestSeconds, sampleRate: input.sampleRate)
        let beats = UnsafeMutablePointer<Double>.allocate(capacity: Self.noteValues.count)
        for (index, value) in Self.noteValues.enumerated() { beats[index] = value.beats }
        let kernel = DelayKernel(
            parameters: renderParameters, host: hostCallbackInfo, left: left, right: right, beats: beats,
            sampleRate: input.sampleRate)
        return UnitKernel.make(kernel, render: DelayKernel.render) { _ in
            memory.deallocate()
            beats.deallocate()
        }
    }
}

/// Render side of the delay.
///
/// Threads: render thread only.
struct DelayKernel {
    typealias P = DelayUnit.Parameter
    let parameters: ParameterKernel
    let host: HostCallbackInfo?
    var left: DelayLine
    var right: DelayLine
    /// `DelayUnit.noteValues`' beats, copied where the render thread may read them.
    let beats: UnsafeMutablePointer<Double>
    let sampleRate: Double
    /// The tap being played, the one being faded to (when a fade runs) and how far the fade is (0…1).
    var delay = -1
    var nextDelay = -1
    var fade: Float = 0
    var lowPass: (left: Float, right: Float) = (0, 0)
    /// Resting once the input has been silent past the repeats' fall to −140 dB (set at the 16-frame ticks).
    var rest = TailRest()
    var restFrames = Int.max
    var lowPassCoefficient: Float = 1
    var designedCutoff: Float = -1
    static var fadeStep: Float { 1.0 / 960 }

    init(
        parameters: ParameterKernel, host: HostCallbackInfo?, left: DelayLine, right: DelayLine,
        beats: UnsafeMutablePointer<Double>, sampleRate: Double
    ) {
        self.parameters = parameters
        self.host = host
        self.left = left
        self.right = right
        self.beats = beats
        self.sampleRate = sampleRate
    }

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: DelayKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    /// Seconds of a note value of `beats` quarter notes at `tempo` BPM, straight (kind 0), dotted (1) or
    /// triplet (2): the one formula for the render thread and `DelayUnit.syncedSeconds`.
    @inline(__always) @_noAllocation @_noLocks
    static func seconds(beats: Double, kind: Int, tempo: Double) -> Double {
        let factor = kind == 1 ? 1.5 : kind == 2 ? 2.0 / 3 : 1
        return beats * factor * 60 / tempo
    }

    /// The delay the parameters (and the host's tempo, when synced) ask for, in whole samples.
    @_noAllocation @_noLocks
    func wantedDelay(tempo: Double?) -> Int {
        let sync = Int(parameters.value(Int(P.sync.rawValue)))
        var seconds = Double(parameters.value(Int(P.time.rawValue))) / 1000
        if sync >= 1, sync <= 6, let tempo, tempo > 0 {
            let kind = Int(parameters.value(Int(P.syncKind.rawValue)))
            seconds = Self.seconds(beats: beats[sync - 1], kind: kind, tempo: tempo)
        }
        let samples = Int(seconds * sampleRate + 0.5)  // rounded to the nearest sample (seconds ≥ 0)
        return min(left.longestDelay - 1, max(1, samples))
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
        let tempo = host?.currentBeat()?.tempo
        let leftSamples = io.pointee.floatChannel(0)
        let rightSamples = io.pointee.floatChannel(1)
        let start = timeStamp.pointee.sampleTime
        rest.beginSlice()
        for frame in 0..<frameCount {
            parameters.applyEvents(dueAt: frame)
            // Every 16 frames of absolute time: the delay wanted, and the feedback filter.
            if (start + Int64(frame)) & 15 == 0 || delay < 0 {
                let wanted = wantedDelay(tempo: tempo)
                if delay < 0 {
                    delay = wanted
                } else if wanted != delay && nextDelay < 0 {
                    nextDelay = wanted
                    fade = 0
                }
                // The rest waits for the repeats to fall 140 dB (at most ten minutes).
                let feedback = Double(parameters.value(Int(P.feedback.rawValue)) / 100)
                let repeats = TailRest.repeatsToFall140dB(feedback: feedback)
                let longest = Double(max(delay, nextDelay)) / sampleRate
                restFrames = TailRest.restFrames(rt60: 0, delay: longest * repeats, sampleRate: sampleRate)
                let cutoff = parameters.value(Int(P.damping.rawValue))
                if cutoff != designedCutoff {
                    designedCutoff = cutoff
                    let normalized = min(0.49, Double(cutoff) / sampleRate)
                    lowPassCoefficient = Float(1 - FastMath.exp(-2 * Double.pi * normalized))
                }
            }
            let feedback = parameters.next(Int(P.feedback.rawValue)) / 100
            let pingPong = parameters.next(Int(P.pingPong.rawValue)) >= 0.5
            let wet = parameters.next(Int(P.mix.rawValue)) / 100
            _ = parameters.next(Int(P.time.rawValue))
            _ = parameters.next(Int(P.damping.rawValue))
            let (dryLeft, dryRight) = (leftSamples[frame], rightSamples[frame])
            // Resting: nothing is read, written or filtered, no crossfade moves; the output is the silent input.
            if rest.rests(dryLeft, dryRight, restFrames: restFrames) { continue }
            // The repeat: the current tap, crossfading to the next one while a change runs.
            var repeatLeft = left.read(delay - 1)
            var repeatRight = right.read(delay - 1)
            if nextDelay >= 0 {
                fade = min(1, fade + Self.fadeStep)
                repeatLeft += fade * (left.read(nextDelay - 1) - repeatLeft)
                repeatRight += fade * (right.read(nextDelay - 1) - repeatRight)
                if fade >= 1 {
                    delay = nextDelay
                    nextDelay = -1
                }
            }
            // Each repeat passes the low-pass once; 1e-25 keeps its state out of denormal numbers.
            lowPass.left += lowPassCoefficient * (repeatLeft - lowPass.left) + 1e-25
            lowPass.right += lowPassCoefficient * (repeatRight - lowPass.right) + 1e-25
            if pingPong {
                // The input enters on the left; each repeat crosses to the other side.
                left.write((dryLeft + dryRight) * 0.5 + feedback * lowPass.right)
                right.write(feedback * lowPass.left)
            } else {
                left.write(dryLeft + feedback * lowPass.left)
                right.write(dryRight + feedback * lowPass.right)
            }
            leftSamples[frame] = dryLeft + wet * (repeatLeft - dryLeft)
            rightSamples[frame] = dryRight + wet * (repeatRight - dryRight)
        }
        parameters.endSlice(frameCount: frameCount)
        rest.endSlice(frameCount: frameCount, flags: flags)
        return 0
    }
}

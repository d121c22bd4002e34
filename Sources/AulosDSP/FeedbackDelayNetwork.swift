/// The reverberator behind the reverb unit: an eight-line feedback delay network in the family of Fons
/// Adriaensen's zita-rev1 and Jot's FDNs, fed through a pre-delay, a low cut and two chains of all-pass
/// diffusers (one per input channel).
///
/// Why this design: a feedback delay network with an orthogonal (Hadamard) mixing matrix is lossless apart
/// from the gain set in each line, so the decay time is exact by construction — each line loses 60 dB in
/// `decay` seconds whatever its length (Jot) — and it stays exact when the size changes. Eight lines give
/// a dense, colourless tail at a cost that is constant per sample (no data-dependent work, no noise tables
/// refilled in the callback). Each line's loss filter is a one-pole low-pass whose gain at 0 Hz and at
/// Nyquist give the low- and high-frequency decay times exactly (the damping ratio). Slowly modulated line
/// lengths break up the metallic periodicity of fixed delays (and the cyclic amplitude modulation found in
/// FluidSynth's FDN, FluidSynth #1215). The outputs tap the lines through two orthogonal sign patterns, so
/// left and right are decorrelated.
///
/// Layout, for speed: the eight lines are interleaved (one frame holds a sample of each), so a sample's
/// writes are one vector store and the interpolation and loss filters run on all eight lines at once; the
/// left and right diffuser chains and pre-delays sit side by side the same way. Each line still reads at
/// its own position; the arithmetic, and so the output, is the same as line by line.
///
/// Memory is allocated once, for the longest delays at the rate in use, by the owner; nothing allocates
/// while processing. A tiny constant (far below −300 dB) rides in every loop so the tail never decays into
/// denormal numbers, which are hundreds of times slower to compute on x86.
///
/// Threads: built on the control thread; `process` runs on the render thread.
public struct FeedbackDelayNetwork: @unchecked Sendable {
    public static let lineCount = 8
    /// Line lengths at size 1, in milliseconds: spread over an octave and a half, no two sharing a common
    /// period in the first few hundred milliseconds.
    static let lineMilliseconds: [Double] = [31.7, 37.1, 41.9, 47.3, 53.9, 61.3, 67.7, 79.1]
    /// All-pass diffuser lengths per input channel, in milliseconds (left chain, then right).
    static let diffuserMilliseconds: [Double] = [4.7, 3.6, 12.7, 9.3, 5.1, 3.9, 11.9, 8.8]
    public static let sizeRange: ClosedRange<Double> = 0.25...2
    public static let longestPreDelay = 0.5
    static let modulationMilliseconds = 0.6
    /// The highest sample rate memory is allocated for.
    public static let maximumSampleRate = 192_000.0

    /// What the network is set to; coefficients follow it (see `configure`).
    public struct Settings: Equatable, Sendable {
        /// Seconds for the low frequencies to fall 60 dB (RT60).
        public var decay: Double = 2
        /// Seconds before the first reflection.
        public var preDelay: Double = 0.01
        /// Line lengths relative to the default room, `sizeRange`.
        public var size: Double = 1
        /// High-frequency decay time relative to `decay` (0.05…1; 1: no damping).
        public var damping: Double = 0.5
        /// 0…1: all-pass coefficient of the input diffusers (0…0.75).
        public var diffusion: Double = 0.7
        /// 0…1: depth of the line-length modulation (0…0.6 ms).
        public var modulation: Double = 0.3
        /// Hz: the reverberated signal's low cut.
        public var lowCut: Double = 40

        @inlinable @_noAllocation @_noLocks
        public init() {}

        // Written out so the render thread can compare settings (a synthesized == is opaque to the checker).
        @inlinable @_noAllocation @_noLocks
        public static func == (a: Settings, b: Settings) -> Bool {
            a.decay == b.decay && a.preDelay == b.preDelay && a.size == b.size && a.damping == b.damping
                && a.diffusion == b.diffusion && a.modulation == b.modulation && a.lowCut == b.lowCut
        }
    }

    /// The eight lines, interleaved: frame k of every line together (`lineFrames[k]`, line i at element i),
    /// so the network writes all eight in one vector store; each line reads its own position. All lines
    /// share the capacity of the longest.
    let lineFrames: UnsafeMutablePointer<SIMD8<Float>>
    let lineSamples: UnsafeMutablePointer<Float>
    let lineMask: Int
    let lineSampleCount: Int
    var lineWrite = 0
    /// The two chains of four all-pass diffusers, left and right side by side: stage k's frame j holds the
    /// left and right samples (`diffuserFrames[k × diffuserCapacity + j]`), all stages sharing one write
    /// position; each side reads at its own delay (`diffuserDelays[2k]`, `[2k + 1]`).
    let diffuserFrames: UnsafeMutablePointer<SIMD2<Float>>
    let diffuserDelays: UnsafeMutablePointer<Int>
    let diffuserCapacity: Int
    let diffuserMask: Int
    var diffuserWrite = 0
    /// The pre-delay's frames (left, right), its write position and mask.
    let preDelayFrames: UnsafeMutablePointer<SIMD2<Float>>
    let preDelayCapacity: Int
    let preDelayMask: Int
    var preDelayWrite = 0
    /// The pre-delay's memory as floats (`preDelayFrames`).
    let memory: UnsafeMutablePointer<Float>
    let memoryCount: Int
    /// Per line: the current and target length in samples, the loss filter (gain b, pole a, state), the
    /// modulation phase and its increment per sample.
    let length: UnsafeMutablePointer<Float>
    /// Each line's length at size 1, in samples (`lineMilliseconds` at the sample rate).
    let baseLength: UnsafeMutablePointer<Double>
    let targetLength: UnsafeMutablePointer<Float>
    var lossGain = SIMD8<Float>(repeating: 0)
    var lossPole = SIMD8<Float>(repeating: 0)
    var lossState = SIMD8<Float>(repeating: 0)
    let phase: UnsafeMutablePointer<Double>
    /// Each line's all-pass interpolator state (its last output).
    var interpolation = SIMD8<Float>(repeating: 0)
    let phaseStep: UnsafeMutablePointer<Double>
    /// Each line's modulation offset (samples × depth), refreshed every `modulationPeriod` samples: the LFOs
    /// run below 1 Hz, so a step of at most 0.02 samples every 16 is inaudible, and one sine per line per 16
    /// samples instead of per sample is most of the network's cost saved.
    let wobble: UnsafeMutablePointer<Float>
    var modulationCountdown = 0
    static let modulationPeriod = 16
    /// Each line's read position as the all-pass interpolator uses it (whole samples and coefficient),
    /// recomputed only when a read position moves: at the modulation ticks, and while a length or the
    /// modulation depth glides (`readsMoving`).
    let readWhole: UnsafeMutablePointer<Int>
    var readCoefficient = SIMD8<Float>(repeating: 0)
    var readsMoving = true
    var preDelay: Float = 0
    var targetPreDelay: Float = 0
    var diffusion: Float = 0
    var targetDiffusion: Float = 0
    var modulationDepth: Float = 0
    var targetModulationDepth: Float = 0
    var lowCutPole: Float = 0
    var lowCutLeft = (input: Float(0), output: Float(0))
    var lowCutRight = (input: Float(0), output: Float(0))
    public private(set) var sampleRate: Double
    public private(set) var settings = Settings()

    /// Allocates the network's memory for `sampleRate` (at most `maximumSampleRate`). Control thread.
    public init(sampleRate: Double) {
        self.sampleRate = min(sampleRate, Self.maximumSampleRate)
        // Memory for the rate in use (a new rate re-initializes the unit, which builds a new network): sized
        // for 192 kHz, a rig of many reverbs at 48 kHz took four times the memory it touched.
        let top = self.sampleRate
        let rate = self.sampleRate
        func longestLine(_ rate: Double) -> Int {
            Int(Self.lineMilliseconds.max()! * Self.sizeRange.upperBound * rate / 1000)
                + Int(Self.modulationMilliseconds * rate / 1000) + 2
        }
        let lineCapacity = DelayLine.capacity(forDelay: longestLine(top))
        diffuserCapacity = DelayLine.capacity(forDelay: Int(Self.diffuserMilliseconds.max()! * top / 1000) + 1)
        diffuserMask = DelayLine.capacity(forDelay: Int(Self.diffuserMilliseconds.max()! * rate / 1000) + 1) - 1
        preDelayCapacity = DelayLine.capacity(forDelay: Int(Self.longestPreDelay * top) + 1)
        preDelayMask = DelayLine.capacity(forDelay: Int(Self.longestPreDelay * rate) + 1) - 1
        preDelayFrames = .allocate(capacity: preDelayCapacity)
        preDelayFrames.initialize(repeating: SIMD2(repeating: 0), count: preDelayCapacity)
        // The pre-delay's samples as plain floats, for the subnormal check and clearing.
        memory = UnsafeMutableRawPointer(preDelayFrames).assumingMemoryBound(to: Float.self)
        memoryCount = 2 * preDelayCapacity
        // The lines in their own block, aligned for vector stores; read sample by sample through `lineSamples`.
        lineFrames = .allocate(capacity: lineCapacity)
        lineFrames.initialize(repeating: SIMD8(repeating: 0), count: lineCapacity)
        lineSamples = UnsafeMutableRawPointer(lineFrames).assumingMemoryBound(to: Float.self)
        lineMask = DelayLine.capacity(forDelay: longestLine(rate)) - 1
        lineSampleCount = Self.lineCount * lineCapacity
        diffuserFrames = .allocate(capacity: 4 * diffuserCapacity)
        diffuserFrames.initialize(repeating: SIMD2(repeating: 0), count: 4 * diffuserCapacity)
        diffuserDelays = .allocate(capacity: 8)
        for stage in 0..<4 {
            for side in 0..<2 {
                let milliseconds = Self.diffuserMilliseconds[4 * side + stage]
                diffuserDelays[2 * stage + side] = max(1, Int((milliseconds * self.sampleRate / 1000).rounded()))
            }
        }
        func floats(_ value: Float) -> UnsafeMutablePointer<Float> {
            let pointer = UnsafeMutablePointer<Float>.allocate(capacity: Self.lineCount)
            pointer.initialize(repeating: value, count: Self.lineCount)
            return pointer
        }
        length = floats(0)
        targetLength = floats(0)
        phase = .allocate(capacity: Self.lineCount)
        phaseStep = .allocate(capacity: Self.lineCount)
        wobble = floats(0)
        readWhole = .allocate(capacity: Self.lineCount)
        readWhole.initialize(repeating: 1, count: Self.lineCount)
        baseLength = .allocate(capacity: Self.lineCount)
        for index in 0..<Self.lineCount {
            baseLength[index] = Self.lineMilliseconds[index] * self.sampleRate / 1000
            // Each line's modulation starts at its own phase, at its own rate (0.31…0.87 Hz).
            phase[index] = Double(index) / Double(Self.lineCount)
            phaseStep[index] = (0.31 + 0.08 * Double(index)) * Double(Self.modulationPeriod) / self.sampleRate
        }
        configure(settings, immediately: true)
    }

    /// Frees the memory. Control thread, once, after the render thread has let go.
    public func deallocate() {
        preDelayFrames.deallocate()
        lineFrames.deallocate()
        diffuserFrames.deallocate()
        diffuserDelays.deallocate()
        for pointer in [
            length, targetLength, wobble,
        ] {
            pointer.deallocate()
        }
        readWhole.deallocate()
        phase.deallocate()
        phaseStep.deallocate()
        baseLength.deallocate()
    }

    /// How many values in the network's memory and filter states are subnormal (denormal) numbers: what
    /// the tests check stays zero however long a tail rings out. Control side.
    public func subnormalCount() -> Int {
        var count = 0
        for index in 0..<memoryCount where memory[index].isSubnormal { count += 1 }
        for index in 0..<(4 * diffuserCapacity)
        where diffuserFrames[index][0].isSubnormal || diffuserFrames[index][1].isSubnormal { count += 1 }
        for index in 0..<lineSampleCount where lineSamples[index].isSubnormal { count += 1 }
        for index in 0..<Self.lineCount where lossState[index].isSubnormal || interpolation[index].isSubnormal {
            count += 1
        }
        for value in [lowCutLeft.input, lowCutLeft.output, lowCutRight.input, lowCutRight.output]
        where value.isSubnormal { count += 1 }
        return count
    }

    /// Silences every line (a reset).
    @_noAllocation @_noLocks
    public mutating func clear() {
        memory.update(repeating: 0, count: memoryCount)
        lineSamples.update(repeating: 0, count: lineSampleCount)
        diffuserFrames.update(repeating: SIMD2(repeating: 0), count: 4 * diffuserCapacity)
        lossState = SIMD8(repeating: 0)
        interpolation = SIMD8(repeating: 0)
        lowCutLeft = (0, 0)
        lowCutRight = (0, 0)
    }

    /// Sets the coefficients for `settings`. Line lengths and the pre-delay then glide to their new values
    /// (at most one sample in 16 per sample: a size change mid-tail bends the pitch slightly instead of
    /// clicking); `immediately` jumps (at start-up). Render thread, at control rate.
    @_noAllocation @_noLocks
    public mutating func configure(_ new: Settings, immediately: Bool = false) {
        settings = new
        let rate = sampleRate
        let size = min(Self.sizeRange.upperBound, max(Self.sizeRange.lowerBound, new.size))
        let decay = max(0.05, new.decay)
        let damping = min(1, max(0.02, new.damping))
        // log2(10) × 3: a gain of 10^(-3 L / (rate × decay)) loses 60 dB in `decay` seconds.
        let decibelsPerSample = -3 * 3.321_928_094_887_362 / (rate * decay)
        for index in 0..<Self.lineCount {
            let samples = baseLength[index] * size
            targetLength[index] = Float(samples)
            if immediately { length[index] = Float(samples) }
            // The loss filter b / (1 − a z⁻¹): gain g₀ = b / (1 − a) at 0 Hz, g_π = b / (1 + a) at Nyquist.
            let low = FastMath.exp2(decibelsPerSample * samples)
            let high = FastMath.exp2(decibelsPerSample * samples / damping)
            let ratio = high / low
            let pole = (1 - ratio) / (1 + ratio)
            lossPole[index] = Float(pole)
            lossGain[index] = Float(low * (1 - pole))
        }
        targetPreDelay = Float(min(Self.longestPreDelay, max(0, new.preDelay)) * rate)
        if immediately { preDelay = targetPreDelay }
        // Diffusion and modulation depth glide per sample (set at control rate, a step in either would click:
        // the diffusers' gain scales the signal, and the depth moves every line's read position).
        targetDiffusion = Float(min(1, max(0, new.diffusion)) * 0.75)
        targetModulationDepth = Float(min(1, max(0, new.modulation)) * Self.modulationMilliseconds * rate / 1000)
        if immediately {
            diffusion = targetDiffusion
            modulationDepth = targetModulationDepth
        }
        lowCutPole = Float(1 / (1 + 2 * Double.pi * min(2_000, max(1, new.lowCut)) / rate))
    }

    /// One stereo sample in, the reverberated (wet) stereo sample out.
    @inline(__always) @_noAllocation @_noLocks
    public mutating func process(_ left: Float, _ right: Float) -> (left: Float, right: Float) {
        // Pre-delay, gliding toward its target, as do the diffusion and the modulation depth.
        if preDelay != targetPreDelay { preDelay = Self.glide(preDelay, toward: targetPreDelay) }
        if diffusion != targetDiffusion { diffusion = Self.glide(diffusion, toward: targetDiffusion, by: 1.0 / 4096) }
        if modulationDepth != targetModulationDepth {
            modulationDepth = Self.glide(modulationDepth, toward: targetModulationDepth, by: 1.0 / 256)
            readsMoving = true
        }
        // The pre-delay, left and right side by side: one position, both samples of each frame in one load.
        preDelayWrite = (preDelayWrite &+ 1) & preDelayMask
        preDelayFrames[preDelayWrite] = SIMD2(left, right)
        let whole = Int(preDelay)
        let fraction = preDelay - Float(whole)
        let newerFrame = preDelayFrames[(preDelayWrite &- whole) & preDelayMask]
        let olderFrame = preDelayFrames[(preDelayWrite &- whole &- 1) & preDelayMask]
        let delayedPair = newerFrame + fraction * (olderFrame - newerFrame)
        var inLeft = delayedPair[0]
        var inRight = delayedPair[1]
        // Low cut: a one-pole high-pass per channel. Its decay after the input stops would reach denormal
        // numbers and carry them into the diffusers: a constant far below hearing keeps it off the floor.
        let highLeft = lowCutPole * (lowCutLeft.output + inLeft - lowCutLeft.input) + 1e-25
        lowCutLeft = (inLeft, highLeft)
        let highRight = lowCutPole * (lowCutRight.output + inRight - lowCutRight.input) + 1e-25
        lowCutRight = (inRight, highRight)
        inLeft = highLeft
        inRight = highRight
        // The diffusers, both sides at once: each stage reads its delayed pair, writes input + gain × delayed,
        // and passes on delayed − gain × what it wrote.
        diffuserWrite = (diffuserWrite &+ 1) & diffuserMask
        var diffused = SIMD2(inLeft, inRight)
        let diffuserSamples = UnsafeMutableRawPointer(diffuserFrames).assumingMemoryBound(to: Float.self)
        for stage in 0..<4 {
            let frames = stage &* diffuserCapacity
            let left = diffuserSamples[(frames &+ ((diffuserWrite &- diffuserDelays[2 &* stage]) & diffuserMask)) &* 2]
            let right = diffuserSamples[
                (frames &+ ((diffuserWrite &- diffuserDelays[2 &* stage &+ 1]) & diffuserMask)) &* 2 &+ 1]
            let delayed = SIMD2(left, right)
            let fed = diffused + diffusion * delayed
            diffuserFrames[frames &+ diffuserWrite] = fed
            diffused = delayed - diffusion * fed
        }
        inLeft = diffused[0]
        inRight = diffused[1]
        // Read each line (modulated), through its loss filter.
        if modulationCountdown == 0 {
            modulationCountdown = Self.modulationPeriod
            for index in 0..<Self.lineCount {
                phase[index] += phaseStep[index]
                if phase[index] >= 1 { phase[index] -= 1 }
                wobble[index] = Float(FastMath.sine(phase[index]))
            }
            readsMoving = true
        }
        modulationCountdown -= 1
        if readsMoving {
            readsMoving = false
            for index in 0..<Self.lineCount {
                if length[index] != targetLength[index] {
                    length[index] = Self.glide(length[index], toward: targetLength[index])
                    readsMoving = true
                }
                let delay = length[index] - 1 - modulationDepth + modulationDepth * wobble[index]
                let (whole, coefficient) = DelayLine.allPassPosition(delay)
                readWhole[index] = whole
                readCoefficient[index] = coefficient
            }
        }
        // Each line's two samples around its read position (line i is element i of a frame), then the
        // interpolation and loss filters of all eight at once.
        var newer = SIMD8<Float>(repeating: 0)
        var older = SIMD8<Float>(repeating: 0)
        for index in 0..<Self.lineCount {
            let position = (lineWrite &- readWhole[index]) & lineMask
            newer[index] = lineSamples[position &* 8 &+ index]
            older[index] = lineSamples[((position &- 1) & lineMask) &* 8 &+ index]
        }
        // All-pass interpolation: unlike linear interpolation it loses nothing at high frequencies, which
        // would otherwise shorten the decay a little on every pass (12 % measured).
        interpolation = readCoefficient * (newer - interpolation) + older
        // 1e-25 keeps the loop out of denormals: a constant, so it adds no noise, only a floor near −480 dB.
        lossState = lossGain * interpolation + lossPole * lossState + 1e-25
        let taps = lossState
        let (x0, x1, x2, x3) = (taps[0], taps[1], taps[2], taps[3])
        let (x4, x5, x6, x7) = (taps[4], taps[5], taps[6], taps[7])
        // Two orthogonal sign patterns (rows of an 8 × 8 Hadamard matrix) tap the lines for left and right.
        let outLeft = (x0 - x1 + x2 - x3 + x4 - x5 + x6 - x7) * 0.35
        let outRight = (x0 + x1 - x2 - x3 + x4 + x5 - x6 - x7) * 0.35
        // The Hadamard mix as a fast Walsh–Hadamard transform (three butterfly stages), scaled by 1/√8 so the
        // matrix is orthogonal: the network itself neither gains nor loses energy.
        var a0 = x0 + x1
        var a1 = x0 - x1
        var a2 = x2 + x3
        var a3 = x2 - x3
        var a4 = x4 + x5
        var a5 = x4 - x5
        var a6 = x6 + x7
        var a7 = x6 - x7
        (a0, a2) = (a0 + a2, a0 - a2)
        (a1, a3) = (a1 + a3, a1 - a3)
        (a4, a6) = (a4 + a6, a4 - a6)
        (a5, a7) = (a5 + a7, a5 - a7)
        let scale: Float = 0.353_553_39
        let mixed = (
            (a0 + a4) * scale, (a1 + a5) * scale, (a2 + a6) * scale, (a3 + a7) * scale,
            (a0 - a4) * scale, (a1 - a5) * scale, (a2 - a6) * scale, (a3 - a7) * scale
        )
        // Left feeds the even lines, right the odd ones: all eight written in one store.
        lineWrite = (lineWrite + 1) & lineMask
        lineFrames[lineWrite] = SIMD8(
            mixed.0 + inLeft, mixed.1 + inRight, mixed.2 + inLeft, mixed.3 + inRight, mixed.4 + inLeft,
            mixed.5 + inRight, mixed.6 + inLeft, mixed.7 + inRight)
        return (outLeft, outRight)
    }

    @inline(__always) @_noAllocation @_noLocks
    static func glide(_ value: Float, toward target: Float, by step: Float = 1.0 / 16) -> Float {
        Slew.step(value, toward: target, by: step)
    }
}

import AulosDSP
import AulosRealtime

#if canImport(Glibc)
import Glibc
#endif

/// What every voice of an engine shares while it renders: the interpolator's table, scratch memory, the
/// sample descriptors, the streams, the counters.
///
/// Threads: render thread (made by the engine on the control thread).
struct SFZVoiceContext {
    let interpolator: SFZInterpolator
    let streams: SFZStreams?
    /// `2 × maximumReach` weights, and as many stereo frames gathered across a seam or a ring's wrap.
    let weights: UnsafeMutablePointer<Float>
    let gathered: UnsafeMutablePointer<Float>
    let sampleRate: Double
    let waitsForData: Bool
    /// The inputs' one-pole glide per control block.
    let glide: Float
    /// Frames a stolen or fast-choked voice takes to fade out.
    let fadeFrames: Int
    /// One run's frames (`SFZVoice.blockFrames` each), left and right.
    let runLeft: UnsafeMutablePointer<Float>
    let runRight: UnsafeMutablePointer<Float>
}

/// One voice: a sample played through the interpolator, a filter, three envelopes, three LFOs, gain and
/// pan. Everything that moves is computed once per control block of `blockFrames` frames counted from the
/// voice's own start (so where a render slice ends never changes the sound) and ramped across the block
/// where a step would click (gains); the amplitude envelope runs per frame.
///
/// Threads: render thread (a plain value in the engine's voice table).
struct SFZVoice {
    static var blockFrames: Int { @inline(__always) @_noAllocation @_noLocks get { 16 } }

    var active = false
    /// Counts the starts in this slot: a handle names one of them, a stream request belongs to one.
    var generation: UInt32 = 0
    var parameters: SFZVoiceParameters
    var info: SFZSampleInfo
    var age: UInt64 = 0
    /// Engine frames (absolute) at which the voice starts, releases and starts a fast fade.
    var startAt: Int64 = 0
    var releaseAt: Int64 = .max
    var fadeAt: Int64 = .max

    var position: Double = 0
    var step: Double = 1
    var baseStep: Double = 1
    var reach = 12
    var endFrame = 0
    var loopStart = 0
    var loopEnd = 0
    var loopLength = 1
    var loopActive = false
    var wrapped = false
    var released = false
    var fading = false
    var fadeGain: Float = 1
    var fadeStep: Float = 0

    var amplitude = SFZEnvelope()
    var filterEnvelope = SFZEnvelope()
    var pitchEnvelope = SFZEnvelope()
    var amplitudeLFO = SFZLFOState()
    var filterLFO = SFZLFOState()
    var pitchLFO = SFZLFOState()
    var blockLeft = 0
    var firstBlock = true

    var gainLeft: Float = 0
    var gainRight: Float = 0
    var gainStepLeft: Float = 0
    var gainStepRight: Float = 0
    /// A stereo sample's width as a 2 × 2 mix: out = a·own + b·other (a + b = 1).
    var mixOwn: Float = 1
    var mixOther: Float = 0
    var filterLeft = StateVariableFilter()
    var filterRight = StateVariableFilter()
    var onePoleLeft = SFZOnePole()
    var onePoleRight = SFZOnePole()
    /// The one-pole band-pass's high-pass half.
    var onePoleHighLeft = SFZOnePole()
    var onePoleHighRight = SFZOnePole()
    var resonance: Float = 0

    var inputs = SFZVoiceInputs()
    var smoothed = SFZVoiceInputs()
    /// Inputs that take effect at engine frame `inputsAt`.
    var pendingInputs = SFZVoiceInputs()
    var inputsAt: Int64 = .max

    /// Streaming: this voice reads past its sample's head through its slot's ring.
    var streaming = false
    var slot = 0
    var need = 0
    /// The frame after the last one valid in the ring for this generation (read once per block).
    var streamEnd = 0
    /// Offline, the loader did not bring a frame within the streams' wait limit: the voice waits no more
    /// (its missing frames play silence and are counted), so a fault costs one wait, never a hang.
    var stoppedWaiting = false
    /// Late frames (silence played) since the engine last collected them, and the blocks they fell in.
    var lateFrames = 0
    var lateBlocks = 0
    var lateInBlock = false

    @_noAllocation @_noLocks
    init(info: SFZSampleInfo) {
        parameters = SFZVoiceParameters(sample: SFZSampleID(index: 0))
        self.info = info
    }

    /// A loudness to compare voices by when one must be stolen.
    var loudness: Float {
        @inline(__always) @_noAllocation @_noLocks get { amplitude.level * parameters.gain * fadeGain }
    }

    /// Sets the voice up to play `parameters` from engine frame `at`.
    @_noAllocation @_noLocks
    mutating func start(
        _ parameters: SFZVoiceParameters, info: SFZSampleInfo, at frame: Int64, age: UInt64, slot: Int,
        context: SFZVoiceContext
    ) {
        let rate = context.sampleRate
        self.parameters = parameters
        self.info = info
        self.age = age
        self.slot = slot
        generation &+= 1
        active = true
        startAt = frame
        releaseAt = .max
        fadeAt = .max
        fading = false
        fadeGain = 1
        released = false
        wrapped = false
        blockLeft = 0
        firstBlock = true
        lateFrames = 0
        lateBlocks = 0
        lateInBlock = false
        baseStep = info.sampleRate / rate
        step = baseStep
        let last = info.frames - 1
        endFrame = parameters.end < 0 ? last : min(parameters.end, last)
        let offset = max(0, min(parameters.offset, endFrame))
        position = Double(offset)
        loopStart = parameters.loopStart >= 0 ? parameters.loopStart : max(0, info.loopStart)
        loopEnd = parameters.loopEnd >= 0 ? parameters.loopEnd : (info.loopEnd >= 0 ? info.loopEnd : endFrame)
        loopEnd = min(loopEnd, last)
        loopLength = max(1, loopEnd - loopStart + 1)
        let loops: Bool
        switch parameters.loopMode {
        case .loopContinuous, .loopSustain: loops = true
        case .noLoop, .oneShot: loops = false
        }
        loopActive = loops && loopEnd > loopStart && offset <= loopEnd
        amplitude = SFZEnvelope(parameters.amplitudeEnvelope, sampleRate: rate)
        amplitude.begin()
        filterEnvelope = SFZEnvelope(parameters.filterEnvelope, sampleRate: rate)
        filterEnvelope.begin()
        pitchEnvelope = SFZEnvelope(parameters.pitchEnvelope, sampleRate: rate)
        pitchEnvelope.begin()
        amplitudeLFO = SFZLFOState(parameters.amplitudeLFO, sampleRate: rate)
        filterLFO = SFZLFOState(parameters.filterLFO, sampleRate: rate)
        pitchLFO = SFZLFOState(parameters.pitchLFO, sampleRate: rate)
        filterLeft.reset()
        filterRight.reset()
        onePoleLeft = SFZOnePole()
        onePoleRight = SFZOnePole()
        onePoleHighLeft = SFZOnePole()
        onePoleHighRight = SFZOnePole()
        // Resonance in dB as the filter's Q = 10^(dB/20), the way sfizz maps it (0 dB: Q = 1, unity gain at the
        // cutoff), as the state-variable filter's damping (k = 1/Q, its resonance r = (2 − k) / 1.96; r ≤ 1
        // keeps k ≥ 0.04, so Q stops at 25: 28 dB).
        let q = FastMath.exp2(Double(max(0, min(40, parameters.resonance))) * 0.166_096_404_744_368_1)
        resonance = Float(max(0, min(1, (2 - 1 / q) / 1.96)))
        let width = max(-1, min(1, parameters.width))
        mixOwn = (1 + width) / 2
        mixOther = (1 - width) / 2
        inputs = SFZVoiceInputs()
        smoothed = SFZVoiceInputs()
        inputsAt = .max
        streaming = !info.isResident
        streamEnd = 0
        stoppedWaiting = false
        if streaming, let streams = context.streams, slot < streams.slotCount {
            // The loader writes no more than a ring past `need`, so the frames a voice may come back to (a
            // loop's start) stay in the ring.
            let lowest = loopActive ? min(offset, loopStart) : offset
            need = max(0, lowest - SFZInterpolator.maximumReach - 1)
            streams.slots[slot].need.store(SFZStreamSlot.pack(generation, need), ordering: .releasing)
            let request = SFZStreamCommand(
                slot: Int32(slot), generation: generation, sample: parameters.sample.index,
                from: Int64(max(info.headFrames, need)))
            if !streams.commands.push(request) { lateInBlock = true }
        } else {
            streaming = false
        }
    }

    /// The note-off: the envelopes' release; a sustain loop plays on past its end from here.
    @_noAllocation @_noLocks
    mutating func release() {
        guard !released else { return }
        if case .oneShot = parameters.loopMode { return }
        released = true
        amplitude.release()
        filterEnvelope.release()
        pitchEnvelope.release()
        if case .loopSustain = parameters.loopMode { loopActive = false }
    }

    /// A fast fade to silence over `frames` frames (a stolen or choked voice), from where its level is.
    @_noAllocation @_noLocks
    mutating func fade(frames: Int) {
        guard !fading else { return }
        fading = true
        fadeStep = fadeGain / Float(max(1, frames))
    }

    /// Adds frames `from ..< to` of the voice into `left`/`right`; `time` is the engine frame of index 0.
    /// Works in runs that end at control-block boundaries and at the frames of pending events (release,
    /// fade, inputs), so where the caller's slices end changes nothing.
    @_noAllocation @_noLocks
    mutating func render(
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, from: Int, to: Int, time: Int64,
        context: SFZVoiceContext
    ) {
        var index = from
        while index < to && active {
            let now = time &+ Int64(index)
            if now >= releaseAt {
                releaseAt = .max
                release()
            }
            if now >= fadeAt {
                fadeAt = .max
                fade(frames: context.fadeFrames)
            }
            if now >= inputsAt {
                inputsAt = .max
                inputs = pendingInputs
            }
            if blockLeft == 0 { beginBlock(context) }
            var run = min(to &- index, blockLeft)
            let next = min(releaseAt, min(fadeAt, inputsAt))
            if next != .max && next &- now < Int64(run) { run = Int(next &- now) }
            index &+= renderRun(left: left + index, right: right + index, count: run, context: context)
        }
    }

    /// Renders up to `count` (≤ a control block) frames in stages over values held in registers — the
    /// sample's frames interpolated, filtered, shaped by envelope, gain and pan — then adds them to the
    /// output (stores through the output pointers would otherwise force the voice's state to be reloaded at
    /// every frame). The frames it rendered (fewer when the voice ends).
    @inline(__always) @_noAllocation @_noLocks
    mutating func renderRun(
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int,
        context: SFZVoiceContext
    ) -> Int {
        // The run's frames, in the engine's scratch (a SIMD value indexed by a variable compiles to a lane
        // select per access, several times slower).
        let l = context.runLeft
        let r = context.runRight
        var done = count
        if !interpolateRun(l, r, count, context) {
            done = sampleRun(l, r, count, context)
        }
        switch parameters.filterType {
        case .none: break
        case .lowPass1Pole: Self.onePole(&onePoleLeft, &onePoleRight, l, r, done, highPass: false)
        case .highPass1Pole: Self.onePole(&onePoleLeft, &onePoleRight, l, r, done, highPass: true)
        case .lowPass2Pole: Self.stateVariable(&filterLeft, &filterRight, l, r, done, mode: 0)
        case .highPass2Pole: Self.stateVariable(&filterLeft, &filterRight, l, r, done, mode: 1)
        case .bandPass2Pole: Self.stateVariable(&filterLeft, &filterRight, l, r, done, mode: 2)
        case .bandPass1Pole:
            Self.onePole(&onePoleLeft, &onePoleRight, l, r, done, highPass: false)
            Self.onePole(&onePoleHighLeft, &onePoleHighRight, l, r, done, highPass: true)
        }
        var envelope = amplitude
        var (gainL, gainR) = (gainLeft, gainRight)
        let (stepL, stepR) = (gainStepLeft, gainStepRight)
        let (own, other) = (mixOwn, mixOther)
        var fadeLevel = fadeGain
        if !fading, case .sustain = envelope.stage, other == 0 {
            // A held note at full width (most voices most of the time): the envelope's level does not move
            // (its `next()` would return `sustainLevel` each frame), the width mix is the identity.
            let level = envelope.sustainLevel * max(0, fadeLevel)
            for i in 0..<done {
                gainL += stepL
                gainR += stepR
                left[i] += level * gainL * (own * l[i])
                right[i] += level * gainR * (own * r[i])
            }
        } else {
            let fadeSlope = fading ? fadeStep : 0
            for i in 0..<done {
                let level = envelope.next() * max(0, fadeLevel)
                fadeLevel -= fadeSlope
                gainL += stepL
                gainR += stepR
                let (x, y) = (l[i], r[i])
                left[i] += level * gainL * (own * x + other * y)
                right[i] += level * gainR * (other * x + own * y)
            }
        }
        amplitude = envelope
        (gainLeft, gainRight) = (gainL, gainR)
        fadeGain = fadeLevel
        if fading && fadeGain <= 0 { active = false }
        if amplitude.isDone || amplitude.isSilentSustain { active = false }
        blockLeft &-= done
        return done
    }

    /// The run's frames one by one through `sample` (seams, ends, streamed data): the frames rendered.
    @inline(never) @_noAllocation @_noLocks
    mutating func sampleRun(
        _ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ count: Int, _ context: SFZVoiceContext
    ) -> Int {
        var done = count
        for i in 0..<count {
            let (x, y) = sample(context)
            l[i] = x
            r[i] = y
            position += step
            if loopActive {
                if position >= Double(loopEnd &+ 1) {
                    position -= Double(loopLength)
                    wrapped = true
                }
            } else if position > Double(endFrame) {
                done = i &+ 1
                active = false
                break
            }
        }
        return done
    }

    @inline(__always) @_noAllocation @_noLocks
    static func onePole(
        _ a: inout SFZOnePole, _ b: inout SFZOnePole, _ l: UnsafeMutablePointer<Float>,
        _ r: UnsafeMutablePointer<Float>,
        _ count: Int, highPass: Bool
    ) {
        var (fa, fb) = (a, b)
        for i in 0..<count {
            l[i] = fa.process(l[i], highPass: highPass)
            r[i] = fb.process(r[i], highPass: highPass)
        }
        (a, b) = (fa, fb)
    }

    @inline(__always) @_noAllocation @_noLocks
    static func stateVariable(
        _ a: inout StateVariableFilter, _ b: inout StateVariableFilter, _ l: UnsafeMutablePointer<Float>,
        _ r: UnsafeMutablePointer<Float>, _ count: Int, mode: Int
    ) {
        var (fa, fb) = (a, b)
        for i in 0..<count {
            l[i] = fa.process(l[i], mode: mode)
            r[i] = fb.process(r[i], mode: mode)
        }
        (a, b) = (fa, fb)
    }

    /// The block's values: inputs glided, envelopes and LFOs read, pitch and filter set, gain ramps aimed,
    /// the stream's state read and the frames the voice still needs published.
    @_noAllocation @_noLocks
    mutating func beginBlock(_ context: SFZVoiceContext) {
        let frames = Self.blockFrames
        blockLeft = frames
        if lateInBlock {
            lateBlocks &+= 1
            lateInBlock = false
        }
        let glide = firstBlock ? 1 : context.glide
        smoothed.volume += (inputs.volume - smoothed.volume) * glide
        smoothed.pan += (inputs.pan - smoothed.pan) * glide
        smoothed.cutoff += (inputs.cutoff - smoothed.cutoff) * glide
        smoothed.pitch += (inputs.pitch - smoothed.pitch) * glide

        let pitchEG = pitchEnvelope.level
        _ = pitchEnvelope.advance(frames)
        let cents =
            parameters.pitchCents + Double(pitchEG * parameters.pitchEnvelopeDepth)
            + Double(pitchLFO.value(advancing: frames)) + Double(smoothed.pitch)
        step = min(SFZInterpolator.maximumStep, baseStep * FastMath.exp2(cents / 1200))
        reach = context.interpolator.reach(step: step)

        let filterEG = filterEnvelope.level
        _ = filterEnvelope.advance(frames)
        let filterLFOValue = filterLFO.value(advancing: frames)
        let shift = Double(filterEG * parameters.filterEnvelopeDepth + filterLFOValue + smoothed.cutoff)
        switch parameters.filterType {
        case .none: break
        case .lowPass1Pole, .highPass1Pole, .bandPass1Pole:
            onePoleLeft.setCutoff(parameters.cutoff * FastMath.exp2(shift / 1200), sampleRate: context.sampleRate)
            onePoleRight.gain = onePoleLeft.gain
            (onePoleHighLeft.gain, onePoleHighRight.gain) = (onePoleLeft.gain, onePoleLeft.gain)
        case .lowPass2Pole, .highPass2Pole, .bandPass2Pole:
            let cutoff = parameters.cutoff * FastMath.exp2(shift / 1200)
            filterLeft.setCoefficients(cutoff: cutoff, resonance: resonance, sampleRate: context.sampleRate)
            filterRight.copyCoefficients(from: filterLeft)
        }

        // Gain and constant-power pan: each side √2·cos/sin of (pan + 1)·π/4, unity at the centre.
        let decibels = Double(smoothed.volume + amplitudeLFO.value(advancing: frames))
        let gain = parameters.gain * Float(FastMath.exp2(decibels * 0.166_096_404_744_368_1))
        let stereo = info.channels == 2
        let place = max(-1, min(1, parameters.pan + smoothed.pan + (stereo ? parameters.position : 0)))
        let angle = Double(place + 1) / 8  // (pan + 1)·π/4 in turns
        let targetLeft = gain * Float(FastMath.sine(angle + 0.25) * 1.414_213_562_373_095)
        let targetRight = gain * Float(FastMath.sine(angle) * 1.414_213_562_373_095)
        if firstBlock {
            (gainLeft, gainRight) = (targetLeft, targetRight)
            (gainStepLeft, gainStepRight) = (0, 0)
            firstBlock = false
        } else {
            gainStepLeft = (targetLeft - gainLeft) / Float(frames)
            gainStepRight = (targetRight - gainRight) / Float(frames)
        }

        if streaming, let streams = context.streams {
            var lowest = Int(position) - SFZInterpolator.maximumReach - 1
            if loopActive { lowest = min(lowest, loopStart - SFZInterpolator.maximumReach - 1) }
            if lowest > need {
                need = lowest
                streams.slots[slot].need.store(SFZStreamSlot.pack(generation, need), ordering: .releasing)
            }
            refreshStream(streams)
        }
    }

    @inline(__always) @_noAllocation @_noLocks
    mutating func refreshStream(_ streams: SFZStreams) {
        let filled = SFZStreamSlot.unpack(streams.slots[slot].filled.load(ordering: .acquiring))
        streamEnd = filled.generation == generation & 0xFF_FFFF ? filled.frame : 0
    }

    /// Frame `frame` of the sample's channel `channel` as the voice plays it (across the loop's seam), and
    /// whether it was there (false: streamed data not yet loaded).
    @inline(__always) @_noAllocation @_noLocks
    mutating func frameValue(_ frame: Int, _ channel: Int, _ context: SFZVoiceContext) -> (Float, Bool) {
        var k = frame
        if loopActive { while k > loopEnd { k &-= loopLength } }
        if wrapped { while k < loopStart { k &+= loopLength } }
        if k < 0 || k >= info.frames { return (0, true) }
        let channels = info.channels
        if k < info.headFrames { return (info.head[k &* channels &+ channel], true) }
        guard let streams = context.streams else { return (0, false) }
        if k >= streamEnd {
            guard context.waitsForData && !stoppedWaiting else { return (0, false) }
            // Offline: wait for the loader (it reads ahead of `need`, published before this block), up to
            // the streams' limit; the same frames arrive at any disk speed, so the render is the same.
            var waited = 0.0
            while k >= streamEnd && waited < streams.waitLimit {
                _unsafePerformance { _ = usleep(100) }
                waited += 0.0001
                refreshStream(streams)
            }
            if k >= streamEnd {
                stoppedWaiting = true
                return (0, false)
            }
        }
        return (streams.ring(slot)[(k & (streams.ringFrames &- 1)) &* channels &+ channel], true)
    }

    /// The interpolated frame at `position` (left, right; a mono sample gives the same value twice), read
    /// frame by frame wherever the run's frames are not one contiguous stretch of memory (a loop's seam, the
    /// head's end, a ring's wrap, the sample's ends, streamed data).
    @inline(__always) @_noAllocation @_noLocks
    mutating func sample(_ context: SFZVoiceContext) -> (Float, Float) {
        let whole = Int(position)
        let fraction = position - Double(whole)
        if step == 1 && fraction == 0 {
            // At exactly the sample's rate the frame itself, as `interpolateRun` copies it (`.live`'s kernel,
            // cut at 0.9 of Nyquist, is not the identity there): the same frames on either path.
            let (x, present) = frameValue(whole, 0, context)
            let (y, _) = info.channels == 2 ? frameValue(whole, 1, context) : (x, present)
            if !present {
                lateFrames &+= 1
                lateInBlock = true
                return (0, 0)
            }
            return (x, y)
        }
        let polyphase = step <= 1
        let half = context.interpolator.kernelHalfWidth
        let first: Int
        let count: Int
        if polyphase {
            first = whole &- (half &- 1)
            count = 2 &* half
        } else {
            first = whole &- reach &+ 1
            count = 2 &* reach
        }
        let last = first &+ count &- 1
        let channels = info.channels
        let seam = (loopActive && last > loopEnd) || (wrapped && first < loopStart)
        var source: UnsafeMutablePointer<Float>
        if !seam && first >= 0
            && (last < info.headFrames || (info.isResident && last < info.headFrames &+ SFZSampleInfo.guardFrames))
        {
            source = info.head + first &* channels
        } else if !seam, streaming, let streams = context.streams, first >= info.headFrames, last < streamEnd,
            (first & (streams.ringFrames &- 1)) &+ count <= streams.ringFrames
        {
            source = streams.ring(slot) + (first & (streams.ringFrames &- 1)) &* channels
        } else {
            source = context.gathered
            var late = false
            for j in 0..<count {
                for channel in 0..<channels {
                    let (value, present) = frameValue(first &+ j, channel, context)
                    source[j &* channels &+ channel] = value
                    if !present { late = true }
                }
            }
            if late {
                lateFrames &+= 1
                lateInBlock = true
                return (0, 0)
            }
        }
        if polyphase {
            if channels == 1 {
                let value = context.interpolator.mono(taps: count, fraction: fraction, source)
                return (value, value)
            }
            return context.interpolator.stereo(taps: count, fraction: fraction, source)
        }
        return context.interpolator.stretched(
            position: position, first: first, count: count, scale: step, channels: channels, source)
    }

    /// Interpolates the run's `count` frames into `l`/`r` in one loop when every frame they read lies in the
    /// sample's resident memory and the run meets no loop seam and no end (most runs): the checks `sample`
    /// makes per frame made once, the kernel's width a constant. At exactly the sample's rate and a whole
    /// position the frames are copied (every kernel is the identity there, up to rounding). False, having
    /// done nothing, when the run needs `sample`'s frame-by-frame path. Positions advance by the same
    /// additions either way, so which path ran never changes the sound.
    @inline(__always) @_noAllocation @_noLocks
    mutating func interpolateRun(
        _ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ count: Int, _ context: SFZVoiceContext
    ) -> Bool {
        let kernel = context.interpolator
        let half = step <= 1 ? kernel.kernelHalfWidth : reach
        // Where the run ends, with a frame to spare against rounding: no wrap and no end inside the run.
        let beyond = position + step * Double(count)
        let lastWhole = Int(beyond) &+ 1
        if loopActive {
            if lastWhole >= loopEnd { return false }
        } else if lastWhole >= endFrame {
            return false
        }
        let first = Int(position) &- half &+ 1
        let last = lastWhole &+ half
        if first < 0 || (loopActive && last > loopEnd) || (wrapped && first < loopStart) { return false }
        guard last < info.headFrames || (info.isResident && last < info.headFrames &+ SFZSampleInfo.guardFrames)
        else { return false }
        let head = UnsafePointer(info.head)
        let stereo = info.channels == 2
        var at = position
        if step == 1 && at == Double(Int(at)) {
            let base = Int(at)
            if stereo {
                for i in 0..<count {
                    l[i] = head[(base &+ i) &* 2]
                    r[i] = head[(base &+ i) &* 2 &+ 1]
                }
            } else {
                for i in 0..<count {
                    l[i] = head[base &+ i]
                    r[i] = l[i]
                }
            }
            position = at + Double(count)
            return true
        }
        if step <= 1 {
            // The kernel's width a literal in each branch, so the vector loop unrolls.
            switch (kernel.quality, stereo) {
            case (.live, true):
                for i in 0..<count {
                    let whole = Int(at)
                    (l[i], r[i]) = kernel.stereo(taps: 8, fraction: at - Double(whole), head + (whole &- 3) &* 2)
                    at += step
                }
            case (.high, true):
                for i in 0..<count {
                    let whole = Int(at)
                    (l[i], r[i]) = kernel.stereo(taps: 24, fraction: at - Double(whole), head + (whole &- 11) &* 2)
                    at += step
                }
            case (.live, false):
                for i in 0..<count {
                    let whole = Int(at)
                    l[i] = kernel.mono(taps: 8, fraction: at - Double(whole), head + (whole &- 3))
                    r[i] = l[i]
                    at += step
                }
            case (.high, false):
                for i in 0..<count {
                    let whole = Int(at)
                    l[i] = kernel.mono(taps: 24, fraction: at - Double(whole), head + (whole &- 11))
                    r[i] = l[i]
                    at += step
                }
            }
        } else {
            let channels = info.channels
            let taps = 2 &* half
            for i in 0..<count {
                let start = Int(at) &- half &+ 1
                (l[i], r[i]) = kernel.stretched(
                    position: at, first: start, count: taps, scale: step, channels: channels, head + start &* channels)
                at += step
            }
        }
        position = at
        return true
    }
}

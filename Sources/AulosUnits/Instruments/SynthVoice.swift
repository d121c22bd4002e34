import AulosCore
import AulosDSP
import AulosMIDI

/// One synth voice: oscillators, filter, envelopes and the gains it was last given.
///
/// Threads: the render thread reads and writes it (a plain value in the kernel's memory); the control thread
/// makes it at initialize.
struct SynthVoice: BitwiseCopyable {
    var active = false
    /// Fading out over a few milliseconds (stolen, or all-sound-off): ignores note events.
    var fading = false
    var released = false
    /// Key released while the sustain pedal was down.
    var sustained = false
    var note: UInt8 = 0
    var channel: UInt8 = 0
    /// Velocity, note-off velocity (once released) and poly pressure on its key, on the 0…127 scale (fractional
    /// from MIDI 2.0); a random value fixed at its start (modulation sources).
    var velocity: Float = 0
    var releaseVelocity: Float = 0
    var pressure: Float = 0
    var random: Float = 0
    /// MIDI 2.0 per-note pitch bend and controllers: this note's own (`NoteExpression`).
    var expression = NoteExpression()
    /// Where the modulation matrix moves the oscillator mix and the pulse width from the patch's values.
    var mixOffset: Float = 0
    var widthOffset = 0.0
    /// Where in the wavetable the voice plays: a frame and the fraction towards the next.
    var morphFrame = 0
    var morphFraction: Float = 0
    var age: UInt64 = 0
    /// The pitch the voice plays (changes on legato), as a note number.
    var pitch: Double = 0
    /// 32-bit fixed-point phases (2^32 = one period) and their per-sample increments.
    var phase1: UInt32 = 0
    var phase2: UInt32 = 0
    var increment1: UInt32 = 0
    var increment2: UInt32 = 0
    var band1 = 0
    var band2 = 0
    var filter = StateVariableFilter()
    var amp = Envelope()
    var filterEnvelope = Envelope()
    var velocityGain: Float = 1
    /// One noise source per oscillator: shared, how the two took turns would depend on where blocks end.
    var noise = NoiseGenerator(seed: 1)
    var noise2 = NoiseGenerator(seed: 2)
    var gain = GlidingGain()
    /// Glide: how far (in semitones) the pitch still is from the note's, shrinking every control tick.
    var glideOffset = 0.0
    /// The second LFO (per voice): phase, completed cycles (for sample and hold) and value.
    var lfo2Phase = 0.0
    var lfo2Cycle: Int64 = 0
    var lfo2Value: Float = 0
    /// The third envelope, a modulation source.
    var modEnvelope = Envelope()
    var rich = RichVoice()
    var fadeGain: Float = 1
    var fadeStep: Float = 0
    /// What the last control tick computed its pitch, filter and gains from (see `VoiceControlMemo`).
    var memo = VoiceControlMemo()

    @_noAllocation @_noLocks
    init() {}
}

/// The inputs a voice's last control tick turned into phase increments, filter coefficients and gain targets,
/// and the gain targets themselves. A tick whose inputs did not move (a held note without modulation, the
/// usual case) skips the exponentials, the filter's tangent and the pan's sines. Each cached result is a pure
/// function of the inputs compared, so a skipped computation is the one that would have been made, to the
/// bit; NaN (a new voice) never compares equal, so a voice's first tick computes everything.
///
/// Threads: render thread (part of a `SynthVoice`).
struct VoiceControlMemo: BitwiseCopyable {
    var pitch1 = Double.nan
    var pitch2 = Double.nan
    var cutoff = Double.nan
    var octaves = Double.nan
    var resonance = Float.nan
    var gain = Float.nan
    var position = Double.nan
    var left: Float = 0
    var right: Float = 0

    @_noAllocation @_noLocks
    init() {}
}

/// Rendering one voice, or four plain voices of one patch side by side in SIMD lanes, and the control tick
/// that sets a voice's pitch, filter and gains.
///
/// Threads: render thread.
extension OscillatorSynthKernel {
    /// Renders frames [from, to) of one voice (at most one control tick, 16 frames): oscillators into
    /// scratch buffers, then mix, filter, envelopes and gains in one loop over local copies of the hot state.
    @_noAllocation @_noLocks
    func renderVoice(
        _ voice: UnsafeMutablePointer<SynthVoice>, from: Int, to: Int,
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    ) {
        let c = patch(Int(voice.pointee.channel))
        let count = to - from
        let a = scratch
        let b = scratch + Self.controlInterval
        let width = pulseWidthPhase(voice, c)
        fillOscillator(
            a, count: count, wave: c.pointee.wave1, phase: &voice.pointee.phase1, increment: voice.pointee.increment1,
            band: voice.pointee.band1, width: width, noise: &voice.pointee.noise,
            morphFrame: voice.pointee.morphFrame, morphFraction: voice.pointee.morphFraction)
        fillOscillator(
            b, count: count, wave: c.pointee.wave2, phase: &voice.pointee.phase2, increment: voice.pointee.increment2,
            band: voice.pointee.band2, width: width, noise: &voice.pointee.noise2,
            morphFrame: voice.pointee.morphFrame, morphFraction: voice.pointee.morphFraction)
        var filter = voice.pointee.filter
        var amp = voice.pointee.amp
        var filterEnvelope = voice.pointee.filterEnvelope
        var gainLeft = voice.pointee.gain.left
        var gainRight = voice.pointee.gain.right
        let stepLeft = voice.pointee.gain.leftStep
        let stepRight = voice.pointee.gain.rightStep
        let fading = voice.pointee.fading
        var fadeGain = voice.pointee.fadeGain
        let fadeStep = voice.pointee.fadeStep
        var active = true
        let outLeft = left + from
        let outRight = right + from
        let mix = max(0, min(1, c.pointee.mix + voice.pointee.mixOffset))
        let mode = c.pointee.filterMode
        for i in 0..<count {
            let filtered = filter.process(a[i] + (b[i] - a[i]) * mix, mode: mode)
            _ = filterEnvelope.next(c.pointee.filterShape)
            var sample = filtered * amp.next(c.pointee.ampShape)
            if fading {
                sample *= fadeGain
                fadeGain -= fadeStep
                if fadeGain <= 0 {
                    active = false
                    break
                }
            }
            gainLeft += stepLeft
            gainRight += stepRight
            outLeft[i] += sample * gainLeft
            outRight[i] += sample * gainRight
            if !amp.isActive {
                // A fading voice is done; any other stays until the next control tick (`retireFinishedVoices`),
                // so the voices grouped in SIMD lanes change only at ticks and events.
                if fading { active = false }
                break
            }
        }
        voice.pointee.filter = filter
        voice.pointee.amp = amp
        voice.pointee.filterEnvelope = filterEnvelope
        voice.pointee.gain.left = gainLeft
        voice.pointee.gain.right = gainRight
        voice.pointee.fadeGain = fadeGain
        voice.pointee.active = active
    }

    /// Renders frames [from, to) of four plain voices of one patch into one output, side by side in SIMD
    /// lanes: two saws are read from their tables in the frame loop four lanes at a time; other waveforms are
    /// filled into lane-interleaved scratch first. Then mix, filter, both envelopes and the gains four at a
    /// time. Each lane computes exactly what `renderVoice` would; the four are summed into the output per frame.
    @_noAllocation @_noLocks
    func renderVoiceGroup(
        _ lanes: UnsafeMutablePointer<Int32>, from: Int, to: Int, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>
    ) {
        let v0 = voices + Int(lanes[0])
        let v1 = voices + Int(lanes[1])
        let v2 = voices + Int(lanes[2])
        let v3 = voices + Int(lanes[3])
        let c = patch(Int(v0.pointee.channel))
        let count = to - from
        let mix = laneMix(lanes, c)
        if readsSaw(c.pointee.wave1) && readsSaw(c.pointee.wave2) {
            var oscillators = GroupOscillators(table: saw, scratch: groupScratch, v0, v1, v2, v3)
            renderGroupFrames(lanes, c, count: count, mix: mix, oscillators: &oscillators, left + from, right + from)
            oscillators.storePhases(v0, v1, v2, v3)
            return
        }
        let a = groupScratch
        let b = groupScratch + 4 * Self.controlInterval
        for lane in 0..<4 {
            let voice = voices + Int(lanes[lane])
            let width = pulseWidthPhase(voice, c)
            fillOscillator(
                a + lane, stride: 4, count: count, wave: c.pointee.wave1, phase: &voice.pointee.phase1,
                increment: voice.pointee.increment1, band: voice.pointee.band1, width: width,
                noise: &voice.pointee.noise, morphFrame: voice.pointee.morphFrame,
                morphFraction: voice.pointee.morphFraction)
            fillOscillator(
                b + lane, stride: 4, count: count, wave: c.pointee.wave2, phase: &voice.pointee.phase2,
                increment: voice.pointee.increment2, band: voice.pointee.band2, width: width,
                noise: &voice.pointee.noise2, morphFrame: voice.pointee.morphFrame,
                morphFraction: voice.pointee.morphFraction)
        }
        var oscillators = GroupOscillators(filled: a, b)
        renderGroupFrames(lanes, c, count: count, mix: mix, oscillators: &oscillators, left + from, right + from)
    }

    /// Where a voice's pulse wave falls (the second saw's phase offset): the patch's width moved by the
    /// voice's modulation, within 5…95 %.
    @inline(__always) @_noAllocation @_noLocks
    func pulseWidthPhase(_ voice: UnsafeMutablePointer<SynthVoice>, _ c: UnsafeMutablePointer<SynthControls>) -> UInt32
    {
        let pulseWidth = max(0.05, min(0.95, c.pointee.pulseWidth + voice.pointee.widthOffset))
        return UInt32(truncatingIfNeeded: Int64(pulseWidth * 4_294_967_296))
    }

    /// Each lane's oscillator mix: the patch's, moved by its voice's modulation, within 0…1.
    @inline(__always) @_noAllocation @_noLocks
    func laneMix(_ lanes: UnsafeMutablePointer<Int32>, _ c: UnsafeMutablePointer<SynthControls>) -> SIMD4<Float> {
        var mix = SIMD4<Float>(repeating: 0)
        for lane in 0..<4 {
            mix[lane] = max(0, min(1, c.pointee.mix + voices[Int(lanes[lane])].mixOffset))
        }
        return mix
    }

    /// Whether an oscillator with this waveform plays the saw table (a wavetable with no table loaded does).
    @inline(__always) @_noAllocation @_noLocks
    func readsSaw(_ wave: SynthWaveform) -> Bool {
        switch wave {
        case .saw: true
        case .wavetable: morph == nil
        default: false
        }
    }

    /// The frame loop of a voice group: mix, filter, envelopes and gains of four lanes, oscillators from
    /// `oscillators`, summed into `outLeft`/`outRight` (frames 0..<count); lane state written back.
    @inline(__always) @_noAllocation @_noLocks
    func renderGroupFrames(
        _ lanes: UnsafeMutablePointer<Int32>, _ c: UnsafeMutablePointer<SynthControls>, count: Int,
        mix: SIMD4<Float>, oscillators: inout GroupOscillators, _ outLeft: UnsafeMutablePointer<Float>,
        _ outRight: UnsafeMutablePointer<Float>
    ) {
        let v0 = voices + Int(lanes[0])
        let v1 = voices + Int(lanes[1])
        let v2 = voices + Int(lanes[2])
        let v3 = voices + Int(lanes[3])
        var group = VoiceGroupFrames(
            v0, v1, v2, v3, mix: mix, mode: c.pointee.filterMode, ampShape: c.pointee.ampShape,
            filterShape: c.pointee.filterShape)
        // `tables` and `held` are constants at each call, so each loop is compiled for its case (the held loop
        // makes no envelope calls, and its state stays in registers).
        switch (oscillators.readsTables, group.ampHeld && group.filterHeld) {
        case (true, true):
            for i in 0..<count { group.frame(i, &oscillators, tables: true, held: true, outLeft, outRight) }
        case (true, false):
            for i in 0..<count { group.frame(i, &oscillators, tables: true, held: false, outLeft, outRight) }
        case (false, true):
            for i in 0..<count { group.frame(i, &oscillators, tables: false, held: true, outLeft, outRight) }
        case (false, false):
            for i in 0..<count { group.frame(i, &oscillators, tables: false, held: false, outLeft, outRight) }
        }
        for lane in 0..<4 { group.store(lane: lane, into: voices + Int(lanes[lane])) }
    }

    /// Fills `count` samples of one oscillator into `out`. The waveform is chosen once per block, not per
    /// sample, so each case is a tight loop (what keeps the kernel within reach of plain C).
    @inline(__always) @_noAllocation @_noLocks
    func fillOscillator(
        _ out: UnsafeMutablePointer<Float>, stride: Int = 1, count: Int, wave: SynthWaveform, phase: inout UInt32,
        increment: UInt32, band: Int, width: UInt32, noise: inout NoiseGenerator, morphFrame: Int = 0,
        morphFraction: Float = 0
    ) {
        var p = phase
        switch wave {
        case .wavetable where morph != nil:
            // The wavetable: this frame and the next, crossfaded.
            let (first, next) = morphPair(morphFrame)
            for i in 0..<count {
                let a = first.sample(band: band, phase: p)
                out[i &* stride] = a + (next.sample(band: band, phase: p) - a) * morphFraction
                p &+= increment
            }
        case .saw, .wavetable:  // (a wavetable with no table loaded plays a saw)
            for i in 0..<count {
                out[i &* stride] = saw.sample(band: band, phase: p)
                p &+= increment
            }
        case .pulse:
            for i in 0..<count {
                out[i &* stride] = saw.sample(band: band, phase: p) - saw.sample(band: band, phase: p &+ width)
                p &+= increment
            }
        case .triangle:
            for i in 0..<count {
                out[i &* stride] = triangle.sample(band: band, phase: p)
                p &+= increment
            }
        case .sine:
            // The top triangle band holds only the fundamental: a sine, scaled back to full level.
            let top = WavetableLayout.bandCount - 1
            for i in 0..<count {
                out[i &* stride] = triangle.sample(band: top, phase: p) * 1.233_700_550_136_17
                p &+= increment
            }
        case .noise:
            for i in 0..<count { out[i &* stride] = noise.next() }
        }
        phase = p
    }

    /// Frame `frame` of the loaded wavetable and the one after it (the last frame pairs with itself), to
    /// crossfade. Only with a table loaded.
    @inline(__always) @_noAllocation @_noLocks
    func morphPair(_ frame: Int) -> (Wavetable, Wavetable) {
        let base = morph.unsafelyUnwrapped
        return (
            Wavetable(samples: base + frame &* morphFrameStride, stride: 2049),
            Wavetable(samples: base + min(frame + 1, morphFrames - 1) &* morphFrameStride, stride: 2049)
        )
    }

    /// At a control tick: a voice's second LFO moves on (free, retriggered from the note's start, or on the
    /// host's beat), its glide closes in on the note's pitch.
    @_noAllocation @_noLocks
    func advanceVoiceModulators(_ voice: UnsafeMutablePointer<SynthVoice>, frame: Int) {
        let c = patch(Int(voice.pointee.channel)).pointee
        if c.usesLFO2 {
            let host = hostSlice.pointee
            if c.lfo2Sync && host.valid {
                let cycles = (host.beat + Double(frame) * host.beatsPerFrame) / c.lfo2SyncBeats
                voice.pointee.lfo2Cycle = Int64(cycles)
                voice.pointee.lfo2Phase = cycles - Double(Int64(cycles))
            } else {
                voice.pointee.lfo2Phase += c.lfo2Rate * Double(Self.controlInterval) / sampleRate
                if voice.pointee.lfo2Phase >= 1 {
                    voice.pointee.lfo2Cycle += Int64(voice.pointee.lfo2Phase)
                    voice.pointee.lfo2Phase -= Double(Int(voice.pointee.lfo2Phase))
                }
            }
            voice.pointee.lfo2Value = Float(
                Self.lfoValue(
                    shape: c.lfo2Shape, phase: voice.pointee.lfo2Phase, cycle: voice.pointee.lfo2Cycle,
                    seed: UInt32(truncatingIfNeeded: voice.pointee.age)))
        }
        if voice.pointee.glideOffset != 0 {
            // Within 1 % (−40 dB) of the distance after the glide time.
            let ticks = max(1e-9, c.glideTime * sampleRate / Double(Self.controlInterval))
            voice.pointee.glideOffset *= FastMath.exp(-4.605_170_185_988_091 / ticks)
            if abs(voice.pointee.glideOffset) < 1e-4 { voice.pointee.glideOffset = 0 }
        }
    }

    /// Pitch, filter and output gains of one voice from the current controls. With `interpolate`, gains glide
    /// to their new values over the next tick (no zipper noise from CC 7/10/11); a new note jumps.
    @_noAllocation @_noLocks
    func updateVoice(_ voice: UnsafeMutablePointer<SynthVoice>, interpolate: Bool) {
        let own = Int(voice.pointee.channel)
        // In an MPE zone the manager channel's controllers and patch apply to every note; a member channel
        // adds its own bend, pressure and slide to its note.
        let channel = channels[owner(own)]
        let c = patch(own)
        // The controllers this note hears: its channel's, or (after a MIDI 2.0 per-note message) its own where set.
        var (modulationWheel, volumeLevel, expressionLevel, pan) =
            (channel.modulation, channel.volume, channel.expression, channel.pan)
        if voice.pointee.expression.isSet {
            let note = voice.pointee.expression
            modulationWheel = note.own(note.modulation, modulationWheel)
            volumeLevel = note.own(note.volume, volumeLevel)
            expressionLevel = note.own(note.expression, expressionLevel)
            pan = note.own(note.pan, pan)
        }
        let depth = modulationWheel / 127
        let lfo = channel.lfoValue
        let modulation =
            c.pointee.modulation.isActive ? c.pointee.modulation.offsets(inputs(of: voice)) : ModulationOffsets()
        var bend = Double(channels[own].bend) / 8192 * channels[own].bendRange
        if isMember(own) { bend += Double(channel.bend) / 8192 * channel.bendRange }
        // A MIDI 2.0 per-note bend, over the note's channel's range (as a member channel's is in MPE).
        if voice.pointee.expression.isSet { bend += voice.pointee.expression.bend / 8192 * channels[own].bendRange }
        let pitch =
            voice.pointee.pitch + voice.pointee.glideOffset + bend + lfo * c.pointee.lfoToPitch / 100 * depth
            + Double(modulation.pitch) * 24
        if pitch != voice.pointee.memo.pitch1 {
            voice.pointee.memo.pitch1 = pitch
            voice.pointee.increment1 = Wavetable.phaseIncrement(FastMath.frequency(ofNote: pitch) / sampleRate)
            voice.pointee.band1 = Wavetable.band(forNote: pitch)
        }
        let pitch2 = pitch + c.pointee.osc2Offset + Double(modulation.osc2Pitch) * 24
        if pitch2 != voice.pointee.memo.pitch2 {
            voice.pointee.memo.pitch2 = pitch2
            voice.pointee.increment2 = Wavetable.phaseIncrement(FastMath.frequency(ofNote: pitch2) / sampleRate)
            voice.pointee.band2 = Wavetable.band(forNote: pitch2)
        }
        if morph != nil {
            let position =
                max(0, min(1, c.pointee.wavetablePosition + modulation.wavetablePosition))
                * Float(morphFrames - 1)
            voice.pointee.morphFrame = min(Int(position), max(0, morphFrames - 1))
            voice.pointee.morphFraction = position - Float(voice.pointee.morphFrame)
        }
        voice.pointee.mixOffset = modulation.oscMix
        voice.pointee.widthOffset = Double(modulation.pulseWidth) * 0.45
        let envelopeOctaves = c.pointee.filterEnvAmount + Double(modulation.filterEnvAmount) * 8
        let octaves =
            Double(voice.pointee.filterEnvelope.level) * envelopeOctaves + c.pointee.keyTracking * (pitch - 60) / 12
            + lfo * c.pointee.lfoToFilter * depth + Double(modulation.cutoff) * 8
        let resonance = c.pointee.resonance + modulation.resonance
        if octaves != voice.pointee.memo.octaves || c.pointee.cutoff != voice.pointee.memo.cutoff
            || resonance != voice.pointee.memo.resonance
        {
            (voice.pointee.memo.octaves, voice.pointee.memo.cutoff) = (octaves, c.pointee.cutoff)
            voice.pointee.memo.resonance = resonance
            voice.pointee.filter.setCoefficients(
                cutoff: c.pointee.cutoff * FastMath.exp2(octaves), resonance: resonance, sampleRate: sampleRate)
        }
        if c.pointee.isRich {
            updateRichVoice(voice, c.pointee, pitch: pitch, pitch2: pitch2, octaves: octaves, modulation: modulation)
        }
        let volume = Float(volumeLevel) / 127
        let expression = Float(expressionLevel) / 127
        let tremolo = 1 - c.pointee.lfoToAmp * Float(depth) * Float(1 + lfo) / 2
        let swell = max(0, 1 + modulation.amp)
        let gain =
            c.pointee.volume * volume * volume * expression * expression * voice.pointee.velocityGain * tremolo * swell
        let position = GlidingGain.position(pan: pan) + Double(modulation.pan) / 2
        if gain != voice.pointee.memo.gain || position != voice.pointee.memo.position {
            (voice.pointee.memo.gain, voice.pointee.memo.position) = (gain, position)
            (voice.pointee.memo.left, voice.pointee.memo.right) = GlidingGain.targets(gain: gain, position: position)
        }
        voice.pointee.gain.aim(
            left: voice.pointee.memo.left, right: voice.pointee.memo.right, frames: Self.controlInterval,
            interpolate: interpolate)
    }
}

/// The state four voices of one patch share while a block renders side by side in SIMD lanes: filter,
/// envelopes and gains as lanes, loaded from the voices before the block and stored back after it.
///
/// Threads: render thread (a value made and used within one block).
struct VoiceGroupFrames {
    var filter: StateVariableFilterLanes
    var amp: EnvelopeLanes
    var filterEnvelope: EnvelopeLanes
    var gainLeft: SIMD4<Float>
    var gainRight: SIMD4<Float>
    let stepLeft: SIMD4<Float>
    let stepRight: SIMD4<Float>
    let mix: SIMD4<Float>
    let mode: Int
    let ampShape: EnvelopeShape
    let filterShape: EnvelopeShape
    /// All four lanes of an envelope at their sustain level: constant until a note-off, which comes at a
    /// block's boundary, so the level is taken once rather than stepped every frame (what stepping would give,
    /// to the bit).
    let ampHeld: Bool
    let filterHeld: Bool

    @inline(__always) @_noAllocation @_noLocks
    init(
        _ v0: UnsafeMutablePointer<SynthVoice>, _ v1: UnsafeMutablePointer<SynthVoice>,
        _ v2: UnsafeMutablePointer<SynthVoice>, _ v3: UnsafeMutablePointer<SynthVoice>, mix: SIMD4<Float>, mode: Int,
        ampShape: EnvelopeShape, filterShape: EnvelopeShape
    ) {
        filter = StateVariableFilterLanes(v0.pointee.filter, v1.pointee.filter, v2.pointee.filter, v3.pointee.filter)
        amp = EnvelopeLanes(v0.pointee.amp, v1.pointee.amp, v2.pointee.amp, v3.pointee.amp)
        filterEnvelope = EnvelopeLanes(
            v0.pointee.filterEnvelope, v1.pointee.filterEnvelope, v2.pointee.filterEnvelope, v3.pointee.filterEnvelope)
        gainLeft = SIMD4(v0.pointee.gain.left, v1.pointee.gain.left, v2.pointee.gain.left, v3.pointee.gain.left)
        gainRight = SIMD4(v0.pointee.gain.right, v1.pointee.gain.right, v2.pointee.gain.right, v3.pointee.gain.right)
        stepLeft = SIMD4(
            v0.pointee.gain.leftStep, v1.pointee.gain.leftStep, v2.pointee.gain.leftStep, v3.pointee.gain.leftStep)
        stepRight = SIMD4(
            v0.pointee.gain.rightStep, v1.pointee.gain.rightStep, v2.pointee.gain.rightStep, v3.pointee.gain.rightStep)
        self.mix = mix
        self.mode = mode
        self.ampShape = ampShape
        self.filterShape = filterShape
        ampHeld = amp.isSustaining()
        filterHeld = filterEnvelope.isSustaining()
        if ampHeld { amp.level = SIMD4(repeating: ampShape.sustainLevel) }
        if filterHeld { filterEnvelope.level = SIMD4(repeating: filterShape.sustainLevel) }
    }

    /// Frame `i`: the oscillators (from the tables or the filled scratch), mix, filter, envelopes (`held`: both
    /// known to be held) and gains, the four lanes summed into the output.
    @inline(__always) @_noAllocation @_noLocks
    mutating func frame(
        _ i: Int, _ oscillators: inout GroupOscillators, tables: Bool, held: Bool,
        _ outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>
    ) {
        let (oscillator1, oscillator2) = tables ? oscillators.nextFromTables() : oscillators.nextFilled(i)
        let filtered = filter.process(oscillator1 + (oscillator2 - oscillator1) * mix, mode: mode)
        if !held && !filterHeld { _ = filterEnvelope.next(filterShape) }
        let sample = filtered * (held || ampHeld ? amp.level : amp.next(ampShape))
        gainLeft += stepLeft
        gainRight += stepRight
        outLeft[i] += (sample * gainLeft).sum()
        outRight[i] += (sample * gainRight).sum()
    }

    /// Lane `lane` back into its voice.
    @inline(__always) @_noAllocation @_noLocks
    func store(lane: Int, into voice: UnsafeMutablePointer<SynthVoice>) {
        filter.store(lane: lane, into: &voice.pointee.filter)
        amp.store(lane: lane, into: &voice.pointee.amp)
        filterEnvelope.store(lane: lane, into: &voice.pointee.filterEnvelope)
        voice.pointee.gain.left = gainLeft[lane]
        voice.pointee.gain.right = gainRight[lane]
    }
}

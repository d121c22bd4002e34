import AulosDSP

/// One sinusoid of a tone: a frequency ratio to the fundamental, a level, how fast it fades and how fast it
/// rises.
///
/// Threads: control side, generation time.
struct Partial {
    var ratio: Double
    var amplitude: Double
    /// Seconds to fall by 1/e while the sample's recorded part plays; `.infinity` holds the level.
    var decay: Double = .infinity
    /// Seconds to rise to 1 − 1/e of the level; 0 starts at full level.
    var attack: Double = 0
}

/// Noise through a band (a high-pass and a low-pass), with its own envelope.
///
/// Threads: control side, generation time.
struct NoiseBand {
    var level: Double
    var low: Double
    var high: Double
    /// Seconds to fall by 1/e; `.infinity` is steady noise, made periodic over the loop so it loops cleanly.
    var decay: Double = .infinity
}

/// A recipe for one sample of a melodic instrument: additive partials (harmonic or inharmonic), detuned
/// copies for ensembles, noise, a waveshaper. A looped tone is built so that its loop holds whole periods of
/// every component (each partial's frequency is rounded to whole cycles per loop and its level is frozen from
/// the loop start on), so the loop joins without a step; a one-shot tone just fades out at its end.
///
/// Threads: control side, generation time.
struct Tone {
    var partials: [Partial]
    /// Seconds before the loop (the attack and the first, recorded part of the decay); the whole length of a
    /// one-shot tone.
    var recorded: Double
    /// Loop length in seconds (rounded to whole periods); nil for a one-shot tone.
    var loop: Double?
    /// Detuned copies (cents, gain): chorus and ensembles. The right channel of a stereo pair mirrors them.
    var voices: [(cents: Double, gain: Double)] = [(0, 1)]
    var noise: [NoiseBand] = []
    /// Waveshaper drive (0: none): overdriven and distorted guitars, charang.
    var drive: Double = 0
    /// How much each partial's level differs at random between the two channels of a stereo pair.
    var stereoSpread: Double = 0.3
    /// Random starting phases instead of sine phase: for stacks of several harmonic series (chords,
    /// inharmonic clusters), which in sine phase would all peak together at the start.
    var randomPhases = false
}

/// A synthesised sample before quantisation: frames, loop and the pitch correction its loop's rounding needs.
///
/// Threads: control side, generation time.
struct RenderedTone {
    var frames: [Double]
    var loop: Range<Int>?
    var pitchCorrection: Int8
}

/// Renders `Tone`s. Pure arithmetic (FastMath, no libm): every machine computes the same bits, which the
/// byte-identity test of the committed font relies on.
///
/// Threads: control side, generation time.
enum ToneSynthesis {
    /// Renders one channel of `tone` at `note`. `channel` 0 is mono or left, 1 is right (mirrored detune,
    /// other random phases and levels). `headroom` semitones: the highest transposition the sample will be
    /// played at, so partials stay below Nyquist when it is.
    static func render(_ tone: Tone, note: Int, sampleRate: Int, channel: Int = 0, headroom: Int = 0)
        -> RenderedTone
    {
        let rate = Double(sampleRate)
        let target = FastMath.frequency(ofNote: Double(note))
        let recorded = Int((tone.recorded * rate).rounded())
        // A loop of L frames holding P periods of the fundamental; P ≥ 24 keeps the rounding within a few cents
        // (stored as the sample's pitch correction).
        var loopLength = 0
        var periods = 0
        var fundamental = target
        if let seconds = tone.loop {
            // Even, so sub-octave partials (ratio 0.5, 1.5: organ footages) also fit whole cycles.
            periods = max(24, 2 * Int((target * seconds / 2).rounded()))
            loopLength = Int((Double(periods) * rate / target).rounded())
            fundamental = Double(periods) * rate / Double(loopLength)
        }
        let count = recorded + loopLength
        let nyquistLimit = 0.45 * rate / FastMath.exp2(Double(headroom) / 12)
        var signal = [Double](repeating: 0, count: count)
        var random = NoiseGenerator(seed: UInt32(truncatingIfNeeded: note &* 7919 &+ channel &* 104_729 &+ 17))
        let mirror = channel == 1 ? -1.0 : 1.0
        signal.withUnsafeMutableBufferPointer { out in
            for (index, voice) in tone.voices.enumerated() {
                let detune = FastMath.exp2(mirror * voice.cents / 1200)
                for partial in tone.partials {
                    let hertz = partial.ratio * fundamental * detune
                    guard hertz < nyquistLimit else { continue }
                    let spread = 1 + tone.stereoSpread * Double(random.next())
                    let level = partial.amplitude * voice.gain * spread
                    // Partials start in sine phase, as a plucked or struck string's do: a low crest factor, so
                    // a sample normalised to its peak is as loud as it can be. Each voice of an ensemble starts
                    // elsewhere, so they do not all peak together. The right channel's phases are spread by up to
                    // ±0.75 turn, leaving it little correlated with the left, as a spaced pair of microphones
                    // hears. (FluidSynth's mono effect sends sum a pair's two voices, the sampler sends each
                    // channel's mix: with correlated channels FluidSynth's reverb was 2.5 dB hotter, with
                    // independent ones its chorus 1.2 dB cooler; at this spread both agree within 0.9 dB.)
                    let offset = Double(random.next())
                    let phase = 0.37 * Double(index) + (tone.randomPhases ? offset : channel == 1 ? 0.75 * offset : 0)
                    if loopLength > 0 {
                        let cycles = Int((hertz * Double(loopLength) / rate).rounded())
                        guard cycles > 0 else { continue }
                        addLooped(
                            into: out, cycles: cycles, loopLength: loopLength, recorded: recorded, level: level,
                            phase: phase, partial: partial, rate: rate)
                    } else {
                        addOneShot(
                            into: out, step: hertz / rate, level: level, phase: phase, partial: partial, rate: rate)
                    }
                }
            }
        }
        for band in tone.noise {
            addNoise(
                band, into: &signal, recorded: recorded, loopLength: loopLength, rate: rate,
                seed: UInt32(truncatingIfNeeded: note &* 31 &+ channel &* 977 &+ 5))
        }
        if tone.drive > 0 {
            let peak = signal.reduce(0) { max($0, abs($1)) }
            let gain = peak > 0 ? tone.drive / peak : 0
            for n in signal.indices { signal[n] = softClip(signal[n] * gain) }
        }
        // A few frames of fade-in (a partial starting off zero would click); a one-shot tone fades out over its
        // last fifth.
        let fadeIn = min(count, Int(0.0006 * rate))
        for n in 0..<fadeIn { signal[n] *= Double(n) / Double(fadeIn) }
        if loopLength == 0 {
            let tail = count / 5
            for n in 0..<tail { signal[count - 1 - n] *= Double(n) / Double(tail) }
        }
        let correction = (1200 * FastMath.log2(target / fundamental)).rounded()
        return RenderedTone(
            frames: signal, loop: loopLength > 0 ? recorded..<count : nil, pitchCorrection: Int8(correction))
    }

    /// tanh-like soft clip (the Padé form FastMath.saturate uses), in double precision.
    static func softClip(_ x: Double) -> Double {
        let clamped = max(-3, min(3, x))
        let x2 = clamped * clamped
        return clamped * (27 + x2) / (27 + 9 * x2)
    }

    /// One partial of a looped tone: a rotating phasor (four multiplies a frame instead of a polynomial sine),
    /// re-synchronised to the exact phase every 1,024 frames and at the loop start, where the phase is an
    /// integer count of cycles modulo the loop: the loop's last frame leads into its first without drift.
    private static func addLooped(
        into out: UnsafeMutableBufferPointer<Double>, cycles: Int, loopLength: Int, recorded: Int, level: Double,
        phase: Double, partial: Partial, rate: Double
    ) {
        let count = out.count
        // A raw pointer: the buffer's subscript is a checked call in debug builds, where the byte-identity
        // test regenerates the font; the pointer's is not.
        let samples = out.baseAddress!
        let fall = partial.decay.isFinite ? FastMath.exp(-1 / (partial.decay * rate)) : 1
        let riseFall = partial.attack > 0 ? FastMath.exp(-1 / (partial.attack * rate)) : 0
        let stepTurns = Double(cycles) / Double(loopLength)
        let stepCos = FastMath.sine(stepTurns + 0.25)
        let stepSin = FastMath.sine(stepTurns)
        var envelope = level
        var rise = riseFall  // 1 − rise is the attack's progress
        var n = 0
        while n < count {
            // Exact phase at n: whole cycles are dropped in integers before the division.
            let turns = Double((cycles * n) % loopLength) / Double(loopLength) + phase
            var re = FastMath.sine(turns + 0.25)
            var im = FastMath.sine(turns)
            let end = n < recorded ? min(recorded, n + 1024) : min(count, n + 1024)
            if n < recorded {
                for i in n..<end {
                    samples[i] += envelope * (1 - rise) * im
                    envelope *= fall
                    rise *= riseFall
                    let nextRe = re * stepCos - im * stepSin
                    im = re * stepSin + im * stepCos
                    re = nextRe
                }
            } else {
                let held = envelope * (1 - rise)
                for i in n..<end {
                    samples[i] += held * im
                    let nextRe = re * stepCos - im * stepSin
                    im = re * stepSin + im * stepCos
                    re = nextRe
                }
            }
            n = end
        }
    }

    /// One partial of a one-shot tone.
    private static func addOneShot(
        into out: UnsafeMutableBufferPointer<Double>, step: Double, level: Double, phase: Double, partial: Partial,
        rate: Double
    ) {
        let samples = out.baseAddress!
        let fall = partial.decay.isFinite ? FastMath.exp(-1 / (partial.decay * rate)) : 1
        let riseFall = partial.attack > 0 ? FastMath.exp(-1 / (partial.attack * rate)) : 0
        let stepCos = FastMath.sine(step + 0.25)
        let stepSin = FastMath.sine(step)
        var envelope = level
        var rise = riseFall
        var n = 0
        while n < out.count {
            let turns = phase + step * Double(n)
            var re = FastMath.sine(turns + 0.25)
            var im = FastMath.sine(turns)
            let end = min(out.count, n + 1024)
            for i in n..<end {
                samples[i] += envelope * (1 - rise) * im
                envelope *= fall
                rise *= riseFall
                let nextRe = re * stepCos - im * stepSin
                im = re * stepSin + im * stepCos
                re = nextRe
            }
            if envelope < level * 1e-5 { return }  // 100 dB down: the rest adds nothing
            n = end
        }
    }

    /// Band-limited noise: decaying noise plays in the recorded part and is faded out before the loop; steady
    /// noise is a loop-length buffer filtered circularly (two passes, so the filters' state at its start is
    /// the state its end leaves), read modulo the loop so it too joins without a step.
    private static func addNoise(
        _ band: NoiseBand, into signal: inout [Double], recorded: Int, loopLength: Int, rate: Double, seed: UInt32
    ) {
        var generator = NoiseGenerator(seed: seed)
        var filter = BandFilter(low: band.low, high: band.high, rate: rate)
        if band.decay.isFinite {
            let length = loopLength > 0 ? recorded : signal.count
            let fall = FastMath.exp(-1 / (band.decay * rate))
            var envelope = band.level
            let fadeStart = loopLength > 0 ? length * 3 / 4 : length
            for n in 0..<length {
                let fade = n < fadeStart ? 1 : Double(length - n) / Double(length - fadeStart)
                signal[n] += envelope * fade * filter.process(Double(generator.next()))
                envelope *= fall
                if envelope < 1e-6 { break }
            }
        } else {
            let period = loopLength > 0 ? loopLength : signal.count
            let white = (0..<period).map { _ in Double(generator.next()) }
            for x in white { _ = filter.process(x) }
            let shaped = white.map { filter.process($0) }
            for n in signal.indices { signal[n] += band.level * shaped[n % period] }
        }
    }
}

/// Second-order high-pass then second-order low-pass (RBJ cookbook, Butterworth Q), in double precision, for
/// shaping noise at generation time.
///
/// Threads: control side, generation time.
struct BandFilter {
    private var highPass: Section
    private var lowPass: Section

    init(low: Double, high: Double, rate: Double, q: Double = 0.7071) {
        highPass = Section(kind: .highPass, frequency: max(10, low), q: q, rate: rate)
        lowPass = Section(kind: .lowPass, frequency: min(0.45 * rate, high), q: q, rate: rate)
    }

    mutating func process(_ x: Double) -> Double { lowPass.process(highPass.process(x)) }

    /// One biquad section.
    struct Section {
        enum Kind { case lowPass, highPass, bandPass }
        var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

        init(kind: Kind, frequency: Double, q: Double, rate: Double) {
            let turns = min(0.49, frequency / rate)
            let cosine = FastMath.sine(turns + 0.25)
            let alpha = FastMath.sine(turns) / (2 * q)
            let a0 = 1 + alpha
            switch kind {
            case .lowPass:
                b0 = (1 - cosine) / 2 / a0
                b1 = (1 - cosine) / a0
                b2 = b0
            case .highPass:
                b0 = (1 + cosine) / 2 / a0
                b1 = -(1 + cosine) / a0
                b2 = b0
            case .bandPass:
                b0 = alpha / a0
                b1 = 0
                b2 = -alpha / a0
            }
            a1 = -2 * cosine / a0
            a2 = (1 - alpha) / a0
        }

        mutating func process(_ x: Double) -> Double {
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            return y
        }
    }
}

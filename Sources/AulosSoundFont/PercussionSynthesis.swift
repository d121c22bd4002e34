import AulosDSP

/// The building blocks of the drum kit's one-shot samples: pitched modes (membranes, bars, bells, with a
/// pitch drop for skins), metallic clusters (detuned square waves and dense inharmonic partials: cymbals,
/// hi-hats, cowbell), and shaped noise (single bursts, burst trains for claps and guiros, grainy shakers).
///
/// Threads: control side, generation time.
enum PercussionSynthesis {
    /// A resonant mode: frequency (Hz), level, decay (s to fall by 1/e), and a pitch drop: the mode starts
    /// `bend` higher (a fraction) and settles with time constant `bendTime` (a struck skin's tension).
    struct Mode {
        var hertz: Double
        var level: Double
        var decay: Double
        var bend: Double = 0
        var bendTime: Double = 0.03
    }

    /// Noise through a band: `attack` and `decay` in seconds; `bursts` are onsets in seconds (claps), each
    /// re-triggering the envelope; `grain` > 0 modulates it at random, at about that many grains a second
    /// (shakers, cabasa); `resonance` > 0 replaces the band with a narrow band-pass at `high` Hz.
    struct Noise {
        var level: Double
        var low: Double
        var high: Double
        var attack: Double = 0
        var decay: Double
        var bursts: [Double] = [0]
        var burstDecay: Double = 0.008
        var grain: Double = 0
    }

    /// A metallic cluster: square waves at inharmonic frequencies (the TR-808's six for hi-hats and cymbals)
    /// plus `partials` random sinusoids between `low` and `high` Hz, each decaying at its own rate around
    /// `decay`, high-passed at `band`.
    struct Metal {
        var squares: [Double]
        var squareLevel: Double
        var partials: Int
        var low: Double
        var high: Double
        var level: Double
        var decay: Double
        var band: Double
        var seed: UInt32
    }

    /// Renders one hit of `seconds` at `rate`: the sum of modes, noise and metal, faded out over its last
    /// tenth. `drive` > 0 soft-clips the sum (the trashy china cymbal).
    static func hit(
        seconds: Double, rate: Int, modes: [Mode] = [], noise: [Noise] = [], metal: [Metal] = [], drive: Double = 0,
        seed: UInt32
    ) -> [Double] {
        let sampleRate = Double(rate)
        let count = Int(seconds * sampleRate)
        var signal = [Double](repeating: 0, count: count)
        signal.withUnsafeMutableBufferPointer { out in
            for mode in modes { addMode(mode, into: out, rate: sampleRate) }
        }
        var generator = NoiseGenerator(seed: seed)
        for band in noise { addNoise(band, into: &signal, rate: sampleRate, generator: &generator) }
        for cluster in metal { addMetal(cluster, into: &signal, rate: sampleRate) }
        if drive > 0 {
            let peak = signal.reduce(0) { max($0, abs($1)) }
            let gain = peak > 0 ? drive / peak : 0
            for n in signal.indices { signal[n] = ToneSynthesis.softClip(signal[n] * gain) }
        }
        let tail = count / 10
        for n in 0..<tail { signal[count - 1 - n] *= Double(n) / Double(tail) }
        return signal
    }

    /// A pitched mode with its pitch drop: a phase accumulator (the frequency changes every frame). A mode
    /// without a drop (bells, cymbal partials: most of the kit's work) rotates a phasor instead.
    private static func addMode(_ mode: Mode, into out: UnsafeMutableBufferPointer<Double>, rate: Double) {
        guard mode.bend != 0 else { return addSteadyMode(mode, into: out, rate: rate) }
        let fall = FastMath.exp(-1 / (mode.decay * rate))
        let bendFall = FastMath.exp(-1 / (mode.bendTime * rate))
        let samples = out.baseAddress!  // a raw pointer: see addSteadyMode
        var envelope = mode.level
        var bend = mode.bend
        var phase = 0.0
        for n in 0..<out.count {
            samples[n] += envelope * FastMath.sine(phase)
            phase += mode.hertz * (1 + bend) / rate
            if phase > 1 { phase -= 1 }
            bend *= bendFall
            envelope *= fall
            if envelope < mode.level * 1e-5 { return }
        }
    }

    /// A mode at a fixed frequency: four multiplies a frame, re-synchronised to the exact phase every 1,024
    /// frames so rounding never accumulates. Written through a raw pointer: the buffer's subscript is a
    /// checked call in debug builds, where the byte-identity test regenerates the font.
    private static func addSteadyMode(_ mode: Mode, into out: UnsafeMutableBufferPointer<Double>, rate: Double) {
        let samples = out.baseAddress!
        let fall = FastMath.exp(-1 / (mode.decay * rate))
        let step = mode.hertz / rate
        let stepCos = FastMath.sine(step + 0.25)
        let stepSin = FastMath.sine(step)
        var envelope = mode.level
        var n = 0
        while n < out.count {
            let turns = step * Double(n)
            var re = FastMath.sine(turns + 0.25)
            var im = FastMath.sine(turns)
            let end = min(out.count, n + 1024)
            for i in n..<end {
                samples[i] += envelope * im
                envelope *= fall
                let nextRe = re * stepCos - im * stepSin
                im = re * stepSin + im * stepCos
                re = nextRe
            }
            if envelope < mode.level * 1e-5 { return }  // 100 dB down: the rest adds nothing
            n = end
        }
    }

    private static func addNoise(
        _ band: Noise, into signal: inout [Double], rate: Double, generator: inout NoiseGenerator
    ) {
        var filter = BandFilter(low: band.low, high: band.high, rate: rate)
        let fall = FastMath.exp(-1 / (band.decay * rate))
        let burstFall = FastMath.exp(-1 / (band.burstDecay * rate))
        let attackStep = band.attack > 0 ? 1 / (band.attack * rate) : 1
        let onsets = band.bursts.map { Int($0 * rate) }
        let last = onsets.last ?? 0
        var envelope = 0.0
        var rise = 0.0
        var grain = 1.0
        var burst = 0.0
        for n in 0..<signal.count {
            if onsets.contains(n) {
                if n == last { envelope = band.level } else { burst = band.level }
                rise = 0
            }
            rise = min(1, rise + attackStep)
            if band.grain > 0, generator.next() > Float(1 - 2 * band.grain / rate) {
                grain = 0.3 + 0.7 * Double(abs(generator.next()))
            }
            let white = Double(generator.next())
            signal[n] += (envelope * rise + burst) * grain * filter.process(white)
            envelope *= fall
            burst *= burstFall
            if n > last && envelope < band.level * 1e-5 { return }
        }
    }

    private static func addMetal(_ metal: Metal, into signal: inout [Double], rate: Double) {
        var random = NoiseGenerator(seed: metal.seed)
        var cluster = [Double](repeating: 0, count: signal.count)
        cluster.withUnsafeMutableBufferPointer { out in
            // Square waves: naive (their aliases only add to the clang).
            let samples = out.baseAddress!  // a raw pointer: see addSteadyMode
            for hertz in metal.squares {
                var phase = Double(abs(random.next()))
                let step = hertz / rate
                for n in 0..<out.count {
                    samples[n] += metal.squareLevel * (phase < 0.5 ? 1 : -1)
                    phase += step
                    if phase >= 1 { phase -= 1 }
                }
            }
            // Dense partials, log-spaced at random.
            let octaves = FastMath.log2(metal.high / metal.low)
            for _ in 0..<metal.partials {
                let hertz = metal.low * FastMath.exp2(octaves * Double(abs(random.next())))
                // Longer than the cluster's envelope, which sets the overall decay; this varies it per partial.
                let decay = metal.decay * (1.5 + 3 * Double(abs(random.next())))
                addMode(
                    Mode(hertz: hertz, level: 1 / Double(metal.partials).squareRoot(), decay: decay), into: out,
                    rate: rate)
            }
        }
        // High-pass the cluster (two sections: the low end of a cymbal is weak) and shape the squares' decay.
        var first = BandFilter.Section(kind: .highPass, frequency: metal.band, q: 0.7071, rate: rate)
        var second = BandFilter.Section(kind: .highPass, frequency: metal.band, q: 0.7071, rate: rate)
        let fall = FastMath.exp(-1 / (metal.decay * rate))
        var envelope = metal.level
        for n in signal.indices {
            signal[n] += envelope * second.process(first.process(cluster[n]))
            envelope *= fall
        }
    }
}

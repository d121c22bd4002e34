import AulosDSP

/// Turns recipes into SF2 structures while the bundled font is built: renders each multi-sampled sound once
/// (one tone per root key, mono or a linked left/right pair), quantises it, splits the keyboard between its
/// roots, and lays out instruments as zones over those samples.
///
/// Threads: control side, generation time.
struct FontBuilder {
    /// A rendered multi-sample: for each root, its key range and sample indices (right: nil for mono).
    struct SampleSet {
        var zones: [(keys: ClosedRange<UInt8>, left: Int, right: Int?)]
    }

    /// One layer of an instrument: a sample set over a velocity range, tuned and placed.
    struct Layer {
        var set: SampleSet
        var velocity: ClosedRange<UInt8> = 0...127
        var cents: Int16 = 0
        var semitones: Int16 = 0
        var pan: Int16 = 0
        /// Extra attenuation of this layer, in centibels.
        var attenuation: Int16 = 0
        /// Only these keys (a layer limited to part of the keyboard).
        var keys: ClosedRange<UInt8> = 0...127
    }

    var font: SoundFontWriter

    /// Renders a multi-sampled sound: `tone(root)` at each root, the keyboard split half-way between roots.
    mutating func sampleSet(_ name: String, roots: [Int], rate: Int, stereo: Bool = false, tone: (Int) -> Tone)
        -> SampleSet
    {
        var zones: [(keys: ClosedRange<UInt8>, left: Int, right: Int?)] = []
        for (index, root) in roots.enumerated() {
            let low = index == 0 ? 0 : (roots[index - 1] + root) / 2 + 1
            let high = index == roots.count - 1 ? 127 : (root + roots[index + 1]) / 2
            let recipe = tone(root)
            // Partials stay below Nyquist up to an octave above the root; the top zone reaches key 127, and
            // band-limiting it for that would leave its sample without partials.
            let headroom = min(high - root, 12)
            let channels = (stereo ? [0, 1] : [0]).map {
                ToneSynthesis.render(recipe, note: root, sampleRate: rate, channel: $0, headroom: headroom)
            }
            // One scale for both channels of a pair, so their balance is the recipe's.
            let peak = channels.map { peakLevel($0.frames) }.max() ?? 0
            var indices: [Int] = []
            // One-shot tones lose their inaudible tails (both channels at the same length).
            let length =
                channels[0].loop == nil
                ? channels.map { trimmed($0.frames, peak: peak, rate: rate).count }.max()! : channels[0].frames.count
            for (channel, rendered) in channels.enumerated() {
                let suffix = stereo ? (channel == 0 ? "L" : "R") : ""
                indices.append(font.samples.count)
                font.samples.append(
                    .init(
                        name: "\(name) \(root)\(suffix)",
                        data: quantize(cut(rendered.frames, to: length, rate: rate), peak: peak), sampleRate: rate,
                        rootKey: UInt8(root), loop: rendered.loop, pitchCorrection: rendered.pitchCorrection,
                        kind: stereo ? (channel == 0 ? .left : .right) : .mono))
            }
            if stereo {
                font.samples[indices[0]].link = indices[1]
                font.samples[indices[1]].link = indices[0]
            }
            zones.append((UInt8(low)...UInt8(high), indices[0], stereo ? indices[1] : nil))
        }
        return SampleSet(zones: zones)
    }

    /// Adds one one-shot sample (a drum) and returns its index.
    mutating func sample(_ name: String, frames: [Double], rate: Int, rootKey: UInt8) -> Int {
        let peak = peakLevel(frames)
        font.samples.append(
            .init(
                name: name, data: quantize(trimmed(frames, peak: peak, rate: rate), peak: peak), sampleRate: rate,
                rootKey: rootKey, loop: nil))
        return font.samples.count - 1
    }

    /// A one-shot sample without its inaudible tail: cut where it stays below −66 dB of its peak (the last
    /// step of 16-bit resolution at that level), with a 5 ms fade so the cut does not tick. Saves space.
    func trimmed(_ frames: [Double], peak: Double, rate: Int) -> [Double] {
        let floor = peak * 0.0005
        guard let last = frames.lastIndex(where: { abs($0) >= floor }) else { return frames }
        let fade = rate / 200
        let end = min(frames.count, last + 1 + fade)
        var kept = Array(frames[..<end])
        for n in 0..<min(fade, end) { kept[end - 1 - n] *= Double(n) / Double(fade) }
        return kept
    }

    /// Adds an instrument made of `layers`, every zone carrying `generators` and `modulators`; returns its
    /// index. Stereo sets become two zones panned hard left and right.
    mutating func instrument(
        _ name: String, _ layers: [Layer], _ generators: [(SoundFontWriter.Generator, Int16)],
        modulators: [SoundFontWriter.Modulator] = [], attenuation: Int16 = 0
    ) -> Int {
        var zones: [SoundFontWriter.Zone] = []
        for layer in layers {
            for zone in layer.set.zones {
                let low = max(zone.keys.lowerBound, layer.keys.lowerBound)
                let high = min(zone.keys.upperBound, layer.keys.upperBound)
                guard low <= high else { continue }
                let channels: [(Int, Int16)] =
                    zone.right.map { [(zone.left, layer.pan - 500), ($0, layer.pan + 500)] } ?? [(zone.left, layer.pan)]
                for (sample, pan) in channels {
                    var list = generators
                    list.append((.initialAttenuation, attenuation + layer.attenuation))
                    if pan != 0 { list.append((.pan, max(-500, min(500, pan)))) }
                    if layer.cents != 0 { list.append((.fineTune, layer.cents)) }
                    if layer.semitones != 0 { list.append((.coarseTune, layer.semitones)) }
                    zones.append(
                        .init(
                            keyRange: low...high, velocityRange: layer.velocity, sample: sample, generators: list,
                            modulators: modulators))
                }
            }
        }
        font.instruments.append(.init(name: name, zones: zones))
        return font.instruments.count - 1
    }

    /// The first `length` frames, faded out over their last 5 ms.
    func cut(_ frames: [Double], to length: Int, rate: Int) -> [Double] {
        guard length < frames.count else { return frames }
        var kept = Array(frames[..<length])
        let fade = min(length, rate / 200)
        for n in 0..<fade { kept[length - 1 - n] *= Double(n) / Double(fade) }
        return kept
    }

    func peakLevel(_ frames: [Double]) -> Double { frames.reduce(0) { max($0, abs($1)) } }

    /// To 16 bits with the given peak at −1 dBFS (levels between instruments are set by attenuation).
    func quantize(_ frames: [Double], peak: Double) -> [Int16] {
        let scale = peak > 0 ? 0.89 * 32767 / peak : 0
        return frames.map { Int16(max(-32768, min(32767, ($0 * scale).rounded()))) }
    }
}

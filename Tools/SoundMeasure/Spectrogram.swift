#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A spectrogram picture of a stretch of audio, as an 8-bit grey PGM: time left to right, frequency bottom
/// to top on a logarithmic axis (so an octave is as tall in the bass as in the treble, as the ear hears it),
/// and level as brightness: `floor` dB (or less) black, `ceiling` dB (or more) white, linear in dB between.
/// 0 dB is a full-scale sine: a bin's power is scaled by the Hann window's gain.
///
/// Each column is one 2048-point Hann-windowed transform of the two channels' mean, centred on the column's
/// time; each row shows the loudest bin in its band (so a harmonic stays a bright line however many bins the
/// band spans), or the power interpolated between the two nearest bins where the band is narrower than a bin
/// (the bass rows).
///
/// Threads: the tool's one thread.
struct Spectrogram {
    var width = 320
    var height = 120
    var lowest = 40.0
    var highest = 16_000.0
    var floor = -100.0
    var ceiling = -10.0
    static let fftSize = 2048

    /// The picture of `span` seconds of `mono` (sampled at `sampleRate`) from `start` seconds on: `height`
    /// rows of `width` grey levels, the top row the highest band.
    func picture(of mono: [Float], sampleRate: Double, start: Double, span: Double) -> [UInt8] {
        let fft = FFT(size: Self.fftSize)
        let window = (0..<Self.fftSize).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(Self.fftSize)) }
        // A full-scale sine peaks at (sum of the window / 2)² in its bin.
        let fullScale = pow(window.reduce(0, +) / 2, 2)
        let binWidth = sampleRate / Double(Self.fftSize)
        let bands = (0..<height).map { row -> (low: Double, high: Double) in
            let step = log(highest / lowest) / Double(height)
            let fromBottom = Double(height - 1 - row)
            return (lowest * exp(step * fromBottom), lowest * exp(step * (fromBottom + 1)))
        }
        var pixels = [UInt8](repeating: 0, count: width * height)
        var frame = [Double](repeating: 0, count: Self.fftSize)
        for column in 0..<width {
            let centre = Int(((start + (Double(column) + 0.5) * span / Double(width)) * sampleRate).rounded())
            let first = centre - Self.fftSize / 2
            for index in 0..<Self.fftSize {
                let at = first + index
                frame[index] = at >= 0 && at < mono.count ? Double(mono[at]) * window[index] : 0
            }
            let power = fft.powerSpectrum(frame)
            for (row, band) in bands.enumerated() {
                let lowBin = Int((band.low / binWidth).rounded(.up))
                let highBin = min(power.count - 1, Int((band.high / binWidth).rounded(.down)))
                var level: Double
                if lowBin <= highBin {
                    level = power[lowBin...highBin].max() ?? 0
                } else {
                    let position = (band.low + band.high) / 2 / binWidth
                    let below = min(power.count - 2, Int(position))
                    let fraction = position - Double(below)
                    level = power[below] * (1 - fraction) + power[below + 1] * fraction
                }
                let decibels = 10 * log10(max(level / fullScale, 1e-30))
                let grey = (decibels - floor) / (ceiling - floor) * 255
                pixels[row * width + column] = UInt8(max(0, min(255, grey.rounded())))
            }
        }
        return pixels
    }

    /// `pixels` as a binary PGM (P5) file's bytes.
    func pgm(_ pixels: [UInt8]) -> [UInt8] {
        Array("P5\n\(width) \(height)\n255\n".utf8) + pixels
    }
}

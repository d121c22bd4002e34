/// A wavetable oscillator's table: a series of single cycles (frames) to morph through, each kept
/// band-limited like the built-in waveforms — one version per half octave of fundamental, holding only
/// the harmonics that stay below Nyquist there — so a cycle with sharp edges does not alias when played
/// high. Built once on the control thread (forward FFT of each cycle, inverse FFT per band).
///
/// Threads: built on the control thread; its `Wavetable` views are read by the render thread.
public final class MorphingWavetable: @unchecked Sendable {
    /// The most frames kept: a table with more is thinned to this many, evenly spaced (64 frames of 24
    /// bands of 2,049 samples are 12.6 MB).
    public static var maximumFrames: Int { 64 }

    public let frameCount: Int
    /// Samples from one frame's bands to the next's.
    public let frameStride: Int
    /// The first frame's tables (band b of frame k at `samples + k · frameStride + b · (length + 1)`).
    public let samples: UnsafeMutablePointer<Float>

    public enum Problem: Error, Equatable {
        case cycleLength(Int)
        case empty
    }

    /// `cycles`: single cycles of one power-of-two length, 16…4096 samples each.
    public init(cycles: [[Float]], sampleRate: Double) throws(Problem) {
        guard let length = cycles.first?.count else { throw .empty }
        guard length >= 16, length <= 4096, length & (length - 1) == 0, cycles.allSatisfy({ $0.count == length })
        else { throw .cycleLength(length) }
        let kept =
            cycles.count <= Self.maximumFrames
            ? cycles
            : (0..<Self.maximumFrames).map { cycles[$0 * (cycles.count - 1) / (Self.maximumFrames - 1)] }
        frameCount = kept.count
        let tableLength = WavetableLayout.length
        let bandStride = tableLength + 1
        frameStride = WavetableLayout.bandCount * bandStride
        samples = .allocate(capacity: frameCount * frameStride)
        // One set of twiddle factors per transform size, shared by every frame's and band's transform.
        let cycleTwiddles = FFT.Twiddles(count: length)
        let tableTwiddles = FFT.Twiddles(count: tableLength)
        for (frame, cycle) in kept.enumerated() {
            // The cycle's harmonics (DC left out: an oscillator should not carry an offset).
            var real = cycle.map(Double.init)
            var imaginary = [Double](repeating: 0, count: length)
            FFT.forward(real: &real, imaginary: &imaginary, twiddles: cycleTwiddles)
            for band in 0..<WavetableLayout.bandCount {
                // (A short cycle has fewer harmonics than the band may hold.)
                let harmonics = min(length / 2 - 1, WavetableLayout.harmonics(band: band, sampleRate: sampleRate))
                var bandReal = [Double](repeating: 0, count: tableLength)
                var bandImaginary = [Double](repeating: 0, count: tableLength)
                // Scale from the cycle's transform size to the table's.
                let scale = Double(tableLength) / Double(length)
                for k in 1...harmonics {
                    bandReal[k] = real[k] * scale
                    bandImaginary[k] = imaginary[k] * scale
                    bandReal[tableLength - k] = real[length - k] * scale
                    bandImaginary[tableLength - k] = imaginary[length - k] * scale
                }
                FFT.inverse(real: &bandReal, imaginary: &bandImaginary, twiddles: tableTwiddles)
                let table = samples + frame * frameStride + band * bandStride
                for n in 0..<tableLength { table[n] = Float(bandReal[n]) }
                table[tableLength] = table[0]
            }
        }
    }

    deinit { samples.deallocate() }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A radix-2 complex FFT of one fixed power-of-two size, its twiddles and bit reversal computed once: all the
/// spectrogram needs (a few thousand 2048-point transforms per picture), so no FFT library is pulled in.
///
/// Threads: the tool's one thread.
struct FFT {
    let size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]

    init(size: Int) {
        precondition(size > 1 && size & (size - 1) == 0, "the FFT size must be a power of two")
        self.size = size
        cosines = (0..<(size / 2)).map { cos(-2 * Double.pi * Double($0) / Double(size)) }
        sines = (0..<(size / 2)).map { sin(-2 * Double.pi * Double($0) / Double(size)) }
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { index in
            var result = 0
            for bit in 0..<bits where index & (1 << bit) != 0 { result |= 1 << (bits - 1 - bit) }
            return result
        }
    }

    /// The power |X[k]|² of bins 0…size/2 of a real frame of `size` samples.
    func powerSpectrum(_ frame: [Double]) -> [Double] {
        var real = [Double](repeating: 0, count: size)
        var imaginary = [Double](repeating: 0, count: size)
        for index in 0..<size { real[reversed[index]] = frame[index] }
        var span = 1
        while span < size {
            let stride = size / (2 * span)
            for start in Swift.stride(from: 0, to: size, by: 2 * span) {
                for offset in 0..<span {
                    let c = cosines[offset * stride]
                    let s = sines[offset * stride]
                    let a = start + offset
                    let b = a + span
                    let tr = real[b] * c - imaginary[b] * s
                    let ti = real[b] * s + imaginary[b] * c
                    real[b] = real[a] - tr
                    imaginary[b] = imaginary[a] - ti
                    real[a] += tr
                    imaginary[a] += ti
                }
            }
            span *= 2
        }
        return (0...(size / 2)).map { real[$0] * real[$0] + imaginary[$0] * imaginary[$0] }
    }
}

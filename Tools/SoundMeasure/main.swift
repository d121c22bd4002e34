// SoundMeasure: the numbers and pictures `make sound-sheet` and `make gm-songs` (scripts/sound-sheet.py,
// scripts/gm-songs.py) need from rendered audio files, computed in compiled Swift with the project's own
// BS.1770 meter (AulosDSP's LoudnessMeter): a three-minute song's true peak is some 10⁸ multiply-adds, far
// too slow for the stdlib Python the scripts are limited to. Not a user command: the scripts build it with
// `swift build -c release --product SoundMeasure` and parse its lines.
//
//   SoundMeasure FILE [--whole] [--window START SECONDS]… [--spectrogram START SECONDS OUT.pgm]…
//                     [--size WIDTH HEIGHT] [--band LOW_HZ HIGH_HZ] [--range FLOOR_DB CEILING_DB]
//
// Prints, in the order asked, one line per measurement:
//   whole FRAMES RATE LUFS TRUE_PEAK_DBTP SAMPLE_PEAK_DBFS FULL_SCALE_SAMPLES
//   window START SECONDS LUFS TRUE_PEAK_DBTP SAMPLE_PEAK_DBFS FULL_SCALE_SAMPLES
//   spectrogram OUT.pgm
// (-inf for silence). A sample is "at full scale" when its magnitude is the format's largest: 32767/32768
// for 16-bit files, 1.0 or more for float ones. The picture options apply to the --spectrogram after them.
import AulosAudioFile
import AulosDSP
import CSndfile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One file's two channels (a mono file counts as both) and what "full scale" is in its sample format.
///
/// Threads: the tool's one thread.
struct Recording {
    let left: [Float]
    let right: [Float]
    let sampleRate: Double
    let fullScale: Float

    init(path: String) throws(AudioFileError) {
        // An hour at 48 kHz: the longest openmsx song is under six minutes.
        let contents = try AudioFileContents(path: path, frameLimit: 48_000 * 3600)
        let channels = contents.channels
        left = stride(from: 0, to: contents.samples.count, by: channels).map { contents.samples[$0] }
        right =
            channels > 1 ? stride(from: 1, to: contents.samples.count, by: channels).map { contents.samples[$0] } : left
        sampleRate = contents.sampleRate
        fullScale =
            switch contents.subtype {
            case Int32(SF_FORMAT_PCM_16): 32767 / 32768
            case Int32(SF_FORMAT_PCM_24): 8_388_607 / 8_388_608
            case Int32(SF_FORMAT_PCM_32): 2_147_483_647 / 2_147_483_648
            default: 1
            }
    }

    /// Loudness (LUFS), true peak (dBTP), sample peak (dBFS) and samples at full scale of frames
    /// `range`.
    func measure(_ range: Range<Int>) -> String {
        let left = Array(self.left[range])
        let right = Array(self.right[range])
        let loudness = LoudnessMeter.integratedLoudness(left: left, right: right, sampleRate: sampleRate)
        let truePeak = LoudnessMeter.truePeak(left: left, right: right)
        var peak: Float = 0
        var atFullScale = 0
        for sample in left + right {
            peak = max(peak, abs(sample))
            if abs(sample) >= fullScale { atFullScale += 1 }
        }
        return [loudness, truePeak, 20 * log10(Double(peak))].map(Self.decibels).joined(separator: " ")
            + " \(atFullScale)"
    }

    /// Frames from `start` for `seconds`, within the recording.
    func frames(start: Double, seconds: Double) -> Range<Int> {
        let first = min(left.count, max(0, Int((start * sampleRate).rounded())))
        let last = min(left.count, max(first, Int(((start + seconds) * sampleRate).rounded())))
        return first..<last
    }

    /// A level to a hundredth of a dB (no Foundation here for String(format:)).
    static func decibels(_ value: Double) -> String {
        value.isFinite ? "\((value * 100).rounded() / 100)" : (value < 0 ? "-inf" : "inf")
    }
}

/// Why the arguments cannot be followed.
struct UsageError: Error {
    let message: String
}

func run(_ arguments: [String]) throws {
    guard let path = arguments.first else { throw UsageError(message: "no file given") }
    let recording = try Recording(path: path)
    var mono: [Float]?
    var spectrogram = Spectrogram()
    var rest = arguments.dropFirst()
    func numbers(_ count: Int, for option: String) throws -> [Double] {
        let values = rest.prefix(count).compactMap(Double.init)
        guard values.count == count else { throw UsageError(message: "\(option) takes \(count) numbers") }
        rest = rest.dropFirst(count)
        return values
    }
    while let option = rest.popFirst() {
        switch option {
        case "--whole":
            let all = 0..<recording.left.count
            print("whole \(all.count) \(Int(recording.sampleRate)) \(recording.measure(all))")
        case "--window":
            let values = try numbers(2, for: option)
            let range = recording.frames(start: values[0], seconds: values[1])
            print("window \(values[0]) \(values[1]) \(recording.measure(range))")
        case "--size":
            let values = try numbers(2, for: option)
            (spectrogram.width, spectrogram.height) = (Int(values[0]), Int(values[1]))
        case "--band":
            (spectrogram.lowest, spectrogram.highest) = try numbers(2, for: option).pair
        case "--range":
            (spectrogram.floor, spectrogram.ceiling) = try numbers(2, for: option).pair
        case "--spectrogram":
            let values = try numbers(2, for: option)
            guard let output = rest.popFirst() else { throw UsageError(message: "--spectrogram needs a file") }
            if mono == nil { mono = zip(recording.left, recording.right).map { ($0 + $1) / 2 } }
            let pixels = spectrogram.picture(
                of: mono!, sampleRate: recording.sampleRate, start: values[0], span: values[1])
            let bytes = spectrogram.pgm(pixels)
            guard let file = fopen(output, "wb"), fwrite(bytes, 1, bytes.count, file) == bytes.count,
                fclose(file) == 0
            else { throw UsageError(message: "cannot write \(output)") }
            print("spectrogram \(output)")
        default:
            throw UsageError(message: "unknown option \(option)")
        }
    }
}

extension Array where Element == Double {
    fileprivate var pair: (Double, Double) { (self[0], self[1]) }
}

/// Says why on standard error and exits with `status` (write(2): C's `stderr` is shared mutable state to Swift 6).
func fail(_ message: String, status: Int32) -> Never {
    let line = Array("SoundMeasure: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch let error as UsageError {
    fail(error.message, status: 2)
} catch let error as AudioFileError {
    fail(error.message, status: 1)
} catch {
    fail("\(error)", status: 1)
}

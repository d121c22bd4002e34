import AulosAudioFile
import AulosDSP
import Foundation

/// A synth part's wavetable from a WAV file: mono, single cycles of `cycle` samples one after another (the
/// usual layout of wavetable files: 2048-sample frames), built into a `MorphingWavetable`.
///
/// Threads: the control thread, while the rig is built.
enum WavetableFile {
    /// The largest file read (64 frames of 4096 32-bit samples are 1 MB; this leaves room for tables that
    /// get thinned to 64 frames).
    static let sizeLimit = 16 << 20

    /// Reads `path` (a file, or a bundled table by name); every problem is one line naming the file.
    static func load(_ name: String, cycle: Int, sampleRate: Double) throws(RigError) -> MorphingWavetable {
        let path = SearchPaths.wavetableFile(name)
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int else {
            let bundled = SearchPaths.wavetables.joined(separator: ", ")
            throw RigError("wavetable '\(name)': no such file (bundled: \(bundled.isEmpty ? "none found" : bundled))")
        }
        guard size <= sizeLimit else {
            throw RigError("wavetable \(path): \(size) bytes is more than the \(sizeLimit >> 20) MB a wavetable may be")
        }
        let contents: AudioFileContents
        do { contents = try AudioFileContents(path: path) } catch { throw RigError("wavetable \(error.message)") }
        guard contents.channels == 1 else {
            throw RigError("wavetable \(path): \(contents.channels) channels; a wavetable is mono")
        }
        // One NaN in a table would silence the whole rig for good once a note plays it (a reverb latches it):
        // a wavetable is audio, so every sample is a finite number within ±16 (+24 dBFS).
        if let bad = contents.samples.firstIndex(where: { !(abs($0) <= 16) }) {
            let value = contents.samples[bad]
            let what = value.isNaN ? "NaN" : value.isInfinite ? "infinite" : "\(value), not audio"
            throw RigError("wavetable \(path): sample \(bad) is \(what); a wavetable holds samples within ±1")
        }
        let frames = contents.samples.count
        guard cycle >= 16, cycle <= 4096, cycle & (cycle - 1) == 0 else {
            throw RigError("wavetable \(path): a cycle of \(cycle) samples; it must be a power of two, 16…4096")
        }
        guard frames >= cycle, frames % cycle == 0 else {
            throw RigError(
                "wavetable \(path): \(frames) samples are not whole cycles of \(cycle) (set wavetable-cycle: to "
                    + "the file's cycle length)")
        }
        let cycles = stride(from: 0, to: frames, by: cycle).map { Array(contents.samples[$0..<($0 + cycle)]) }
        do {
            return try MorphingWavetable(cycles: cycles, sampleRate: sampleRate)
        } catch {
            throw RigError("wavetable \(path): cannot be built (\(error))")
        }
    }
}

import AulosCore
import AulosMIDI
import AulosRig

#if canImport(Glibc)
import Glibc
#endif

/// A MIDI file or score ready to play: its messages at sample times, where it ends, and its tempo map.
///
/// Threads: a value, made on the control thread.
public struct InputFile: Sendable {
    public var messages: [ScheduledMessage]
    public var end: Int64
    public var tempoMap: [(beat: Double, bpm: Double)]
    /// What the reader did to get past deviations in a MIDI file, one line per kind ("song.mid: track 1,
    /// byte 188: skipped illegal system message 0xF1 (×3)"), for the summary.
    public var warnings: [String] = []

    /// The most an input file may hold. A Standard MIDI File of a day's music is a few megabytes. A file of
    /// nothing but notes takes about 27 times its size in memory as it is read and routed (measured: a
    /// 15.4 MiB one peaked at 411 MB), so the limit keeps the worst case inside a small Raspberry Pi.
    public static let sizeLimit = 16 << 20

    public init(messages: [ScheduledMessage], end: Int64, tempoMap: [(beat: Double, bpm: Double)]) {
        self.messages = messages
        self.end = end
        self.tempoMap = tempoMap
    }

    init(score: Score, sampleRate: Double) {
        let (messages, end) = score.scheduledMessages(sampleRate: sampleRate)
        self.init(messages: messages, end: end, tempoMap: score.tempoMap)
    }

    /// Reads a MIDI file (by content: files starting with "MThd", or RIFF `RMID` files) or a score, with its
    /// times at `sampleRate`. A MIDI file is read forgivingly unless `reading` says strictly.
    public static func load(_ path: String, sampleRate: Double, reading: MIDIFileReading = .forgiving)
        throws(InputFileError) -> InputFile
    {
        try load(bytes: try contents(of: path), path: path, sampleRate: sampleRate, reading: reading)
    }

    /// The bytes of an input file, within `sizeLimit`.
    static func contents(of path: String) throws(InputFileError) -> [UInt8] {
        do {
            return try FileContents.read(path, limit: sizeLimit)
        } catch {
            throw InputFileError("\(error)")
        }
    }

    /// `load(_:sampleRate:reading:)` for bytes already read from `path`.
    static func load(bytes: [UInt8], path: String, sampleRate: Double, reading: MIDIFileReading) throws(InputFileError)
        -> InputFile
    {
        if isMIDIFile(bytes) {
            do {
                let file = try StandardMIDIFile(bytes: bytes, reading: reading)
                let messages = try file.scheduledMessages(sampleRate: sampleRate)
                var input = InputFile(
                    messages: messages, end: messages.last?.sampleTime ?? 0, tempoMap: file.tempoMap)
                input.warnings = file.recoveries.lines().map { "\(path): \($0)" }
                return input
            } catch {
                throw InputFileError("\(path): \(error.message)")
            }
        }
        if midiFileExtensions.contains(where: path.lowercased().hasSuffix) {
            throw InputFileError("\(path): not a Standard MIDI File (it does not start with 'MThd')")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw InputFileError("\(path): neither a MIDI file nor a text score")
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        do {
            return try InputFile(score: Score(text: text, name: name), sampleRate: sampleRate)
        } catch {
            // A file not named as a score whose first line is not one is some other file (/etc/hostname):
            // say what it is not, without reading its line back.
            let named = path.lowercased().hasSuffix(".score") || path.lowercased().hasSuffix(".txt")
            if !named, error.message.hasPrefix("\(name):1: expected TIME COMMAND") {
                throw InputFileError(
                    "\(path): neither a MIDI file (it does not start with 'MThd') nor a score (its first line is "
                        + "not TIME COMMAND; docs/score.md)")
            }
            throw InputFileError(error.message)
        }
    }

    /// Names a MIDI file goes by: Standard MIDI Files, karaoke files (SMF with lyrics) and RIFF-wrapped ones.
    static let midiFileExtensions = [".mid", ".midi", ".smf", ".kar", ".rmi"]

    /// Whether the file at `path` is a Standard MIDI File or a RIFF `RMID` file, by its first 12 bytes. Only a
    /// regular file is looked into (reading a pipe would take what the load needs); anything else, or a file
    /// that cannot be read, is not (the load that follows says why).
    public static func isMIDIFile(path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        var bytes = [UInt8](repeating: 0, count: 12)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, 12) }
        return count > 0 && isMIDIFile(Array(bytes.prefix(count)))
    }

    /// A Standard MIDI File or a RIFF `RMID` file, by content.
    static func isMIDIFile(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: "MThd".utf8)
            || (bytes.count >= 12 && bytes.starts(with: "RIFF".utf8) && bytes[8..<12].elementsEqual("RMID".utf8))
    }

    /// `path`, or the built-in demo piece (presets/scores/demo.score) when nil.
    public static func load(orDemo path: String?, sampleRate: Double, reading: MIDIFileReading = .forgiving)
        throws(InputFileError) -> InputFile
    {
        guard let path = path ?? SearchPaths.demoScore else {
            throw InputFileError(
                "the demo piece (scores/demo.score) is missing from every preset folder "
                    + "(\(SearchPaths.presetFolders.joined(separator: ", "))); set AULOS_PRESETS or give a file")
        }
        return try load(path, sampleRate: sampleRate, reading: reading)
    }
}

/// An input file that cannot be played, as one line naming the file (and the line or byte) and what is
/// wrong: `song.mid: track 2, byte 188: …`, `tune.score:12: unknown note 'H4'`.
///
/// Threads: a value.
public struct InputFileError: ReportableError, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }

}

import AulosCore
import AulosMIDI

/// `aulos check FILE`: what a strict reading of an input file finds, rendering nothing — for people who
/// validate MIDI files. A file that deviates from the specification also says what a forgiving reading
/// (the one `aulos render` and `aulos play` use) does to get past each deviation.
///
/// Threads: a value, made on the control thread.
public struct InputCheck: Sendable {
    public var path: String
    /// "a Standard MIDI File, format 1: 3 tracks, 480 ticks a quarter note, 1,234 events, plays 0:02:31".
    public var description: String
    /// The strict reader's error (the first deviation), or nil when the file follows the specification.
    public var deviation: String?
    /// Every kind of deviation a forgiving reading got past, with its track, byte and count.
    public var recoveries: [String]

    /// Checks `path`. A file that cannot be read, or is no MIDI file or score at all, is an error.
    public static func run(_ path: String) throws(InputFileError) -> InputCheck {
        let bytes = try InputFile.contents(of: path)
        guard InputFile.isMIDIFile(bytes) else {
            let input = try InputFile.load(bytes: bytes, path: path, sampleRate: rate, reading: .strict)
            let events = input.messages.count
            return InputCheck(
                path: path,
                description: "a score: \(events) event\(events == 1 ? "" : "s"), plays \(playingTime(input.end))",
                deviation: nil, recoveries: [])
        }
        do {
            let file = try StandardMIDIFile(bytes: bytes, reading: .strict)
            return InputCheck(path: path, description: try describe(file), deviation: nil, recoveries: [])
        } catch  where error.kind == .deviation {
            do {
                let file = try StandardMIDIFile(bytes: bytes, reading: .forgiving)
                return InputCheck(
                    path: path, description: "read forgivingly, " + (try describe(file)), deviation: error.message,
                    recoveries: file.recoveries.all.map(\.description))
            } catch {
                throw InputFileError("\(path): \(error.message)")
            }
        } catch {
            throw InputFileError("\(path): \(error.message)")
        }
    }

    private static let rate = 48_000.0

    private static func describe(_ file: StandardMIDIFile) throws(MIDIFileError) -> String {
        let messages = try file.scheduledMessages(sampleRate: rate)
        let division =
            switch file.division {
            case .ticksPerQuarterNote(let ticks): "\(ticks) ticks a quarter note"
            case .smpte(let fps, let ticks): "SMPTE \(fps == 29 ? "29.97" : "\(fps)") fps × \(ticks) ticks"
            }
        let tracks = file.tracks.count
        return "a Standard MIDI File, format \(file.format): \(tracks) track\(tracks == 1 ? "" : "s"), \(division), "
            + "\(messages.count) event\(messages.count == 1 ? "" : "s"), "
            + "plays \(playingTime(messages.last?.sampleTime ?? 0))"
    }

    private static func playingTime(_ frames: Int64) -> String { (Double(frames) / rate).hoursMinutesSeconds }
}

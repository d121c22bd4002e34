import AulosTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `aulos play --record` and `record start` when things go wrong: a process killed outright mid-take, a
/// disk that fills, a name that exists or is a folder. Played on ALSA's `null` device, paced by the clock.
@Suite(.serialized) struct RecordCommandTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "aulos-record-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func removeFolder() { try? FileManager.default.removeItem(atPath: folder) }

    /// A WAV's header read by hand (as another program would): the frames its data chunk says it holds, and
    /// the whole frames from the chunk's start to the end of the file.
    static func wavSizes(_ path: String) -> (described: Int, present: Int)? {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 12 else { return nil }
        let bytes = [UInt8](data)
        func word(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        guard String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF" else { return nil }
        var position = 12
        var blockAlign = 0
        while position + 8 <= bytes.count {
            let tag = String(decoding: bytes[position..<(position + 4)], as: UTF8.self)
            let size = word(position + 4)
            if tag == "fmt " { blockAlign = Int(bytes[position + 20]) | Int(bytes[position + 21]) << 8 }
            if tag == "data" && blockAlign > 0 {
                // The RIFF size must agree too: a reader that trusts it would stop short or read past.
                guard word(4) == position + size else { return (-1, (bytes.count - position - 8) / blockAlign) }
                return (size / blockAlign, (bytes.count - position - 8) / blockAlign)
            }
            position += 8 + size + (size & 1)
        }
        return nil
    }

    /// SIGKILL 4.5 s into `aulos play --record take.wav` (the OOM killer, TimeoutStopSec, a power cut): the
    /// temporary file's header already describes all but the last checkpoint's seconds of the audio on
    /// disk (it said 0 bytes), and the next `--record take.wav` moves it aside as take.recovered-PID.wav
    /// with its header repaired to every whole frame, and says so (it was deleted).
    @Test func aKilledRecordingIsKeptAsideAndPlayable() throws {
        defer { removeFolder() }
        let take = folder + "/take.wav"
        let play = Process()
        play.executableURL = URL(fileURLWithPath: aulosBinary)
        play.arguments = ["play", "--demo", "--duration", "30", "--device", "null", "--record", take]
        play.standardOutput = FileHandle.nullDevice
        play.standardError = FileHandle.nullDevice
        try play.run()
        let partial = take + ".partial-\(play.processIdentifier)"
        // Once 4.5 s of audio are on disk (the play is paced by the clock: 4.5 s after the recording started,
        // later on a machine too loaded to keep up, where a fixed wait would kill it early).
        #expect(
            Wait.until(seconds: 30, pollMicroseconds: 20_000) {
                (Self.wavSizes(partial)?.present ?? 0) >= 48_000 * 9 / 2
            })
        kill(play.processIdentifier, SIGKILL)
        play.waitUntilExit()
        #expect(access(take, F_OK) != 0)
        let killed = try #require(Self.wavSizes(partial), "no WAV left at \(partial)")
        let (described, present) = (Double(killed.described) / 48_000, Double(killed.present) / 48_000)
        print("killed with 4.5 s recorded: the header describes \(described) s of the \(present) s on disk")
        #expect(present > 3.5)
        #expect(described >= present - 2.1, "the header lags the audio by at most a checkpoint (2 s)")

        let again = try runAulos(["play", "--demo", "--duration", "1", "--device", "null", "--record", take])
        #expect(again.status == 0, "\(again.stderr)")
        let recovered = folder + "/take.recovered-\(play.processIdentifier).wav"
        #expect(
            again.stderr.contains(
                "aulos: warning: \(partial) was left by a recording killed before it finished: kept as \(recovered)"),
            "\(again.stderr)")
        let repaired = try #require(Self.wavSizes(recovered))
        #expect(repaired.described == repaired.present && repaired.present == killed.present)
        #expect(access(partial, F_OK) != 0)
        #expect(Self.wavSizes(take).map { $0.described == $0.present && $0.present >= 48_000 } == true)
    }

    /// `--record` to a name that exists, to a folder, or into a folder that is not there: refused before
    /// anything plays, in one line, with a non-zero exit; the file that exists is untouched. `--force`
    /// replaces it. A part's file (`--record-parts`) that exists is refused the same way.
    @Test func recordingNeverReplacesATakeUnlessForcedAndRefusesUpFront() throws {
        defer { removeFolder() }
        let existing = folder + "/take.wav"
        try "an older take".write(toFile: existing, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder + "/adir.wav", withIntermediateDirectories: true)
        try "a file".write(toFile: folder + "/afile", atomically: true, encoding: .utf8)
        let refusals = [
            (existing, "\(existing) exists; choose another name, or pass --force to replace it"),
            (folder + "/adir.wav", "\(folder)/adir.wav is a folder: record to a file in it"),
            (folder + "/missing/take.wav", "there is no folder \(folder)/missing; create it or record elsewhere"),
            (folder + "/afile/take.wav", "there is no folder \(folder)/afile"),
        ]
        for (path, message) in refusals {
            let started = Date()
            let result = try runAulos(["play", "--demo", "--duration", "5", "--device", "null", "--record", path])
            #expect(result.status == 1, "\(path)")
            #expect(result.stderr.hasPrefix("aulos: error: ") && result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stdout.isEmpty, "nothing played: \(result.stdout)")
            #expect(Date().timeIntervalSince(started) < 4, "refused up front, not after playing")
        }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "an older take")

        let forced = try runAulos(
            ["play", "--demo", "--duration", "0.5", "--device", "null", "--record", existing, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(Self.wavSizes(existing).map { $0.present >= 24_000 } == true)

        // A part's file: named after the rig's part, so checked as the recording opens, still before playing.
        try "name: One\nparts:\n  - name: Lead\n    instrument: synth\n".write(
            toFile: folder + "/one.yaml", atomically: true, encoding: .utf8)
        try "an older part".write(toFile: folder + "/new.Lead.wav", atomically: true, encoding: .utf8)
        let parts = try runAulos([
            "play", "--demo", "--duration", "5", "--device", "null", "--rig", folder + "/one.yaml", "--record",
            folder + "/new.wav", "--record-parts",
        ])
        #expect(parts.status == 1)
        #expect(parts.stderr.contains("\(folder)/new.Lead.wav exists; choose another name, or pass --force"))
        #expect(try String(contentsOfFile: folder + "/new.Lead.wav", encoding: .utf8) == "an older part")
        #expect(access(folder + "/new.wav", F_OK) != 0)
    }

    /// `aulos play --record` onto a disk that fills (a 1 MiB tmpfs: 2.7 s of float stereo): a warning as it
    /// happens, the run plays on, and ends in an error; the file holds what fitted, its header whole (the
    /// take was deleted at the end of the run).
    @Test(.enabled(if: SmallDisk.canMount, SmallDisk.skipReason))
    func aFullDiskKeepsWhatFitAndSaysSo() throws {
        defer { removeFolder() }
        let disk = try SmallDisk(size: "1m")
        let take = disk.folder + "/take.wav"
        let result = try runAulos(["play", "--demo", "--duration", "4", "--device", "null", "--record", take])
        #expect(result.status == 1)
        let failure = "the recording to \(take) stopped: No space left on device; the "
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines.contains { $0.hasPrefix("aulos: warning: " + failure) && $0.hasSuffix("s recorded are kept in it") })
        #expect(lines.last?.hasPrefix("aulos: error: " + failure) == true, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("played 0:04"), "it played on: \(result.stdout)")
        let sizes = try #require(Self.wavSizes(take))
        print("a full 1 MiB disk keeps \(Double(sizes.present) / 48_000) s")
        #expect(sizes.described == sizes.present && Double(sizes.present) / 48_000 > 2.5)
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.folder) == ["take.wav"])
    }

    /// The same in the service: `record start` onto a disk that fills shows the failure in the status and as
    /// a warning line when it happens (it showed "recording" to the end), and `record stop` keeps the file
    /// and says what happened (it deleted it).
    @Test(.enabled(if: SmallDisk.canMount, SmallDisk.skipReason))
    func aFullDiskInTheServiceIsInTheStatusAndKept() throws {
        defer { removeFolder() }
        let disk = try SmallDisk(size: "1m")
        let aulos = try BackgroundAulos(
            ["play", "--service", "--device", "null", "--record-dir", disk.folder], in: folder)
        #expect(try aulos.waitForStatus { $0["rig"] != nil }, "\(aulos.stderr)")
        #expect(aulos.request("record start take.wav")?.contains(#""ok":true"#) == true)
        #expect(try aulos.waitForStatus { $0["recordingFailure"] != nil }, "\(aulos.stderr)")
        let status = try #require(try aulos.status())
        let failure = try #require(status["recordingFailure"] as? String)
        #expect(failure.hasPrefix("the recording to \(disk.folder)/take.wav stopped: No space left on device"))
        #expect(aulos.stderr.contains("warning: " + failure), "\(aulos.stderr)")
        let stop = try #require(aulos.request("record stop"))
        #expect(stop.contains(#""failed":"the recording to"#), "\(stop)")
        let sizes = try #require(Self.wavSizes(disk.folder + "/take.wav"))
        #expect(sizes.described == sizes.present && Double(sizes.present) / 48_000 > 2.5)
        // Still shown after the stop, until the next recording starts.
        #expect(try aulos.waitForStatus { $0["recordingTo"] == nil && $0["recordingFailure"] as? String == failure })
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0)
    }
}

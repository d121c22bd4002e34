import AulosTestSupport
import Foundation
import Testing

/// `aulos render` never destroys a user's file: it writes beside the target and renames into place, refuses
/// to write over its own input, keeps the old file on a write error, finishes a valid file when stopped,
/// and refuses, before writing anything, an input that would play for longer than the limit.
@Suite struct RenderCommandTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "aulos-render-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func bytes(_ name: String) -> Data { FileManager.default.contents(atPath: folder + "/" + name) ?? Data() }

    func write(_ text: String, _ name: String) throws {
        try text.write(toFile: folder + "/" + name, atomically: false, encoding: .utf8)
    }

    /// Files other than `names` in the folder (temporary files left behind).
    func others(than names: [String]) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { !names.contains($0) }.sorted()
    }

    /// A score named song.wav renders, by default, to song.wav: refused, and the score is untouched.
    @Test func theOutputIsNeverTheInput() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write("0b note C4 1b\n", "song.wav")
        let result = try runAulos(["render", "song.wav"], in: folder)
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "aulos: error: the output song.wav is also an input (song.wav); "
                + "give the output another name with -o\n")
        #expect(bytes("song.wav") == Data("0b note C4 1b\n".utf8))
        let font = try runAulos(
            ["render", "--instrument", "sampler", "--soundfont", "font.wav", "-o", "font.wav"], in: folder)
        #expect(font.status == 1)
    }

    /// Past a file-size limit (a full disk, a quota) the old file stays and no temporary file is left; the
    /// message says what the system said, for WAV and for FLAC (whose libsndfile error read "decoder").
    @Test(arguments: ["out.wav", "out.flac"])
    func aWriteErrorKeepsTheOldFile(name: String) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write("the user's old render", name)
        let result = try runAulos(["render", "-o", name], in: folder, limitingFileSize: 200_000)
        #expect(result.status == 1)
        #expect(
            result.stderr == "aulos: error: cannot write \(name): File too large (the existing \(name) is untouched)\n")
        #expect(bytes(name) == Data("the user's old render".utf8))
        #expect(try others(than: [name]) == [])
    }

    /// SIGINT while rendering: exit 130, and the file is a valid one of what was rendered, not a header
    /// that says 0 s over megabytes of data. SIGKILL, which cannot be caught: the old file is untouched.
    @Test func stoppingMidRenderLeavesAValidFile() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write((0..<2400).map { "\($0)b note C4 1b" }.joined(separator: "\n"), "long.score")  // 20 minutes
        for (signal, name) in [(SIGINT, "stopped.wav"), (SIGKILL, "killed.wav")] {
            try write("the user's old render", name)
            let render = Process()
            render.executableURL = URL(fileURLWithPath: aulosBinary)
            render.arguments = ["render", "long.score", "-o", name]
            render.currentDirectoryURL = URL(fileURLWithPath: folder)
            let out = Pipe()
            render.standardOutput = out
            render.standardError = FileHandle.nullDevice
            try render.run()
            let partial = folder + "/\(name).partial-\(render.processIdentifier)"
            Wait.until(seconds: 60) {
                ((try? FileManager.default.attributesOfItem(atPath: partial))?[.size] as? Int ?? 0) >= 2_000_000
            }
            kill(render.processIdentifier, signal)
            let said = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            render.waitUntilExit()
            if signal == SIGINT {
                #expect(render.terminationStatus == 130)
                #expect(said.hasPrefix("stopped by SIGINT after 0:"), "\(said)")
                #expect(said.contains(" of 0:20:30: the file is valid and holds what was rendered; wrote stopped.wav"))
                let frames = Int(said.split(separator: " ").drop { $0 != "stopped.wav:" }.dropFirst().first ?? "") ?? 0
                #expect(frames > 0)
                // The header's sizes agree with the data: 44 bytes of header, 4 bytes a frame.
                let file = bytes(name)
                #expect(file.count == 44 + frames * 4)
                let riffSize = file.count >= 8 ? file[4..<8].enumerated().reduce(0) { $0 | Int($1.1) << (8 * $1.0) } : 0
                #expect(riffSize == file.count - 8)
            } else {
                #expect(render.terminationReason == .uncaughtSignal)
                #expect(bytes(name) == Data("the user's old render".utf8))
            }
        }
    }

    /// --sample-rate and --slice win over a rig's own (they were silently ignored with --rig, even for a rig
    /// that sets neither), and the summary names every channel the rig leaves out, the drums included.
    @Test func flagsWinOverTheRigAndEverySkippedChannelIsNamed() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rig = repositoryRoot + "/presets/rigs/split-keys.yaml"
        let result = try runAulos(
            ["render", "--rig", rig, "--sample-rate", "32000", "--slice", "64", "-o", "out.wav"], in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(", 32000 Hz, 2 ch, Int16, interleaved, 64-frame slices, "), "\(result.stdout)")
        #expect(result.stdout.contains("; channels 2, 3 and 10 (drums) skipped: no part plays them ("))
        // Without a rig the synth plays every channel, its drum kit on 10: nothing is skipped.
        let plain = try runAulos(["render", "-o", "plain.wav"], in: folder)
        #expect(plain.status == 0 && !plain.stdout.contains("skipped"), "\(plain.stdout)")
    }

    /// A 37-byte MIDI file whose note-off is at tick 2²⁴ plays for a day and a quarter: refused before
    /// anything is written, with the length, the limit, the size it would write and how to allow it.
    @Test func anInputLongerThanTheLimitIsRefusedUpFront() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let track: [UInt8] = [0, 0x90, 60, 100, 0x88, 0x80, 0x80, 0, 0x80, 60, 0, 0, 0xFF, 0x2F, 0]
        let file: [UInt8] =
            Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 96] + Array("MTrk".utf8)
            + [0, 0, 0, UInt8(track.count)] + track
        #expect(file.count == 37)
        FileManager.default.createFile(atPath: folder + "/long.mid", contents: Data(file))
        let result = try runAulos(["render", "long.mid"], in: folder)
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "aulos: error: long.mid plays for 24:16:51 with its tail, longer than the 24:00:00 limit; it would "
                + "write 16.8 GB (--max-duration SECONDS allows more, up to 168 hours)\n")
        #expect(try others(than: ["long.mid"]) == [])
        let play = try runAulos(["play", "long.mid", "--device", "null"], in: folder)
        #expect(play.status == 1 && play.stderr.contains("longer than the 24:00:00 limit (--max-duration"))
        let short = try runAulos(["render", "long.mid", "--max-duration", "10"], in: folder)
        #expect(short.stderr.contains("plays for 24:16:51 with its tail, longer than the 0:00:10 limit"))
    }
}

/// `--tuning FILE.scl [--keymap FILE.kbm]`: a 12-EDO scale renders the same file as no scale, 19-EDO a
/// different one, and a broken scale is one line naming its line.
@Suite struct TuningCommandTests {
    @Test func scalesRetuneTheSynth() throws {
        let folder = NSTemporaryDirectory() + "aulos-tuning-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func write(_ text: String, _ name: String) throws {
            try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        try write("0b tempo 120\n0b note C4 1b vel=100\n1b note E4 1b\n2b end\n", "song.score")
        try write("12-EDO\n12\n" + (1...11).map { "\($0)00.0\n" }.joined() + "2/1\n", "12.scl")
        try write("19-EDO\n19\n" + (1...18).map { "\(Double($0) * 1200 / 19)\n" }.joined() + "2/1\n", "19.scl")
        try write("broken\n3\n100.0\nfifth\n", "broken.scl")
        func render(_ extra: [String], _ output: String) throws -> CommandResult {
            try runAulos(["render", "song.score", "--dry", "-o", output] + extra, in: folder)
        }
        for (extra, output) in [
            ([], "plain.wav"), (["--tuning", "12.scl"], "12.wav"), (["--tuning", "19.scl"], "19.wav"),
        ] {
            let result = try render(extra, output)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let plain = FileManager.default.contents(atPath: folder + "/plain.wav")
        #expect(plain != nil && plain == FileManager.default.contents(atPath: folder + "/12.wav"))
        #expect(plain != FileManager.default.contents(atPath: folder + "/19.wav"))
        let broken = try render(["--tuning", "broken.scl"], "never.wav")
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("broken.scl:4: 'fifth' is not a pitch"), "\(broken.stderr)")
        #expect(broken.stderr.split(separator: "\n").count == 1, "\(broken.stderr)")
        // The sampler too: 12-EDO is the same file, 19-EDO another.
        for (extra, output) in [
            (["--instrument", "sampler"], "s-plain.wav"),
            (["--instrument", "sampler", "--tuning", "12.scl"], "s-12.wav"),
            (["--instrument", "sampler", "--tuning", "19.scl"], "s-19.wav"),
        ] {
            let result = try render(extra, output)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let sampled = FileManager.default.contents(atPath: folder + "/s-plain.wav")
        #expect(sampled != nil && sampled == FileManager.default.contents(atPath: folder + "/s-12.wav"))
        #expect(sampled != FileManager.default.contents(atPath: folder + "/s-19.wav"))
        let stray = try render(["--keymap", "x.kbm"], "never.wav")
        #expect(stray.stderr.contains("--keymap goes with --tuning"), "\(stray.stderr)")
    }
}

/// More events in one slice than a part's event list holds: the rest are carried into the next slice, late
/// and counted, never dropped — a burst of 2,100 controllers before a note-off used to drop 53 events, the
/// note-off among them, and the note sounded to the end of the file.
@Suite struct EventBurstTests {
    /// A format-0 MIDI file: a note-on, then a tick later (96 ticks a beat at 120 BPM: 5.2 ms) 2,100
    /// modulation-wheel messages and the note-off, all in one slice.
    static func burstFile() -> Data {
        var track: [UInt8] = [0x00, 0x90, 60, 100]
        for index in 0..<2100 { track += [index == 0 ? 0x01 : 0x00, 0xB0, 1, UInt8(index % 128)] }
        track += [0x00, 0x80, 60, 0, 0x00, 0xFF, 0x2F, 0x00]
        func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) } }
        let header: [UInt8] = Array("MThd".utf8) + be32(6) + [0, 0, 0, 1, 0, 96]
        return Data(header + Array("MTrk".utf8) + be32(track.count) + track)
    }

    @Test func aBurstOfControllersDelaysTheNoteOffInsteadOfLosingIt() throws {
        let folder = NSTemporaryDirectory() + "aulos-burst-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.burstFile().write(to: URL(fileURLWithPath: folder + "/burst.mid"))
        let result = try runAulos(
            ["render", "burst.mid", "-o", "out.wav", "--format", "float", "--dry", "--instrument", "synth"], in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("54 events played up to"), "\(result.stdout)")
        #expect(!result.stdout.contains("events dropped"), "\(result.stdout)")
        // The tail's last quarter of a second: silent once the note was released (held, it rang to the end).
        let samples = try GuardedOutputTests.floatSamples(folder + "/out.wav")
        let lastQuarter = samples.suffix(2 * 12_000)
        #expect(lastQuarter.allSatisfy { abs($0) < 1e-3 }, "peak \(lastQuarter.map(abs).max() ?? 0)")
    }
}

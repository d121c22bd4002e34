import Foundation
import Testing

/// MIDI files as people have them, from the command line: `aulos render` plays a file that deviates from
/// the specification exactly as it plays the file without the deviation, and says what it read past;
/// `--strict` and `aulos check` report the deviation as the reader always has.
@Suite struct CheckCommandTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "aulos-check-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// A format-0 file of a C-major scale (a quarter note each at 96 ticks a quarter) with `insert` before
    /// the fifth note.
    func scale(insert: [UInt8] = []) -> [UInt8] {
        var track: [UInt8] = []
        for (index, note) in [60, 62, 64, 65, 67, 69, 71, 72].enumerated() as EnumeratedSequence<[UInt8]> {
            if index == 4 { track += insert }
            track += [0x00, 0x90, note, 100, 0x60, 0x90, note, 0]
        }
        track += [0x00, 0xFF, 0x2F, 0x00]
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 96] + Array("MTrk".utf8)
            + [0, 0, 0, UInt8(track.count)] + track
    }

    func write(_ bytes: [UInt8], _ name: String) {
        FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(bytes))
    }

    func contents(_ name: String) -> Data { FileManager.default.contents(atPath: folder + "/" + name) ?? Data() }

    @Test func aDeviantFilePlaysLikeTheCleanOneWithAWarning() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        write(scale(), "clean.mid")
        write(scale(insert: [0x00, 0xF1, 0x7F, 0x00, 0xF1, 0x7F, 0x00, 0xF8]), "illegal.mid")
        #expect(try runAulos(["render", "clean.mid"], in: folder).status == 0)
        let result = try runAulos(["render", "illegal.mid"], in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr
                == "aulos: warning: illegal.mid: track 1, byte 56: skipped illegal system message 0xF1, 0xF8 (×3)\n")
        #expect(result.stdout.contains("16 events"), "\(result.stdout)")
        #expect(contents("illegal.wav") == contents("clean.wav") && !contents("clean.wav").isEmpty)

        let strict = try runAulos(["render", "illegal.mid", "--strict", "-o", "strict.wav"], in: folder)
        #expect(strict.status == 1)
        #expect(
            strict.stderr
                == "aulos: error: illegal.mid: track 1, byte 56: system message 0xf1 is not allowed in a MIDI file "
                + "track\n"
        )
        #expect(!FileManager.default.fileExists(atPath: folder + "/strict.wav"))
    }

    /// A file that is neither MIDI nor a score (and not named one) is said to be so, without its first line
    /// read back (`aulos check /etc/hostname` reported "expected TIME COMMAND, got 'vm'").
    @Test func aFileThatIsNeitherIsSaidToBe() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "secret-host-name\n".write(toFile: folder + "/hostname", atomically: true, encoding: .utf8)
        let result = try runAulos(["check", folder + "/hostname"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("neither a MIDI file (it does not start with 'MThd') nor a score"))
        #expect(!result.stderr.contains("secret-host-name"), "\(result.stderr)")
    }

    @Test func karaokeAndRIFFFilesPlay() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        write(scale(), "clean.mid")
        // Karaoke: a Standard MIDI File with lyric meta events, named .kar.
        write(scale(insert: [0x00, 0xFF, 0x05, 0x03] + Array("Do ".utf8)), "song.kar")
        func le32(_ value: Int) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) } }
        let data = Array("data".utf8) + le32(scale().count) + scale()
        write(Array("RIFF".utf8) + le32(4 + data.count) + Array("RMID".utf8) + data, "song.rmi")
        for name in ["clean.mid", "song.kar", "song.rmi"] {
            let result = try runAulos(["render", name, "-o", name + ".wav"], in: folder)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(name): \(result.stderr)")
        }
        #expect(contents("song.kar.wav") == contents("clean.mid.wav"))
        #expect(contents("song.rmi.wav") == contents("clean.mid.wav"))
        // A .kar or .rmi file that is not a MIDI file says so.
        try "hello\n".write(toFile: folder + "/text.kar", atomically: false, encoding: .utf8)
        let text = try runAulos(["render", "text.kar"], in: folder)
        #expect(text.stderr == "aulos: error: text.kar: not a Standard MIDI File (it does not start with 'MThd')\n")
    }

    @Test func checkValidatesStrictlyAndSaysWhatAPlayerReadsPast() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        write(scale(), "clean.mid")
        write(scale(insert: [0x00, 0xF4]), "illegal.mid")
        try "0b note C4 1b\n1b note E4 1b\n".write(toFile: folder + "/tune.score", atomically: false, encoding: .utf8)
        let clean = try runAulos(["check", "clean.mid", "tune.score"], in: folder)
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(
            clean.stdout
                == "clean.mid: valid: a Standard MIDI File, format 0: 1 track, 96 ticks a quarter note, 16 events, "
                + "plays 0:00:04\ntune.score: valid: a score: 4 events, plays 0:00:01\n")
        let result = try runAulos(["check", "clean.mid", "illegal.mid", "missing.mid"], in: folder)
        #expect(result.status == 1)
        #expect(
            result.stderr.split(separator: "\n") == [
                "aulos: error: illegal.mid: track 1, byte 56: system message 0xf4 is not allowed in a MIDI file track",
                "aulos: error: missing.mid: No such file or directory",
            ], "\(result.stderr)")
        #expect(
            result.stdout.contains(
                "illegal.mid: deviates from the specification; read forgivingly, a Standard MIDI File, format 0: "
                    + "1 track, 96 ticks a quarter note, 16 events, plays 0:00:04\n  track 1, byte 56: skipped illegal "
                    + "system message 0xF4\n"), "\(result.stdout)")
        let none = try runAulos(["check"], in: folder)
        #expect(none.status != 0 && none.stderr.contains("Missing expected argument"), "\(none.stderr)")
    }

    @Test func strictIsForFiles() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try runAulos(["play", "--strict", "--device", "null"], in: folder)
        #expect(result.status != 0 && result.stderr.contains("--strict is for playing a MIDI file"), "\(result.stderr)")
    }
}

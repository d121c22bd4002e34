import AulosCore
import AulosTestSupport
import CSndfile
import Testing

@testable import AulosAudioFile

#if canImport(Glibc)
import Glibc
#endif

/// WAV and FLAC through libsndfile: what is written reads back the same, and what cannot be written is
/// refused before anything is.
@Suite struct AudioFileWriterTests {
    /// A ramp written as Int16 and read back is within half a step; as float, exact.
    @Test(arguments: [("wav", SampleFormat.int16), ("wav", .float32), ("flac", .int24)])
    func whatIsWrittenReadsBack(type: String, sample: SampleFormat) throws {
        let path = TestFiles.scratch("ramp.\(type)")
        defer { unlink(path) }
        let frames = 1000
        let samples = (0..<(2 * frames)).map { Float($0 % 200) / 100 - 1 }
        let writer = try AudioFileWriter(
            path: path, format: StreamFormat(sample: sample, channels: 2, sampleRate: 44_100, interleaved: true))
        try writeConverted(samples, as: sample, frames: frames, to: writer)
        try writer.close()
        let file = try AudioFileContents(path: path)
        #expect(file.channels == 2 && file.sampleRate == 44_100 && file.frameCount == frames)
        let step: Float = sample == .int16 ? 1 / 32768 : sample == .int24 ? 1 / 8_388_608 : 0
        let worst = zip(file.samples, samples).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= step / 2 + 1e-9, "worst error \(worst)")
    }

    /// The writer takes frames in its own format: converts the float ramp the way the Generic Output would.
    func writeConverted(_ samples: [Float], as sample: SampleFormat, frames: Int, to writer: AudioFileWriter) throws {
        switch sample {
        case .int16:
            let values = samples.map { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
            try values.withUnsafeBytes { try writer.write($0.baseAddress!, frameCount: frames) }
        case .int24:
            var bytes: [UInt8] = []
            for value in samples {
                let scaled = Int32(max(-8_388_608, min(8_388_607, (value * 8_388_608).rounded())))
                bytes += [
                    UInt8(truncatingIfNeeded: scaled), UInt8(truncatingIfNeeded: scaled >> 8),
                    UInt8(truncatingIfNeeded: scaled >> 16),
                ]
            }
            try bytes.withUnsafeBytes { try writer.write($0.baseAddress!, frameCount: frames) }
        default:
            try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frameCount: frames) }
        }
    }

    @Test func flacRefusesFloatAndUnknownExtensionsAreRefused() {
        let f32 = StreamFormat(sample: .float32, channels: 2, sampleRate: 48_000, interleaved: true)
        let refusals: [(String, StreamFormat, String)] = [
            (TestFiles.scratch("x.flac"), f32, "FLAC holds 16- or 24-bit integer samples"),
            (TestFiles.scratch("x.mp3"), f32, "unknown file type; use .wav or .flac"),
            ("/nonexistent-dir/x.wav", f32, "cannot write /nonexistent-dir/x.wav: No such file or directory"),
            (TestFiles.scratch("x.wav"), .canonical(channels: 2, sampleRate: 48_000), "from interleaved frames"),
        ]
        for (path, format, expected) in refusals {
            do {
                _ = try AudioFileWriter(path: path, format: format)
                Issue.record("accepted \(path)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
            #expect(access(path, F_OK) != 0)
        }
    }

    static let stereo16 = StreamFormat(sample: .int16, channels: 2, sampleRate: 48_000, interleaved: true)

    /// Writes `frames` frames of a quiet ramp.
    static func writeFrames(_ frames: Int, to writer: AudioFileWriter) throws {
        let samples = (0..<(2 * frames)).map { Int16(truncatingIfNeeded: $0) }
        try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frameCount: frames) }
    }

    /// The target is the old file until `close()`, then the whole new one; the temporary file is gone.
    @Test func aFileAppearsOnlyWhenWhole() throws {
        let path = TestFiles.scratch("whole.wav")
        defer { unlink(path) }
        TestFiles.write("the user's file", to: path)
        chmod(path, 0o640)
        let writer = try AudioFileWriter(path: path, format: Self.stereo16)
        try Self.writeFrames(4800, to: writer)
        #expect(TestFiles.bytes(path) == Array("the user's file".utf8))
        #expect(access(writer.temporaryPath, F_OK) == 0)
        try writer.close()
        #expect(access(writer.temporaryPath, F_OK) != 0)
        #expect(try AudioFileContents(path: path).frameCount == 4800)
        var info = stat()
        stat(path, &info)
        #expect(info.st_mode & 0o777 == 0o640, "the new file keeps the old one's permissions")
    }

    /// A writer given up on (a failed render) or dropped leaves the target exactly as it was.
    @Test func aWriterThatDoesNotFinishLeavesTheTarget() throws {
        let path = TestFiles.scratch("kept.wav")
        defer { unlink(path) }
        TestFiles.write("the user's file", to: path)
        var temporary = ""
        do {
            let writer = try AudioFileWriter(path: path, format: Self.stereo16)
            temporary = writer.temporaryPath
            try Self.writeFrames(4800, to: writer)
        }
        #expect(TestFiles.bytes(path) == Array("the user's file".utf8))
        #expect(access(temporary, F_OK) != 0)
        let writer = try AudioFileWriter(path: path, format: Self.stereo16)
        try Self.writeFrames(10, to: writer)
        writer.discard()
        #expect(TestFiles.bytes(path) == Array("the user's file".utf8))
        #expect(access(writer.temporaryPath, F_OK) != 0)
    }

    /// A link as the target: the file it points to is replaced and the link stays a link.
    @Test func linksAreFollowed() throws {
        let real = TestFiles.scratch("real.wav")
        let link = TestFiles.scratch("link.wav")
        defer {
            unlink(real)
            unlink(link)
        }
        TestFiles.write("old", to: real)
        symlink(real, link)
        let writer = try AudioFileWriter(path: link, format: Self.stereo16)
        try Self.writeFrames(100, to: writer)
        try writer.close()
        var info = stat()
        lstat(link, &info)
        #expect(info.st_mode & S_IFMT == S_IFLNK)
        #expect(try AudioFileContents(path: real).frameCount == 100)
    }

    /// A render that will pass 4 GiB is written as RF64, whose sizes are 64-bit; a smaller one stays a plain
    /// WAV, byte for byte as before.
    @Test func rf64WhenTheWAVWouldPass4GiB() throws {
        let big = TestFiles.scratch("big.wav")
        let small = TestFiles.scratch("small.wav")
        defer {
            unlink(big)
            unlink(small)
        }
        // 6.5 hours of 16-bit stereo at 48 kHz: 4.5 GB, past a WAV's 32-bit sizes (4 GiB is 6.2 hours).
        let sixAndAHalfHours: Int64 = 48_000 * 3600 * 13 / 2
        let writer = try AudioFileWriter(path: big, format: Self.stereo16, expectedFrames: sixAndAHalfHours)
        #expect(writer.isRF64)
        try Self.writeFrames(1000, to: writer)
        try writer.close()
        #expect(Array(TestFiles.bytes(big).prefix(4)) == Array("RF64".utf8))
        let contents = try AudioFileContents(path: big)
        #expect(contents.frameCount == 1000 && contents.majorFormat == Int32(SF_FORMAT_RF64))
        let plain = try AudioFileWriter(path: small, format: Self.stereo16, expectedFrames: 48_000 * 3600)
        #expect(!plain.isRF64)
        try Self.writeFrames(1000, to: plain)
        try plain.close()
        #expect(Array(TestFiles.bytes(small).prefix(4)) == Array("RIFF".utf8))
    }

    /// A plain WAV that grows past its limit anyway is an error, never a wrapped header (the limit lowered
    /// to 4,000 bytes here, so the test need not write 4 GiB).
    @Test func aPlainWAVNeverWraps() throws {
        let path = TestFiles.scratch("wrap.wav")
        defer { unlink(path) }
        TestFiles.write("old", to: path)
        let writer = try AudioFileWriter(path: path, format: Self.stereo16, expectedFrames: nil, wavDataLimit: 4000)
        try Self.writeFrames(1000, to: writer)
        do {
            try Self.writeFrames(1, to: writer)
            Issue.record("a WAV past its limit was written")
        } catch let error as AudioFileError {
            #expect(error.message.contains("a WAV file holds at most 4 GiB of audio; render less, or to FLAC"))
            #expect(error.message.contains("is untouched"))
        }
        writer.discard()
        #expect(TestFiles.bytes(path) == Array("old".utf8))
    }

    /// A temporary file left by a writer killed outright (its process gone) is removed by the next writer
    /// to the same target; one of a live process is not.
    @Test func abandonedPartialsAreCleanedUp() throws {
        let path = TestFiles.scratch("again.wav")
        var gone: Int32 = 4_000_000
        while kill(gone, 0) == 0 || errno != ESRCH { gone -= 1 }
        let abandoned = path + ".partial-\(gone)"
        let live = path + ".partial-1"  // init: always running
        defer {
            unlink(path)
            unlink(abandoned)
            unlink(live)
        }
        TestFiles.write("half", to: abandoned)
        TestFiles.write("busy", to: live)
        let writer = try AudioFileWriter(path: path, format: Self.stereo16)
        try writer.close()
        #expect(access(abandoned, F_OK) != 0)
        #expect(access(live, F_OK) == 0)
    }

    /// A writer killed outright after a checkpoint leaves a WAV whose header describes the frames up to it
    /// (it said 0 bytes); the repair makes it describe every whole frame in the file, the partial one cut.
    @Test func aKilledWAVDescribesItsCheckpointAndIsRepairedToEveryWholeFrame() throws {
        let path = TestFiles.scratch("killed.wav")
        let copy = TestFiles.scratch("killed-copy.wav")
        defer { unlink(copy) }
        let writer = try AudioFileWriter(
            path: path, format: StreamFormat(sample: .float32, channels: 2, sampleRate: 48_000, interleaved: true))
        let samples = [Float](repeating: 0.5, count: 2 * 1000)
        try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frameCount: 1000) }
        writer.checkpoint()
        try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frameCount: 500) }
        // What a kill leaves: the temporary file as it is now, and half a frame more of a write cut short.
        var bytes = try FileContents.read(writer.temporaryPath, limit: 1 << 20)
        bytes += [0, 0, 0, 0]
        TestFiles.write(bytes, to: copy)
        writer.discard()
        let killed = try #require(WAVHeaderRepair.sizes(of: copy))
        #expect(killed.described == 1000 && killed.present == 1500)
        #expect(try WAVHeaderRepair.repair(copy) == 1500)
        let repaired = try #require(WAVHeaderRepair.sizes(of: copy))
        #expect(repaired.described == 1500 && repaired.present == 1500)
        let file = try AudioFileContents(path: copy)
        #expect(file.frameCount == 1500 && file.samples.allSatisfy { $0 == 0.5 })
    }
}

import AulosAudioFile
import AulosCore
import AulosTestSupport
import Testing

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
        #expect(throws: AudioUnitError(.formatNotSupported, "")) {
            _ = try AudioFileWriter(path: TestFiles.scratch("x.flac"), format: f32)
        }
        #expect(throws: AudioUnitError(.invalidFile, "")) {
            _ = try AudioFileWriter(path: TestFiles.scratch("x.mp3"), format: f32)
        }
        #expect(throws: AudioUnitError(.invalidFile, "")) {
            _ = try AudioFileWriter(path: "/nonexistent-dir/x.wav", format: f32)
        }
        #expect(throws: AudioUnitError(.formatNotSupported, "")) {
            _ = try AudioFileWriter(
                path: TestFiles.scratch("x.wav"), format: .canonical(channels: 2, sampleRate: 48_000))
        }
    }
}

import AulosAudioFile
import AulosCore
import AulosPlayback
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Core Audio's offline rendering pattern: a graph headed by a Generic Output pulled faster than real time,
/// into memory or a file.
@Suite struct OfflineRenderTests {
    /// Renders the demo melody into memory at one slice size.
    func renderDemo(slice: UInt32, seconds: Double = ToneMelodyRig.duration) throws -> [[Float]] {
        let demo = try ToneMelodyRig(sampleRate: 48_000, maximumFramesPerSlice: max(slice, 64))
        let renderer = try OfflineRenderer(graph: demo.graph, sliceFrames: slice)
        return try renderer.renderChannels(frameCount: Int64(seconds * 48_000)) { start, frames in
            try demo.scheduleMelody(sliceStart: start, frames: frames)
        }
    }

    /// The output of a graph must not depend on how it is sliced: events land on the same frames, glides
    /// and ramps run the same course, phases carry over. Bit for bit.
    @Test(arguments: [1, 17, 64, 1000, 4096] as [UInt32])
    func outputIsIndependentOfSliceSize(slice: UInt32) throws {
        let seconds = slice == 1 ? 1.3 : ToneMelodyRig.duration
        let reference = try renderDemo(slice: 256, seconds: seconds)
        let sliced = try renderDemo(slice: slice, seconds: seconds)
        #expect(sliced.count == 2)
        #expect(sliced[0] == reference[0])
        #expect(sliced[1] == reference[1])
    }

    @Test func renderingIsRepeatableAndAudible() throws {
        let first = try renderDemo(slice: 256)
        let second = try renderDemo(slice: 256)
        #expect(first == second)
        let peak = first[0].map(abs).max()!
        #expect(peak > 0.29 && peak <= 0.3)
        #expect(first[0] == first[1])
        // The first note (middle C, 261.6 Hz) starts at frame 0 and its attack takes 5 ms.
        #expect(first[0][0] == 0)
        #expect(first[0][100] != 0)
    }

    /// Beat 0.5 at 120 BPM is frame 12000: the first note's 40 ms release ends exactly there and the second
    /// note (E4) starts there with a 5 ms attack. Rebuild envelope and phase analytically and compare.
    @Test func noteBoundariesLandOnTheirExactFrames() throws {
        let left = try renderDemo(slice: 100, seconds: 0.3)[0]
        let rate = 48_000.0
        var phase = 0.0
        var worst = 0.0
        for frame in 0..<12_200 {
            let frequency = Double(Float(frame < 12_000 ? 440 * exp2(-9.0 / 12) : 440 * exp2(-5.0 / 12)))
            if frame >= 11_900 {
                let level =
                    frame < 12_000 ? 0.3 * Double(12_000 - frame) / 1920 : 0.3 * Double(min(frame - 12_000, 240)) / 240
                worst = max(worst, abs(Double(left[frame]) - level * sin(2 * .pi * phase)))
            }
            phase += frequency / rate
            if phase >= 1 { phase -= 1 }
        }
        #expect(worst < 1e-5, "worst error \(worst)")
        #expect(left[11_999] != 0)
        #expect(left[12_000] == 0)
        #expect(left[12_001] != 0)
    }

    @Test(arguments: [
        ("wav", SampleFormat.int16), ("wav", .int24), ("wav", .float32), ("flac", .int16), ("flac", .int24),
    ])
    func filesHoldWhatWasRendered(type: String, sample: SampleFormat) throws {
        let path = scratchPath("demo.\(type)")
        defer { unlink(path) }
        let format = StreamFormat(sample: sample, channels: 2, sampleRate: 48_000, interleaved: true)
        let demo = try ToneMelodyRig(sampleRate: 48_000, maximumFramesPerSlice: 512, outputFormat: format)
        let writer = try AudioFileWriter(path: path, format: format)
        try OfflineRenderer(graph: demo.graph, sliceFrames: 512).render(frameCount: 48_000, to: writer) {
            start, frames in
            try demo.scheduleMelody(sliceStart: start, frames: frames)
        }
        try writer.close()
        let file = try AudioFileContents(path: path)
        #expect(file.sampleRate == 48_000 && file.channels == 2 && file.frameCount == 48_000)
        let reference = try renderDemo(slice: 512, seconds: 1)
        let lsb: Float =
            switch sample {
            case .int16: 1 / 32768
            case .int24: 1 / 8_388_608
            default: 0
            }
        var worst: Float = 0
        for frame in 0..<48_000 {
            worst = max(worst, abs(file.samples[frame * 2] - reference[0][frame]))
            worst = max(worst, abs(file.samples[frame * 2 + 1] - reference[1][frame]))
        }
        #expect(worst <= lsb / 2 + 1e-9, "worst error \(worst)")
    }

    @Test func sliceLargerThanMaximumFramesIsRefused() throws {
        let demo = try ToneMelodyRig(sampleRate: 48_000, maximumFramesPerSlice: 256)
        #expect(throws: AudioUnitError(.tooManyFramesToProcess, "")) {
            _ = try OfflineRenderer(graph: demo.graph, sliceFrames: 257)
        }
        #expect(throws: AudioUnitError(.tooManyFramesToProcess, "")) {
            _ = try OfflineRenderer(graph: demo.graph, sliceFrames: 0)
        }
    }
}

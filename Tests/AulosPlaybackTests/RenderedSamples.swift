import AulosAudioFile
import AulosPlayback
import AulosTestSupport

/// `input` (written to a scratch file named `name`) rendered as `options` say, as float samples
/// (interleaved); the scratch files removed.
func renderedSamples(_ input: [UInt8], named name: String, _ options: PlaybackOptions) throws -> [Float] {
    let inputPath = TestFiles.scratch(name)
    let output = TestFiles.scratch(name + ".wav")
    TestFiles.write(input, to: inputPath)
    defer {
        TestFiles.remove(inputPath)
        TestFiles.remove(output)
    }
    var options = options
    options.input = inputPath
    _ = try FileRender.run(options, to: RenderOutput(path: output, sample: .float32))
    return try AudioFileContents(path: output).samples
}

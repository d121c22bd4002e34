import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Generic Output (client format `output`) ← converter (input `input`, output `output`) ← a callback source.
func conversionRig(
    input: StreamFormat, output: StreamFormat, client: StreamFormat? = nil, signal: Float, slice: UInt32 = 512
) throws
    -> (AudioGraph, UnsafeMutablePointer<Float>, RenderHarness)
{
    let value = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    value.initialize(to: signal)
    let graph = AudioGraph(registry: BuiltInUnits.registry())
    let io = try graph.addNode(GenericOutputUnit.componentDescription)
    let converter = try graph.addNode(FormatConverterUnit.componentDescription)
    graph.open()
    try graph.unit(for: converter).set(.streamFormat, input, scope: .input)
    try graph.unit(for: converter).set(.streamFormat, output, scope: .output)
    try graph.unit(for: io).set(.maximumFramesPerSlice, slice)
    if let client { try graph.unit(for: io).set(.streamFormat, client, scope: .output) }
    try graph.unit(for: converter).set(.maximumFramesPerSlice, slice)
    try graph.setNodeInputCallback(converter, destinationInput: 0, RenderCallbackStruct(rateAwareSine(), refCon: value))
    try graph.connectNodeInput(converter, sourceOutput: 0, io, destinationInput: 0)
    try graph.initialize()
    try graph.start()
    return (graph, value, RenderHarness(graph.renderEntry!, format: client ?? output, maximumFrames: slice))
}

/// refCon → (frequency, sample rate) pair: a full-scale sine at that rate.
func rateAwareSine() -> RenderCallback {
    { refCon, _, timeStamp, _, frames, io in
        let frequency = Double(refCon!.assumingMemoryBound(to: Float.self).pointee)
        let rate = 44_100.0
        for channel in 0..<Int(io.pointee.bufferCount) {
            let out = io.pointee.floatChannel(channel)
            for frame in 0..<Int(frames) {
                out[frame] = Float(
                    0.5 * sin(2 * .pi * frequency * Double(timeStamp.pointee.sampleTime + Int64(frame)) / rate))
            }
        }
        return 0
    }
}

@Suite struct ConversionUnitTests {
    /// A 1 kHz sine at 44.1 kHz resampled to 48 kHz: least-squares fit of a 1 kHz sine, the rest is THD+N.
    @Test func resamplingIsClean() throws {
        let (graph, value, harness) = try conversionRig(
            input: .canonical(channels: 1, sampleRate: 44_100), output: .canonical(channels: 1, sampleRate: 48_000),
            signal: 1000)
        defer { value.deallocate() }
        let output = harness.render(200 * 480, slice: 480)[0]
        // Skip the filter's start-up; analyse exactly 1000 periods (48,000 frames).
        let window = Array(output[24_000..<72_000])
        var s = 0.0
        var c = 0.0
        for (n, x) in window.enumerated() {
            s += Double(x) * sin(2 * .pi * 1000 * Double(n) / 48_000)
            c += Double(x) * cos(2 * .pi * 1000 * Double(n) / 48_000)
        }
        s *= 2 / 48_000
        c *= 2 / 48_000
        var residual = 0.0
        var signal = 0.0
        for (n, x) in window.enumerated() {
            let fit = s * sin(2 * .pi * 1000 * Double(n) / 48_000) + c * cos(2 * .pi * 1000 * Double(n) / 48_000)
            residual += (Double(x) - fit) * (Double(x) - fit)
            signal += fit * fit
        }
        let thdN = 10 * log10(residual / signal)
        print("resampler THD+N: \(thdN) dB")
        #expect(abs((s * s + c * c).squareRoot() - 0.5) < 0.001, "amplitude")
        #expect(thdN < -90, "THD+N \(thdN) dB")
        try graph.stop()
        try graph.uninitialize()
    }

    @Test func monoStereoAndSampleTypesInOneConverter() throws {
        // Mono at 44.1 kHz → stereo at 48 kHz in the converter, then Int16 interleaved in the Generic Output.
        let client = StreamFormat(sample: .int16, channels: 2, sampleRate: 48_000, interleaved: true)
        let (graph, value, harness) = try conversionRig(
            input: .canonical(channels: 1, sampleRate: 44_100), output: .canonical(channels: 2, sampleRate: 48_000),
            client: client,
            signal: 500)
        defer { value.deallocate() }
        defer { try? graph.stop() }  // the graph lives as long as the harness pulls it
        var peak: Int16 = 0
        for _ in 0..<50 {
            #expect(harness.renderSlice(333) == 0)
            let samples = harness.buffers.list.pointee.buffers[0].data!.assumingMemoryBound(to: Int16.self)
            for frame in 0..<333 {
                #expect(samples[2 * frame] == samples[2 * frame + 1])
                peak = max(peak, samples[2 * frame])
            }
        }
        #expect(abs(Int(peak) - 16_384) < 40)
    }

    @Test func stereoToMonoAverages() throws {
        let stereo = StreamFormat.canonical(channels: 2, sampleRate: 48_000)
        let mono = StreamFormat.canonical(channels: 1, sampleRate: 48_000)
        let conversion = try FormatConversion(from: stereo, to: mono)
        let input = AudioBufferListStorage(format: stereo, maximumFrames: 4)
        let output = AudioBufferListStorage(format: mono, maximumFrames: 4)
        for i in 0..<4 {
            input.list.pointee.floatChannel(0)[i] = Float(i)
            input.list.pointee.floatChannel(1)[i] = 1
        }
        var scratch = [Float](repeating: 0, count: 8)
        scratch.withUnsafeMutableBufferPointer {
            conversion.convert(input.list, into: output.list, frameCount: 4, scratch: $0.baseAddress!)
        }
        #expect(Array(UnsafeBufferPointer(start: output.list.pointee.floatChannel(0), count: 4)) == [0.5, 1, 1.5, 2])
        #expect(throws: AudioUnitError(.formatNotSupported, "")) {
            _ = try FormatConversion(from: .canonical(channels: 3, sampleRate: 48_000), to: stereo)
        }
    }

    @Test func resamplingAllocatesNothing() throws {
        let (graph, value, harness) = try conversionRig(
            input: .canonical(channels: 2, sampleRate: 44_100), output: .canonical(channels: 2, sampleRate: 48_000),
            signal: 440, slice: 64)
        defer { value.deallocate() }
        defer { try? graph.stop() }  // the graph lives as long as the harness pulls it
        for _ in 0..<5000 { harness.renderSlice(64, counting: true) }
        try expectNoAllocations(harness.allocations)
    }
}

import AulosCore
import AulosTestSupport
import Testing

/// Buffers for one conversion test, owned for the test's duration.
struct ConversionFixture {
    let source: AudioBufferListStorage
    let destination: AudioBufferListStorage
    let back: AudioBufferListStorage
    let scratch = [Float](repeating: 0, count: 70_000)

    init(_ from: StreamFormat, _ to: StreamFormat, frames: UInt32) {
        source = AudioBufferListStorage(format: from, maximumFrames: frames)
        destination = AudioBufferListStorage(format: to, maximumFrames: frames)
        back = AudioBufferListStorage(format: from, maximumFrames: frames)
    }

    func run(
        _ conversion: FormatConversion, _ input: AudioBufferListStorage, _ output: AudioBufferListStorage, frames: Int
    ) {
        var scratch = scratch
        scratch.withUnsafeMutableBufferPointer {
            conversion.convert(input.list, into: output.list, frameCount: frames, scratch: $0.baseAddress!)
        }
    }
}

@Suite struct FormatConversionTests {
    static let rate = 48_000.0

    @Test func everyInt16ValueRoundTripsThroughFloat32Exactly() throws {
        let frames = 65_536
        let s16 = StreamFormat(sample: .int16, channels: 1, sampleRate: Self.rate, interleaved: true)
        let f32 = StreamFormat.canonical(channels: 1, sampleRate: Self.rate)
        let fixture = ConversionFixture(s16, f32, frames: UInt32(frames))
        let samples = fixture.source.list.pointee.buffers[0].data!.assumingMemoryBound(to: Int16.self)
        for index in 0..<frames { samples[index] = Int16(truncatingIfNeeded: index - 32_768) }
        fixture.run(try FormatConversion(from: s16, to: f32), fixture.source, fixture.destination, frames: frames)
        fixture.run(try FormatConversion(from: f32, to: s16), fixture.destination, fixture.back, frames: frames)
        let back = fixture.back.list.pointee.buffers[0].data!.assumingMemoryBound(to: Int16.self)
        #expect((0..<frames).allSatisfy { back[$0] == samples[$0] })
        let floats = fixture.destination.list.pointee.floatChannel(0)
        #expect(floats[0] == -1.0)
        #expect(floats[32_768] == 0)
    }

    @Test func int24RoundTripsThroughFloat32Exactly() throws {
        let frames = 4096
        let s24 = StreamFormat(sample: .int24, channels: 2, sampleRate: Self.rate, interleaved: true)
        let f32 = StreamFormat.canonical(channels: 2, sampleRate: Self.rate)
        let fixture = ConversionFixture(s24, f32, frames: UInt32(frames))
        let bytes = fixture.source.list.pointee.buffers[0].data!.assumingMemoryBound(to: UInt8.self)
        var generator = SeededRandom(seed: 0xA0105)  // seeded: a failure replays exactly
        for index in 0..<(frames * 2 * 3) { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        // Include both extremes.
        (bytes[0], bytes[1], bytes[2]) = (0x00, 0x00, 0x80)
        (bytes[3], bytes[4], bytes[5]) = (0xFF, 0xFF, 0x7F)
        fixture.run(try FormatConversion(from: s24, to: f32), fixture.source, fixture.destination, frames: frames)
        fixture.run(try FormatConversion(from: f32, to: s24), fixture.destination, fixture.back, frames: frames)
        let back = fixture.back.list.pointee.buffers[0].data!.assumingMemoryBound(to: UInt8.self)
        #expect((0..<(frames * 6)).allSatisfy { back[$0] == bytes[$0] })
        #expect(fixture.destination.list.pointee.floatChannel(0)[0] == -1.0)
        #expect(fixture.destination.list.pointee.floatChannel(1)[0] == Float(8_388_607) / 8_388_608)
    }

    @Test func interleavingRoundTripsExactly() throws {
        let frames = 1000
        let planar = StreamFormat.canonical(channels: 3, sampleRate: Self.rate)
        let packed = StreamFormat(sample: .float32, channels: 3, sampleRate: Self.rate, interleaved: true)
        let fixture = ConversionFixture(planar, packed, frames: UInt32(frames))
        for channel in 0..<3 {
            for frame in 0..<frames {
                fixture.source.list.pointee.floatChannel(channel)[frame] = Float(channel * 10_000 + frame) / 3
            }
        }
        fixture.run(try FormatConversion(from: planar, to: packed), fixture.source, fixture.destination, frames: frames)
        let interleaved = fixture.destination.list.pointee.buffers[0].data!.assumingMemoryBound(to: Float.self)
        #expect(interleaved[0] == 0 && interleaved[1] == 10_000 / 3 && interleaved[3] == Float(1) / 3)
        fixture.run(try FormatConversion(from: packed, to: planar), fixture.destination, fixture.back, frames: frames)
        for channel in 0..<3 {
            #expect(
                (0..<frames).allSatisfy {
                    fixture.back.list.pointee.floatChannel(channel)[$0]
                        == fixture.source.list.pointee.floatChannel(channel)[$0]
                })
        }
        #expect(fixture.destination.list.pointee.buffers[0].byteSize == UInt32(frames * 12))
    }

    @Test func floatToIntegerRoundsAndClips() throws {
        let f32 = StreamFormat.canonical(channels: 1, sampleRate: Self.rate)
        let s16 = StreamFormat(sample: .int16, channels: 1, sampleRate: Self.rate, interleaved: false)
        let fixture = ConversionFixture(f32, s16, frames: 8)
        let input: [Float] = [1.0, -1.0, 2.5, -7, .nan, 0.5 / 32768, -0.49 / 32768, 0.25]
        for (index, value) in input.enumerated() { fixture.source.list.pointee.floatChannel(0)[index] = value }
        fixture.run(try FormatConversion(from: f32, to: s16), fixture.source, fixture.destination, frames: 8)
        let out = fixture.destination.list.pointee.buffers[0].data!.assumingMemoryBound(to: Int16.self)
        #expect(Array(UnsafeBufferPointer(start: out, count: 8)) == [32_767, -32_768, 32_767, -32_768, 0, 1, 0, 8192])
    }

    @Test func int32KeepsFullPrecisionOnTheWayOut() throws {
        let f32 = StreamFormat.canonical(channels: 1, sampleRate: Self.rate)
        let s32 = StreamFormat(sample: .int32, channels: 1, sampleRate: Self.rate, interleaved: true)
        let fixture = ConversionFixture(f32, s32, frames: 3)
        fixture.source.list.pointee.floatChannel(0)[0] = 0.5
        fixture.source.list.pointee.floatChannel(0)[1] = -1
        fixture.source.list.pointee.floatChannel(0)[2] = 1
        fixture.run(try FormatConversion(from: f32, to: s32), fixture.source, fixture.destination, frames: 3)
        let out = fixture.destination.list.pointee.buffers[0].data!.assumingMemoryBound(to: Int32.self)
        #expect(Array(UnsafeBufferPointer(start: out, count: 3)) == [1_073_741_824, Int32.min, Int32.max])
    }

    @Test func mismatchedChannelsOrRatesAreRefused() {
        let stereo = StreamFormat.canonical(channels: 2, sampleRate: Self.rate)
        #expect(throws: AudioUnitError(.formatNotSupported, "")) {
            _ = try FormatConversion(from: stereo, to: .canonical(channels: 3, sampleRate: Self.rate))
        }
        #expect(throws: AudioUnitError(.formatNotSupported, "")) {
            _ = try FormatConversion(from: stereo, to: .canonical(channels: 2, sampleRate: 44_100))
        }
    }
}

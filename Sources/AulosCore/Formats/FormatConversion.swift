import CAulosRender

/// Converts buffer lists between two linear-PCM formats with the same channel count and sample rate:
/// Float32/Int16/Int24/Int32, interleaved or not. What the Format Converter, Generic Output and (later)
/// ALSA I/O units do on the render thread.
///
/// Threads: built on the control thread (`init` validates and may throw); `convert` runs on the render
/// thread and never allocates. Integer ↔ float scaling uses full scale 2^(bits-1), so Int16 and Int24
/// round-trip through Float32 exactly; float → integer rounds to nearest and clips.
public struct FormatConversion: Sendable {
    public let source: StreamFormatLayout
    public let destination: StreamFormatLayout
    /// Same layout on both sides: conversion is a copy (or, for a caller that can, nothing at all).
    public let isIdentity: Bool

    public init(from source: StreamFormat, to destination: StreamFormat) throws(AudioUnitError) {
        try source.validate()
        try destination.validate()
        let channelsMatch = source.channelsPerFrame == destination.channelsPerFrame
        let monoStereo =
            (source.channelsPerFrame == 1 && destination.channelsPerFrame == 2)
            || (source.channelsPerFrame == 2 && destination.channelsPerFrame == 1)
        guard channelsMatch || monoStereo else {
            throw AudioUnitError(
                .formatNotSupported,
                "cannot convert \(source.channelsPerFrame) channels to \(destination.channelsPerFrame) (only equal "
                    + "counts, or mono ↔ stereo)"
            )
        }
        guard source.sampleRate == destination.sampleRate else {
            throw AudioUnitError(
                .formatNotSupported,
                "sample-rate conversion (\(source.sampleRate) → \(destination.sampleRate) Hz) is not supported")
        }
        self.source = StreamFormatLayout(source)
        self.destination = StreamFormatLayout(destination)
        isIdentity = self.source.sameLayout(as: self.destination)
    }

    /// Converts `frameCount` frames. `scratch` must hold `2 × frameCount` floats. Mono → stereo copies the
    /// channel to both sides; stereo → mono averages the two.
    @_noAllocation @_noLocks
    public func convert(
        _ input: UnsafePointer<AudioBufferList>, into output: UnsafeMutablePointer<AudioBufferList>,
        frameCount: Int, scratch: UnsafeMutablePointer<Float>
    ) {
        output.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: destination.bytesPerFrame)
        if isIdentity {
            output.pointee.copyContents(from: input)
            return
        }
        if source.channels != destination.channels {
            convertChannelCount(input, into: output, frameCount: frameCount, scratch: scratch)
            return
        }
        let channels = Int(source.channels)
        for channel in 0..<channels {
            let from = Self.channelStart(input.pointee, layout: source, channel: channel)
            let to = Self.channelStart(output.pointee, layout: destination, channel: channel)
            let fromStride = source.interleaved ? channels : 1
            let toStride = destination.interleaved ? channels : 1
            if case .float32 = source.sample, case .float32 = destination.sample {
                let f = from.assumingMemoryBound(to: Float.self)
                let t = to.assumingMemoryBound(to: Float.self)
                for frame in 0..<frameCount { t[frame * toStride] = f[frame * fromStride] }
            } else if case .float32 = destination.sample, !destination.interleaved {
                Self.decode(
                    from, source.sample, stride: fromStride, into: to.assumingMemoryBound(to: Float.self), frameCount)
            } else if case .float32 = source.sample, !source.interleaved {
                Self.encode(
                    from.assumingMemoryBound(to: Float.self), into: to, destination.sample, stride: toStride, frameCount
                )
            } else {
                Self.decode(from, source.sample, stride: fromStride, into: scratch, frameCount)
                Self.encode(scratch, into: to, destination.sample, stride: toStride, frameCount)
            }
        }
    }

    /// Mono ↔ stereo, through Float32 scratch: decode, duplicate or average, encode.
    @_noAllocation @_noLocks
    func convertChannelCount(
        _ input: UnsafePointer<AudioBufferList>, into output: UnsafeMutablePointer<AudioBufferList>, frameCount: Int,
        scratch: UnsafeMutablePointer<Float>
    ) {
        let fromStride = source.interleaved ? Int(source.channels) : 1
        let toStride = destination.interleaved ? Int(destination.channels) : 1
        let mixed = scratch
        Self.decode(
            Self.channelStart(input.pointee, layout: source, channel: 0), source.sample, stride: fromStride,
            into: mixed, frameCount)
        if source.channels == 2 {
            let second = scratch + frameCount
            Self.decode(
                Self.channelStart(input.pointee, layout: source, channel: 1), source.sample, stride: fromStride,
                into: second, frameCount)
            for index in 0..<frameCount { mixed[index] = (mixed[index] + second[index]) * 0.5 }
        }
        for channel in 0..<Int(destination.channels) {
            Self.encode(
                mixed, into: Self.channelStart(output.pointee, layout: destination, channel: channel),
                destination.sample,
                stride: toStride, frameCount)
        }
    }

    @inline(__always) @_noAllocation @_noLocks
    static func channelStart(_ list: AudioBufferList, layout: StreamFormatLayout, channel: Int)
        -> UnsafeMutableRawPointer
    {
        if layout.interleaved {
            return list.buffers[0].data.unsafelyUnwrapped + channel &* layout.bytesPerSample
        }
        return list.buffers[channel].data.unsafelyUnwrapped
    }

    /// Reads `count` samples spaced `stride` samples apart into contiguous floats.
    @_noAllocation @_noLocks
    static func decode(
        _ start: UnsafeMutableRawPointer, _ sample: SampleFormat, stride: Int, into floats: UnsafeMutablePointer<Float>,
        _ count: Int
    ) {
        switch sample {
        case .float32:
            let p = start.assumingMemoryBound(to: Float.self)
            for i in 0..<count { floats[i] = p[i * stride] }
        case .int16:
            let p = start.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { floats[i] = Float(p[i * stride]) * (1 / 32768) }
        case .int24:
            let p = start.assumingMemoryBound(to: UInt8.self)
            for i in 0..<count {
                let b = p + i * stride * 3
                let raw = Int32(b[0]) | Int32(b[1]) << 8 | Int32(Int8(bitPattern: b[2])) << 16
                floats[i] = Float(raw) * (1 / 8_388_608)
            }
        case .int32:
            let p = start.assumingMemoryBound(to: Int32.self)
            for i in 0..<count { floats[i] = Float(p[i * stride]) * (1 / 2_147_483_648) }
        }
    }

    /// Writes `count` contiguous floats as samples spaced `stride` samples apart, rounding and clipping.
    @_noAllocation @_noLocks
    static func encode(
        _ floats: UnsafeMutablePointer<Float>, into start: UnsafeMutableRawPointer, _ sample: SampleFormat, stride: Int,
        _ count: Int
    ) {
        switch sample {
        case .float32:
            let p = start.assumingMemoryBound(to: Float.self)
            for i in 0..<count { p[i * stride] = floats[i] }
        case .int16:
            let p = start.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { p[i * stride] = Int16(quantize(floats[i], fullScale: 32768)) }
        case .int24:
            let p = start.assumingMemoryBound(to: UInt8.self)
            for i in 0..<count {
                let value = quantize(floats[i], fullScale: 8_388_608)
                let b = p + i * stride * 3
                b[0] = UInt8(truncatingIfNeeded: value)
                b[1] = UInt8(truncatingIfNeeded: value >> 8)
                b[2] = UInt8(truncatingIfNeeded: value >> 16)
            }
        case .int32:
            let p = start.assumingMemoryBound(to: Int32.self)
            for i in 0..<count {
                // Double keeps all 32 bits of the scaled value; Float would round to 24.
                let scaled = Double(floats[i]) * 2_147_483_648
                let rounded = scaled >= 0 ? scaled + 0.5 : scaled - 0.5
                p[i * stride] = scaled.isNaN ? 0 : Int32(max(-2_147_483_648, min(2_147_483_647, rounded)))
            }
        }
    }

    /// Rounds `value × fullScale` to the nearest integer, clipped to [-fullScale, fullScale - 1]; NaN → 0.
    @inline(__always) @_noAllocation @_noLocks
    static func quantize(_ value: Float, fullScale: Float) -> Int32 {
        // Round half away from zero by offsetting before the truncating conversion; clip first so the
        // conversion can never overflow. (`rounded()` would pull in FloatingPointRoundingRule metadata.)
        let scaled = value * fullScale
        if scaled.isNaN { return 0 }
        let clipped = max(-fullScale, min(fullScale - 1, scaled >= 0 ? scaled + 0.5 : scaled - 0.5))
        return Int32(clipped)
    }
}

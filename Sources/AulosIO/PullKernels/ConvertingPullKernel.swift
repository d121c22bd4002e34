import AulosCore

/// The render side of every unit that pulls one input and hands it on in another format: the Generic
/// Output, the Format Converter, and the I/O units of other modules (ALSA). It pulls input bus 0 and
/// converts into the caller's buffers; when the formats are identical it pulls straight into the caller's
/// buffers (no copy), and when the sample rates differ `make` returns the resampling kernel instead.
///
/// Threads: render thread only. Holds no class references.
public struct ConvertingPullKernel {
    let conversion: FormatConversion
    let inputBuffers: UnsafeMutablePointer<AudioBufferList>
    let inputBytesPerFrame: UInt32
    let scratch: UnsafeMutablePointer<Float>

    /// Builds the kernel for `unit`'s input 0 → output 0 formats, its buffers kept alive by the unit. Different
    /// sample rates get the resampling kernel.
    public static func make(for unit: AudioUnit) throws(AudioUnitError) -> UnitKernel {
        let input = unit.inputFormat(0)
        if input.sampleRate != unit.outputFormat(0).sampleRate {
            return try ResamplingPullKernel.make(for: unit)
        }
        let conversion = try FormatConversion(from: input, to: unit.outputFormat(0))
        let frames = unit.maximumFramesPerSlice
        let storage = AudioBufferListStorage(format: input, maximumFrames: frames)
        let scratch = AudioBufferListStorage(
            format: .canonical(channels: 1, sampleRate: input.sampleRate), maximumFrames: 2 * frames)
        unit.retainForKernel(storage)
        unit.retainForKernel(scratch)
        let kernel = ConvertingPullKernel(
            conversion: conversion, inputBuffers: storage.list, inputBytesPerFrame: input.bytesPerFrame,
            scratch: scratch.list.pointee.floatChannel(0))
        return UnitKernel.make(kernel, render: render)
    }

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, bus, frameCount, ioData in
        state.assumingMemoryBound(to: ConvertingPullKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: frameCount, ioData: ioData)
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>,
        frameCount: UInt32, ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        if conversion.isIdentity {
            ioData.pointee.setFrameCount(frameCount, bytesPerFrame: inputBytesPerFrame)
            return RenderInputs.pull(
                inputs, bus: 0, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: ioData)
        }
        inputBuffers.pointee.setFrameCount(frameCount, bytesPerFrame: inputBytesPerFrame)
        let status = RenderInputs.pull(
            inputs, bus: 0, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: inputBuffers)
        conversion.convert(inputBuffers, into: ioData, frameCount: Int(frameCount), scratch: scratch)
        return status
    }
}

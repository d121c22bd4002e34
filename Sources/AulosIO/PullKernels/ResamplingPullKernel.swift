import AulosCore
import AulosDSP

/// Render side of a format conversion that changes the sample rate: pulls the input in fixed 64-frame
/// chunks on its own input-side clock (so what upstream renders never depends on the output slicing),
/// converts each chunk to interleaved Float32, resamples it with libsamplerate into a FIFO, and serves the
/// caller's slice from the FIFO in the output format.
///
/// Threads: render thread only. Holds no class references.
struct ResamplingPullKernel {
    static let chunk = 64

    let converter: SampleRateConverter.Handle
    let toFloat: FormatConversion
    let fromFloat: FormatConversion
    let inputBuffers: UnsafeMutablePointer<AudioBufferList>
    let inputBytesPerFrame: UInt32
    /// One chunk as interleaved Float32.
    let chunkList: UnsafeMutablePointer<AudioBufferList>
    /// Resampled, not yet delivered frames (interleaved Float32), and a list header pointing into it.
    let fifo: UnsafeMutablePointer<Float>
    let fifoFrames: UnsafeMutablePointer<Int>
    let fifoCapacity: Int
    let fifoList: UnsafeMutablePointer<AudioBufferList>
    let fifoBuffer: UnsafeMutablePointer<AudioBuffer>
    let channels: Int
    let inputTime: UnsafeMutablePointer<Int64>
    let scratch: UnsafeMutablePointer<Float>

    static func make(for unit: AudioUnit) throws(AudioUnitError) -> UnitKernel {
        let input = unit.inputFormat(0)
        let output = unit.outputFormat(0)
        let channels = Int(output.channelsPerFrame)
        let ratio = output.sampleRate / input.sampleRate
        guard ratio >= 1.0 / 16, ratio <= 16 else {
            throw AudioUnitError(
                .formatNotSupported, "\(unit.name): \(input.sampleRate) → \(output.sampleRate) Hz is beyond 16×")
        }
        guard input.channelsPerFrame <= 2 || input.channelsPerFrame == output.channelsPerFrame else {
            throw AudioUnitError(.formatNotSupported, "\(unit.name) converts channel counts only mono ↔ stereo")
        }
        let converter: SampleRateConverter
        do {
            converter = try SampleRateConverter(channels: channels, ratio: ratio, quality: .medium)
        } catch {
            throw AudioUnitError(.failedInitialization, "\(unit.name): libsamplerate: \(error.message)")
        }
        unit.retainForKernel(converter)
        // Float32 interleaved at the input's rate with the output's channels, then the output format at the
        // output's rate (FormatConversion converts layouts within one rate).
        let floatAtInput = StreamFormat(
            sample: .float32, channels: UInt32(channels), sampleRate: input.sampleRate, interleaved: true)
        let floatAtOutput = StreamFormat(
            sample: .float32, channels: UInt32(channels), sampleRate: output.sampleRate, interleaved: true)
        let toFloat = try FormatConversion(from: input, to: floatAtInput)
        let fromFloat = try FormatConversion(from: floatAtOutput, to: output)
        let maximum = Int(unit.maximumFramesPerSlice)
        let fifoCapacity = maximum + Int((Double(chunk) * ratio).rounded(.up)) + 64
        let inputStorage = AudioBufferListStorage(format: input, maximumFrames: UInt32(chunk))
        let chunkStorage = AudioBufferListStorage(format: floatAtInput, maximumFrames: UInt32(chunk))
        let fifoStorage = AudioBufferListStorage(format: floatAtOutput, maximumFrames: UInt32(fifoCapacity))
        let scratchStorage = AudioBufferListStorage(
            format: .canonical(channels: 1, sampleRate: input.sampleRate),
            maximumFrames: UInt32(2 * max(fifoCapacity, chunk)))
        for storage in [inputStorage, chunkStorage, fifoStorage, scratchStorage] { unit.retainForKernel(storage) }
        let fifoBuffer = UnsafeMutablePointer<AudioBuffer>.allocate(capacity: 1)
        fifoBuffer.initialize(to: AudioBuffer(channelCount: UInt32(channels), byteSize: 0, data: nil))
        let fifoList = UnsafeMutablePointer<AudioBufferList>.allocate(capacity: 1)
        fifoList.initialize(to: AudioBufferList(bufferCount: 1, buffers: fifoBuffer))
        let counters = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        counters.initialize(to: 0)
        let time = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        time.initialize(to: 0)
        let kernel = ResamplingPullKernel(
            converter: converter.handle, toFloat: toFloat, fromFloat: fromFloat, inputBuffers: inputStorage.list,
            inputBytesPerFrame: input.bytesPerFrame, chunkList: chunkStorage.list,
            fifo: fifoStorage.list.pointee.buffers[0].data!.assumingMemoryBound(to: Float.self), fifoFrames: counters,
            fifoCapacity: fifoCapacity,
            fifoList: fifoList, fifoBuffer: fifoBuffer, channels: channels, inputTime: time,
            scratch: scratchStorage.list.pointee.floatChannel(0))
        return UnitKernel.make(kernel, render: render) { kernel in
            kernel.fifoBuffer.deallocate()
            kernel.fifoList.deallocate()
            kernel.fifoFrames.deallocate()
            kernel.inputTime.deallocate()
        }
    }

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: ResamplingPullKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>,
        frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        var pulls = 0
        while fifoFrames.pointee < frameCount {
            if pulls > 0 { RenderInputs.beginSubcycle(inputs) }
            pulls += 1
            inputBuffers.pointee.setFrameCount(UInt32(Self.chunk), bytesPerFrame: inputBytesPerFrame)
            var stamp = AudioTimeStamp(
                sampleTime: inputTime.pointee, hostTime: timeStamp.pointee.hostTime, flags: timeStamp.pointee.flags)
            var inputFlags = RenderActionFlags(rawValue: 0)
            let status = RenderInputs.pull(
                inputs, bus: 0, flags: &inputFlags, timeStamp: &stamp, frameCount: UInt32(Self.chunk),
                into: inputBuffers)
            if status != 0 && status != RenderStatus.noConnection { return status }
            inputTime.pointee += Int64(Self.chunk)
            toFloat.convert(inputBuffers, into: chunkList, frameCount: Self.chunk, scratch: scratch)
            let chunkData = chunkList.pointee.buffers[0].data.unsafelyUnwrapped.assumingMemoryBound(to: Float.self)
            var offset = 0
            while offset < Self.chunk {
                let result = converter.process(
                    input: chunkData + offset * channels, inputFrames: Self.chunk - offset,
                    output: fifo + fifoFrames.pointee * channels, outputCapacity: fifoCapacity - fifoFrames.pointee)
                offset += result.used
                fifoFrames.pointee += result.produced
                if result.used == 0 && result.produced == 0 { break }
            }
        }
        // Deliver `frameCount` frames from the FIFO, then move the rest to its front.
        fifoBuffer.pointee.data = UnsafeMutableRawPointer(fifo)
        fifoBuffer.pointee.byteSize = UInt32(frameCount * channels * 4)
        fromFloat.convert(fifoList, into: io, frameCount: frameCount, scratch: scratch)
        let remaining = fifoFrames.pointee - frameCount
        if remaining > 0 {
            UnsafeMutableRawPointer(fifo).copyMemory(
                from: fifo + frameCount * channels, byteCount: remaining * channels * 4)
        }
        fifoFrames.pointee = remaining
        return 0
    }
}

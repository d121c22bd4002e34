import CSamplerate

/// Sample-rate conversion through libsamplerate (a well-kept library; no hand-written resampler), on
/// interleaved Float32. Created on the control thread (`src_new` allocates); `process` is called on the
/// render thread and does not allocate.
///
/// Threads: create and free on the control thread; `SampleRateConverter.Handle` is used by one render thread.
public final class SampleRateConverter: @unchecked Sendable {
    public enum Quality: Int32, Sendable {
        case best = 0
        case medium = 1
        case fastest = 2
    }

    /// The render-side view: the converter state and a reusable SRC_DATA.
    public struct Handle: @unchecked Sendable {
        let state: OpaquePointer
        let data: UnsafeMutablePointer<SRC_DATA>

        /// Converts up to `inputFrames` frames into at most `outputCapacity` frames; returns how many input
        /// frames were used and output frames produced.
        @_noAllocation @_noLocks
        public func process(
            input: UnsafePointer<Float>, inputFrames: Int, output: UnsafeMutablePointer<Float>,
            outputCapacity: Int
        ) -> (used: Int, produced: Int) {
            data.pointee.data_in = input
            data.pointee.data_out = output
            data.pointee.input_frames = inputFrames
            data.pointee.output_frames = outputCapacity
            data.pointee.end_of_input = 0
            let state = self.state
            let data = self.data
            _ = _unsafePerformance { src_process(state, data) }
            return (data.pointee.input_frames_used, data.pointee.output_frames_gen)
        }
    }

    public let ratio: Double
    public let channels: Int
    public let handle: Handle

    /// `ratio` = output rate ÷ input rate.
    public init(channels: Int, ratio: Double, quality: Quality = .medium) throws(SampleRateConverterError) {
        var error: Int32 = 0
        guard let state = src_new(quality.rawValue, Int32(channels), &error) else {
            throw SampleRateConverterError(message: String(cString: src_strerror(error)))
        }
        let data = UnsafeMutablePointer<SRC_DATA>.allocate(capacity: 1)
        data.initialize(to: SRC_DATA())
        data.pointee.src_ratio = ratio
        self.ratio = ratio
        self.channels = channels
        handle = Handle(state: state, data: data)
    }

    deinit {
        src_delete(handle.state)
        handle.data.deallocate()
    }
}

public struct SampleRateConverterError: Error, Sendable {
    public let message: String
}

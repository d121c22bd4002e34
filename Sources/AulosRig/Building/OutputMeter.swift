import AulosCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The level of what the rig sends to the device: measured in a post-render notification on the I/O unit's
/// own buffers, after the master EQ and the master effects — the mixer's meter, before them, read −29 dBFS
/// while a master plugin sent full-scale DC, or silence. Peak held and falling 60 dB over 1.5 s, mean square
/// averaged over 300 ms, as the mixer meters; dBFS, −120 for silence.
///
/// Threads: the render thread writes the levels (relaxed atomics), the control thread reads them.
final class OutputMeter: @unchecked Sendable {
    struct State {
        var sampleRate: Double
        /// How the device's samples are stored: 4-byte floats, or 2- or 4-byte integers (0, 16, 32);
        /// anything else is not measured.
        var sampleKind: Int
        var peak: Float = 0
        var meanSquare: Float = 0
        let published: UnsafeMutablePointer<Atomic<UInt64>>
    }

    private let state: UnsafeMutablePointer<State>
    private let published = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)

    /// Measures buffers of `sample` values (the device's format: interleaved or not, it makes no difference to
    /// a peak and a mean square).
    init(sampleRate: Double, sample: SampleFormat) {
        published.initialize(to: Atomic(0))
        state = .allocate(capacity: 1)
        let kind = sample == .float32 ? 0 : sample == .int16 ? 16 : sample == .int32 ? 32 : -1
        state.initialize(to: State(sampleRate: sampleRate, sampleKind: kind, published: published))
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        published.deinitialize(count: 1)
        published.deallocate()
    }

    /// Install with `AudioGraph.addRenderNotify`; valid while this meter lives.
    var renderNotify: RenderCallbackStruct {
        RenderCallbackStruct(OutputMeter.postRender, refCon: UnsafeMutableRawPointer(state))
    }

    /// Peak and average in dBFS.
    var levels: (peak: Float, average: Float) {
        let bits = published.pointee.load(ordering: .relaxed)
        func decibels(_ value: Float) -> Float { value > 1e-6 ? max(-120, 20 * log10(value)) : -120 }
        let peak = Float(bitPattern: UInt32(truncatingIfNeeded: bits >> 32))
        let meanSquare = Float(bitPattern: UInt32(truncatingIfNeeded: bits))
        return (decibels(peak), meanSquare > 1e-12 ? max(-120, 10 * log10(meanSquare)) : -120)
    }

    static let postRender: RenderCallback = { refCon, flags, _, _, frameCount, ioData in
        guard flags.pointee.contains(.postRender), let refCon else { return 0 }
        measure(refCon.assumingMemoryBound(to: State.self), ioData, frames: Int(frameCount))
        return 0
    }

    @_noAllocation @_noLocks @inline(__always)
    static func take(_ value: Float, _ peak: inout Float, _ sum: inout Float) {
        peak = max(peak, abs(value))
        sum += value * value
    }

    /// One slice, every sample of every buffer.
    @_noAllocation @_noLocks
    static func measure(
        _ state: UnsafeMutablePointer<State>, _ ioData: UnsafeMutablePointer<AudioBufferList>, frames: Int
    ) {
        let list = ioData.pointee
        let kind = state.pointee.sampleKind
        guard frames > 0, kind >= 0 else { return }
        var slicePeak: Float = 0
        var sum: Float = 0
        var count = 0
        for index in 0..<Int(list.bufferCount) {
            guard let data = list.buffers[index].data else { continue }
            let bytes = Int(list.buffers[index].byteSize)
            switch kind {
            case 0:
                let samples = data.assumingMemoryBound(to: Float.self)
                for sample in 0..<(bytes / 4) { take(samples[sample], &slicePeak, &sum) }
                count += bytes / 4
            case 16:
                let samples = data.assumingMemoryBound(to: Int16.self)
                for sample in 0..<(bytes / 2) { take(Float(samples[sample]) / 32_768, &slicePeak, &sum) }
                count += bytes / 2
            default:
                let samples = data.assumingMemoryBound(to: Int32.self)
                for sample in 0..<(bytes / 4) { take(Float(samples[sample]) / 2_147_483_648, &slicePeak, &sum) }
                count += bytes / 4
            }
        }
        guard count > 0 else { return }
        let seconds = Float(Double(frames) / state.pointee.sampleRate)
        // Peak: held, falling 60 dB in 1.5 s; mean square: one pole of 300 ms.
        let fall = _unsafePerformance { powf(0.001, seconds / 1.5) }
        let pole = _unsafePerformance { expf(-seconds / 0.3) }
        state.pointee.peak = max(slicePeak, state.pointee.peak * fall)
        let sliceMeanSquare = sum / Float(count)
        state.pointee.meanSquare = sliceMeanSquare + (state.pointee.meanSquare - sliceMeanSquare) * pole
        let bits = UInt64(state.pointee.peak.bitPattern) << 32 | UInt64(state.pointee.meanSquare.bitPattern)
        state.pointee.published.pointee.store(bits, ordering: .relaxed)
    }
}

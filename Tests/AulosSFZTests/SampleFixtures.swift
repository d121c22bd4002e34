import AulosDSP
import AulosSFZ
import AulosTestSupport
import CSndfile
import Foundation

/// Test samples written to a scratch folder with libsndfile (float WAV, so what is read back is exactly
/// what was written; FLAC where a test says so), with a `smpl` loop when asked.
///
/// Threads: the test's.
enum SampleFixtures {
    /// Writes interleaved `samples` of `channels` channels at `rate`; `loop` is inclusive, as SFZ's.
    static func write(
        _ path: String, _ samples: [Float], channels: Int = 1, rate: Int = 48000, loop: ClosedRange<Int>? = nil,
        flac: Bool = false
    ) {
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = Int32(channels)
        info.format = flac ? Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24) : Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        let file = sf_open(path, Int32(SFM_WRITE), &info)!
        if let loop {
            var instrument = SF_INSTRUMENT()
            instrument.basenote = 60
            instrument.key_hi = 127
            instrument.velocity_hi = 127
            instrument.loop_count = 1
            // `loops` (an array of an unnamed struct) is not imported: its first entry follows `loop_count`.
            let place = MemoryLayout<SF_INSTRUMENT>.offset(of: \.loop_count)! + 4
            withUnsafeMutableBytes(of: &instrument) { bytes in
                bytes.storeBytes(of: Int32(SF_LOOP_FORWARD), toByteOffset: place, as: Int32.self)
                bytes.storeBytes(of: UInt32(loop.lowerBound), toByteOffset: place + 4, as: UInt32.self)
                // libsndfile's end is one past the loop's last frame.
                bytes.storeBytes(of: UInt32(loop.upperBound + 1), toByteOffset: place + 8, as: UInt32.self)
            }
            _ = sf_command(file, Int32(SFC_SET_INSTRUMENT), &instrument, Int32(MemoryLayout<SF_INSTRUMENT>.size))
        }
        _ = samples.withUnsafeBufferPointer {
            sf_writef_float(file, $0.baseAddress, sf_count_t(samples.count / channels))
        }
        sf_close(file)
    }

    /// `frames` frames of a sine at `frequency` Hz (mono).
    static func sine(_ frequency: Double, rate: Double = 48000, frames: Int, amplitude: Float = 0.5) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / rate)) }
    }

    /// Interleaves two channels.
    static func stereo(_ left: [Float], _ right: [Float]) -> [Float] {
        var result = [Float](repeating: 0, count: 2 * left.count)
        for index in left.indices {
            result[2 * index] = left[index]
            result[2 * index + 1] = right[index]
        }
        return result
    }
}

/// One step of a scripted render, at an absolute frame.
enum VoiceEvent {
    case start(id: Int, SFZVoiceParameters)
    case release(id: Int)
    case choke(group: UInt32, SFZChokeMode)
    case inputs(id: Int, SFZVoiceInputs)
}

/// A store, an optional streamer and an engine over samples written for the test, and a scripted render in
/// slices of any size.
///
/// Threads: the test's (it is the engine's render thread).
final class VoiceRig {
    let folder: String
    let store: SFZSampleStore
    let streamer: SFZStreamer?
    let engine: SFZVoiceEngine
    var ids: [String: SFZSampleID] = [:]

    /// `samples`: name → (interleaved frames, channels, rate, file loop).
    init(
        samples: [(name: String, frames: [Float], channels: Int, rate: Int, loop: ClosedRange<Int>?)],
        limits: SFZSampleStore.Limits = VoiceRig.resident, polyphony: Int = 16, fadeSlots: Int = 16,
        stream: Bool = false, waitsForData: Bool = true, diskDelay: Double? = nil, fadeSeconds: Double = 0.003,
        openFiles: Int = 32, quality: SFZInterpolationQuality = .live
    ) throws {
        folder = TestFiles.scratch("sfz-voice")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        store = SFZSampleStore(limits: limits)
        for sample in samples {
            let path = folder + "/" + sample.name
            SampleFixtures.write(path, sample.frames, channels: sample.channels, rate: sample.rate, loop: sample.loop)
            ids[sample.name] = try store.load(path: path)
        }
        var configuration = SFZVoiceEngine.Configuration(
            sampleRate: 48000, polyphony: polyphony, waitsForData: waitsForData)
        configuration.fadeSlots = fadeSlots
        configuration.fadeSeconds = fadeSeconds
        configuration.quality = quality
        streamer =
            stream
            ? SFZStreamer(
                store: store, slots: configuration.slots, maximumOpenFiles: openFiles, diskDelay: diskDelay ?? 0) : nil
        engine = SFZVoiceEngine(store: store, streamer: streamer, configuration: configuration)
    }

    deinit {
        engine.deallocate()
        TestFiles.remove(folder)
    }

    /// Every sample resident (nothing streamed).
    static var resident: SFZSampleStore.Limits {
        var limits = SFZSampleStore.Limits()
        limits.wholeBelowFrames = 1 << 24
        return limits
    }

    /// Small heads: anything over 4,096 frames is streamed.
    static var streamed: SFZSampleStore.Limits {
        var limits = SFZSampleStore.Limits()
        limits.preloadFrames = 4096
        limits.wholeBelowFrames = 4096
        return limits
    }

    func parameters(_ name: String) -> SFZVoiceParameters { SFZVoiceParameters(sample: ids[name]!) }

    /// Renders `frames` frames in slices of `slice`, applying `events` (frame, event) at their frames.
    func render(frames: Int, slice: Int, events: [(frame: Int, event: VoiceEvent)] = []) -> (
        left: [Float], right: [Float]
    ) {
        var left = [Float](repeating: 0, count: frames)
        var right = [Float](repeating: 0, count: frames)
        var handles: [Int: SFZVoiceHandle] = [:]
        let sorted = events.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }
            .map(\.element)
        var next = 0
        var start = 0
        let scratchLeft = UnsafeMutablePointer<Float>.allocate(capacity: slice)
        let scratchRight = UnsafeMutablePointer<Float>.allocate(capacity: slice)
        defer {
            scratchLeft.deallocate()
            scratchRight.deallocate()
        }
        while start < frames {
            let count = min(slice, frames - start)
            while next < sorted.count && sorted[next].frame < start + count {
                let offset = sorted[next].frame - start
                switch sorted[next].event {
                case .start(let id, let parameters): handles[id] = engine.start(parameters, at: offset)
                case .release(let id): if let handle = handles[id] { engine.release(handle, at: offset) }
                case .choke(let group, let mode): engine.choke(group: group, mode: mode, at: offset)
                case .inputs(let id, let inputs):
                    if let handle = handles[id] { engine.setInputs(handle, inputs, at: offset) }
                }
                next += 1
            }
            engine.render(frameCount: count, left: scratchLeft, right: scratchRight)
            for index in 0..<count {
                left[start + index] = scratchLeft[index]
                right[start + index] = scratchRight[index]
            }
            start += count
        }
        return (left, right)
    }
}

/// Measurements the voice tests share.
enum SignalMeasure {
    /// The frequency of a steady tone, from its first and last rising zero crossings (linearly placed).
    static func frequency(_ x: [Float], rate: Double, from: Int, to: Int) -> Double {
        var first: Double?
        var last = 0.0
        var crossings = 0
        for index in (from + 1)..<to where x[index - 1] < 0 && x[index] >= 0 {
            let t = Double(index - 1) + Double(x[index - 1] / (x[index - 1] - x[index]))
            if first == nil { first = t }
            last = t
            crossings += 1
        }
        guard let first, crossings > 1 else { return 0 }
        return Double(crossings - 1) / (last - first) * rate
    }

    /// Cents from `expected` to `measured`.
    static func cents(_ measured: Double, _ expected: Double) -> Double { 1200 * log2(measured / expected) }

    /// The power spectrum (dB, relative to the strongest bin) of `count` frames from `from`, under a
    /// 4-term Blackman–Harris window (side lobes below −92 dB).
    static func spectrum(_ x: [Float], from: Int, count: Int) -> [Double] {
        var real = [Double](repeating: 0, count: count)
        var imaginary = [Double](repeating: 0, count: count)
        for n in 0..<count {
            let phase = 2 * Double.pi * Double(n) / Double(count - 1)
            let window = 0.35875 - 0.48829 * cos(phase) + 0.14128 * cos(2 * phase) - 0.01168 * cos(3 * phase)
            real[n] = Double(x[from + n]) * window
        }
        FFT.forward(real: &real, imaginary: &imaginary)
        let power = (0...(count / 2)).map { real[$0] * real[$0] + imaginary[$0] * imaginary[$0] }
        let peak = power.max() ?? 1
        return power.map { 10 * log10(max($0, 1e-30) / peak) }
    }

    /// The largest step from one frame to the next.
    static func maximumStep(_ x: [Float], from: Int = 1, to: Int? = nil) -> Float {
        var largest: Float = 0
        for index in max(1, from)..<(to ?? x.count) { largest = max(largest, abs(x[index] - x[index - 1])) }
        return largest
    }
}

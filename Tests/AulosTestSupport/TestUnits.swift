import AulosCore

#if canImport(Glibc)
import Glibc
#endif

// Test units and signals that need nothing above AulosCore, for every test target.

/// A test unit whose output is its one parameter's value, frame by frame: the parameter trajectory made
/// audible, so scheduling, ramps and de-zipper glides can be checked sample by sample.
public final class ParameterProbeUnit: AudioUnit, @unchecked Sendable {
    public static let value = ParameterID(7)

    public init(smoothed: Bool = true) {
        super.init(
            description: ComponentDescription(type: .generator, subtype: "ppro", manufacturer: "Test"),
            name: "Test: Parameter Probe",
            inputs: 0, outputs: 1, format: .canonical(channels: 1, sampleRate: 48_000),
            parameters: [
                ParameterInfo(
                    id: Self.value, name: "Value", unit: .generic, range: -10...10, defaultValue: 0,
                    isSmoothed: smoothed)
            ])
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        UnitKernel.make(ParameterProbeKernel(parameters: renderParameters), render: ParameterProbeKernel.render)
    }
}

public struct ParameterProbeKernel {
    public let parameters: ParameterKernel

    public static let render: KernelRenderFunction = { state, _, _, _, _, frames, io in
        state.assumingMemoryBound(to: ParameterProbeKernel.self).pointee.render(Int(frames), io)
    }

    @_noAllocation @_noLocks
    public func render(_ frameCount: Int, _ io: UnsafeMutablePointer<AudioBufferList>) -> AulosStatus {
        let out = io.pointee.floatChannel(0)
        parameters.beginSlice()
        var frame = 0
        while frame < frameCount {
            parameters.applyEvents(dueAt: frame)
            let end = parameters.nextEventOffset(after: frame, frameCount: frameCount)
            for index in frame..<end { out[index] = parameters.next(0) }
            frame = end
        }
        parameters.endSlice(frameCount: frameCount)
        return 0
    }
}

/// A render callback source: channel c, frame at sample time t holds (t mod 1000) / 1000 + c.
public func rampCallback() -> RenderCallback {
    { _, _, timeStamp, _, frames, io in
        for channel in 0..<Int(io.pointee.bufferCount) {
            let out = io.pointee.floatChannel(channel)
            for frame in 0..<Int(frames) {
                out[frame] = Float((timeStamp.pointee.sampleTime + Int64(frame)) % 1000) / 1000 + Float(channel)
            }
        }
        return 0
    }
}

/// A test source (refCon → Float): 2 = an impulse at sample 0, 3 = white noise, 4 = bursts of that noise (a
/// quarter second every two seconds), another value ≥ 0 = that
/// constant on every channel, negative = a full-scale sine of that many Hz (at 48 kHz).
public func signalCallback() -> RenderCallback {
    { refCon, _, timeStamp, _, frames, io in
        let value = refCon!.assumingMemoryBound(to: Float.self).pointee
        for channel in 0..<Int(io.pointee.bufferCount) {
            let out = io.pointee.floatChannel(channel)
            for frame in 0..<Int(frames) {
                let t = timeStamp.pointee.sampleTime + Int64(frame)
                if value == 2 {
                    out[frame] = t == 0 ? 1 : 0
                } else if value == 4 {
                    // Bursts: the noise below for a quarter second every two seconds, silence between.
                    var x = UInt32(truncatingIfNeeded: t &* 2_654_435_761) ^ 0x9E37_79B9
                    x ^= x << 13
                    x ^= x >> 17
                    x ^= x << 5
                    out[frame] = t % 96_000 < 12_000 ? Float(Int32(bitPattern: x)) / 2_147_483_648 * 0.5 : 0
                } else if value == 3 {
                    var x = UInt32(truncatingIfNeeded: t &* 2_654_435_761) ^ 0x9E37_79B9
                    x ^= x << 13
                    x ^= x >> 17
                    x ^= x << 5
                    out[frame] = Float(Int32(bitPattern: x)) / 2_147_483_648 * 0.5
                } else if value >= 0 {
                    out[frame] = value
                } else {
                    out[frame] = Float(sin(2 * .pi * Double(-value) * Double(t) / 48_000))
                }
            }
        }
        return 0
    }
}

/// Buffers for rendering a unit or graph from a test.
public final class RenderBuffers {
    public let storage: AudioBufferListStorage
    public init(_ format: StreamFormat = .canonical(channels: 2, sampleRate: 48_000), frames: UInt32 = 4096) {
        storage = AudioBufferListStorage(format: format, maximumFrames: frames)
    }
    public var list: UnsafeMutablePointer<AudioBufferList> { storage.list }
    public func channel(_ index: Int, frames: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: list.pointee.floatChannel(index), count: frames))
    }
    public func prepare(_ frames: UInt32) {
        list.pointee.setFrameCount(frames, bytesPerFrame: storage.format.bytesPerFrame)
    }
}

/// Renders `frames` frames of a standalone unit at `sampleTime`, returning channel 0.
public func renderUnit(_ unit: AudioUnit, frames: UInt32, at sampleTime: Int64 = 0, buffers: RenderBuffers) throws
    -> [Float]
{
    var flags = RenderActionFlags(rawValue: 0)
    buffers.prepare(frames)
    try unit.render(
        flags: &flags, timeStamp: AudioTimeStamp(sampleTime: sampleTime), frameCount: frames, ioData: buffers.list)
    return buffers.channel(0, frames: Int(frames))
}

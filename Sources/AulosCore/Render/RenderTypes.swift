import CAulosRender

/// Core Audio names for the render ABI declared in C (see `AulosRender.h` for why it is C).
public typealias AudioTimeStamp = AulosTimeStamp
public typealias RenderActionFlags = AulosRenderActionFlags
public typealias AudioBuffer = AulosBuffer
public typealias AudioBufferList = AulosBufferList
/// Core Audio's AURenderCallback. Write it as a closure that captures nothing, inside a function (a
/// closure at the top level of main.swift is main-actor isolated and traps on the render thread).
public typealias RenderCallback = AulosRenderCallback
/// Core Audio's HostCallbackInfo: beat and tempo, musical time location and transport state, answered by
/// the host for the slice being rendered (see `HostTransport`). Install with the HostCallbacks property.
public typealias HostCallbackInfo = AulosHostCallbackInfo

extension AulosHostCallbackInfo: @unchecked @retroactive Sendable {}

/// A unit's render entry; see `UnitKernel`.
public typealias KernelRenderFunction = AulosKernelRenderFunction

extension AulosTimeStamp {
    /// A time stamp with a valid sample time (and host time when given).
    @inlinable @_noAllocation @_noLocks
    public init(sampleTime: Int64, hostTime: UInt64? = nil) {
        let flags = hostTime == nil ? AulosTimeStampFlags.sampleTimeValid : .sampleTimeValid.union(.hostTimeValid)
        self.init(sampleTime: sampleTime, hostTime: hostTime ?? 0, flags: flags)
    }
}

/// Core Audio's AURenderCallbackStruct: a callback and the context pointer it is called with.
public struct RenderCallbackStruct: @unchecked Sendable {
    public var callback: RenderCallback
    public var refCon: UnsafeMutableRawPointer?

    public init(_ callback: RenderCallback, refCon: UnsafeMutableRawPointer? = nil) {
        self.callback = callback
        self.refCon = refCon
    }
}

extension AulosBufferList {
    /// Channel `index` of a canonical (Float32, non-interleaved) list.
    @inlinable @_noAllocation @_noLocks
    public func floatChannel(_ index: Int) -> UnsafeMutablePointer<Float> {
        buffers[index].data.unsafelyUnwrapped.assumingMemoryBound(to: Float.self)
    }

    /// Sets every buffer's byte size to `frameCount` frames (Core Audio's mDataByteSize convention:
    /// the caller states how much it asks for).
    @inlinable @_noAllocation @_noLocks
    public func setFrameCount(_ frameCount: UInt32, bytesPerFrame: UInt32) {
        for index in 0..<Int(bufferCount) {
            buffers[index].byteSize = frameCount &* bytesPerFrame
        }
    }

    /// Zeroes `byteSize` bytes of every buffer: what a callback does when it has nothing to play.
    @inlinable @_noAllocation @_noLocks
    public func zeroFill() {
        for index in 0..<Int(bufferCount) {
            if let data = buffers[index].data {
                data.initializeMemory(as: UInt8.self, repeating: 0, count: Int(buffers[index].byteSize))
            }
        }
    }

    /// Copies `byteSize` bytes of each buffer of `source` into the matching buffer of `self`
    /// (same format, same frame count).
    @inlinable @_noAllocation @_noLocks
    public func copyContents(from source: UnsafePointer<AulosBufferList>) {
        let count = min(Int(bufferCount), Int(source.pointee.bufferCount))
        for index in 0..<count {
            let bytes = min(buffers[index].byteSize, source.pointee.buffers[index].byteSize)
            if let destination = buffers[index].data, let origin = source.pointee.buffers[index].data {
                destination.copyMemory(from: origin, byteCount: Int(bytes))
            }
        }
    }
}

/// Owns an `AudioBufferList` and its sample memory, sized for `maximumFrames` frames of `format`.
///
/// Threads: created and destroyed on the control thread (it allocates); the render thread uses `list`,
/// which stays valid for the storage's lifetime.
public final class AudioBufferListStorage: @unchecked Sendable {
    public let format: StreamFormat
    public let maximumFrames: UInt32
    public let list: UnsafeMutablePointer<AudioBufferList>
    private let buffers: UnsafeMutablePointer<AudioBuffer>
    private let memory: UnsafeMutableRawPointer
    private let bytesPerBuffer: Int

    /// Sample memory is 64-byte aligned per buffer (cache line, and room for SIMD loads).
    public init(format: StreamFormat, maximumFrames: UInt32) {
        self.format = format
        self.maximumFrames = maximumFrames
        let count = Int(format.bufferCount)
        let raw = Int(maximumFrames) * Int(format.bytesPerFrame)
        bytesPerBuffer = (raw + 63) & ~63
        memory = UnsafeMutableRawPointer.allocate(byteCount: max(64, bytesPerBuffer * count), alignment: 64)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: max(64, bytesPerBuffer * count))
        buffers = .allocate(capacity: max(1, count))
        for index in 0..<count {
            buffers[index] = AudioBuffer(
                channelCount: format.channelsPerBuffer, byteSize: UInt32(raw),
                data: memory + index * bytesPerBuffer)
        }
        list = .allocate(capacity: 1)
        list.initialize(to: AudioBufferList(bufferCount: UInt32(count), buffers: buffers))
    }

    deinit {
        list.deallocate()
        buffers.deallocate()
        memory.deallocate()
    }

}

/// The parts of a stream format the render thread needs, as a trivial value (no strings, no classes).
public struct StreamFormatLayout: Sendable {
    public var sample: SampleFormat
    public var channels: UInt32
    public var interleaved: Bool
    public var bytesPerFrame: UInt32
    public var bytesPerSample: Int

    public init(_ format: StreamFormat) {
        sample = format.sampleFormat ?? .float32
        channels = format.channelsPerFrame
        interleaved = format.isInterleaved
        bytesPerFrame = format.bytesPerFrame
        bytesPerSample = Int(sample.bytesPerSample)
    }

    /// Field by field, so the render thread compares without a protocol witness.
    @inline(__always) @_noAllocation @_noLocks
    public func sameLayout(as other: StreamFormatLayout) -> Bool {
        sample.isSameCase(as: other.sample) && channels == other.channels && interleaved == other.interleaved
            && bytesPerFrame == other.bytesPerFrame
    }
}

/// What a unit (or render notification) needs from the host for one slice: the beat at its first frame,
/// the tempo, and whether the transport plays.
public struct HostBeat: BitwiseCopyable, Sendable {
    public var beat: Double
    public var tempo: Double
    public var playing: Bool
}

extension AulosHostCallbackInfo {
    /// Asks the host for this slice's beat, tempo and play state; nil when a callback is missing, refuses
    /// (outside render) or reports no tempo. Render thread.
    @_noAllocation @_noLocks
    public func currentBeat() -> HostBeat? {
        guard let beatAndTempo, let transportState else { return nil }
        var beat = 0.0
        var tempo = 0.0
        var playing: UInt8 = 0
        let user = hostUserData
        // Indirect calls into the host: the checker cannot see through a function pointer.
        let status = _unsafePerformance { beatAndTempo(user, &beat, &tempo) }
        let stateStatus = _unsafePerformance { transportState(user, &playing, nil, nil, nil, nil, nil, nil) }
        guard status == 0, stateStatus == 0, tempo > 0 else { return nil }
        return HostBeat(beat: beat, tempo: tempo, playing: playing == 1)
    }
}

extension AulosRenderActionFlags {
    // Concrete versions of the OptionSet members render code uses. The generic ones reach the imported C
    // type's OptionSet conformance, whose witness table the Swift runtime builds — allocating — the first
    // time any code in the process uses it: in a live host, on the render thread in the first cycle
    // (the zero-allocation tests hid it whenever another test happened to run first).

    @inlinable @_noAllocation @_noLocks
    public func contains(_ member: AulosRenderActionFlags) -> Bool { rawValue & member.rawValue == member.rawValue }

    @inlinable @_noAllocation @_noLocks
    public mutating func insert(_ member: AulosRenderActionFlags) {
        self = AulosRenderActionFlags(rawValue: rawValue | member.rawValue)
    }

    @inlinable @_noAllocation @_noLocks
    public mutating func remove(_ member: AulosRenderActionFlags) {
        self = AulosRenderActionFlags(rawValue: rawValue & ~member.rawValue)
    }

    @inlinable @_noAllocation @_noLocks
    public mutating func formUnion(_ other: AulosRenderActionFlags) {
        self = AulosRenderActionFlags(rawValue: rawValue | other.rawValue)
    }
}

extension AulosTimeStampFlags {
    // Concrete members for render code, for the reason given above (and an option-set literal such as
    // [.sampleTimeValid, .hostTimeValid] would build an array).

    @inlinable @_noAllocation @_noLocks
    public func contains(_ member: AulosTimeStampFlags) -> Bool { rawValue & member.rawValue == member.rawValue }

    @inlinable @_noAllocation @_noLocks
    public func union(_ other: AulosTimeStampFlags) -> AulosTimeStampFlags {
        AulosTimeStampFlags(rawValue: rawValue | other.rawValue)
    }
}

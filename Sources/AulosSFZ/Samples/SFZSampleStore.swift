import CSndfile
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A sample in a store: its index there.
///
/// Threads: a value.
public struct SFZSampleID: Hashable, Sendable, BitwiseCopyable {
    public var index: Int32
    @_noAllocation @_noLocks
    public init(index: Int32) { self.index = index }
}

/// What the render thread knows of one sample: its shape, its resident head and the loop its file states.
/// Frames are interleaved, one or two channels (a file's further channels are left out); the head is followed
/// by zeros, so an interpolator that reads a little past it reads silence, never foreign memory.
///
/// Threads: written by the control thread while the store loads, read by any thread after (never changed).
public struct SFZSampleInfo: BitwiseCopyable, @unchecked Sendable {
    /// Frames in the file.
    public var frames: Int
    /// 1 or 2.
    public var channels: Int
    public var sampleRate: Double
    /// Frames 0..<headFrames are in `head`; the rest is streamed.
    public var headFrames: Int
    public var head: UnsafeMutablePointer<Float>
    /// The file's first loop (a WAV's `smpl` chunk), first and last frame inclusive as SFZ states loops;
    /// -1 when the file has none.
    public var loopStart: Int
    public var loopEnd: Int
    /// The key the file says it was recorded at (a WAV's `smpl` MIDI unity note, through libsndfile's
    /// instrument chunk), for `pitch_keycenter=sample`; -1 when the file does not say.
    public var rootKey: Int = -1

    /// Zero frames after every head, so an interpolator reading past its end reads silence: at least the
    /// widest window any voice reads (`SFZInterpolator.maximumReach`).
    public static var guardFrames: Int { @inline(__always) @_noAllocation @_noLocks get { 512 } }

    /// The whole sample is in memory: no voice playing it needs the loader.
    public var isResident: Bool { @inline(__always) @_noAllocation @_noLocks get { headFrames >= frames } }
}

/// Why a sample could not be loaded, worded for the user: which file and what to do.
///
/// Threads: a value.
public struct SFZSampleError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The heads would pass `Limits.maximumPreloadedBytes` (shorter heads may fit).
    public var passesCap = false
    public init(_ message: String, passesCap: Bool = false) {
        self.message = message
        self.passesCap = passesCap
    }
    public var description: String { message }
}

/// Loads sample files (WAV, FLAC, OGG and whatever else libsndfile reads; mono or stereo; any rate) and keeps
/// the head of each in memory, the whole sample when it is short. The rest is read by `SFZStreamer`'s loader
/// thread while a voice plays the head.
///
/// Memory is bounded: at most `Limits.maximumPreloadedBytes` of heads, at most `Limits.maximumSamples` samples
/// and `Limits.maximumFramesPerSample` frames a sample; a load past a limit throws and says which.
///
/// Threads: the control thread loads samples (before the engine that plays them is made, and never while
/// one renders); afterwards the descriptors are read-only, read by the render and loader threads. The store
/// must outlive every engine and streamer made with it.
public final class SFZSampleStore: @unchecked Sendable {
    /// The bounds a store keeps.
    ///
    /// Threads: a value.
    public struct Limits: Sendable, Hashable {
        /// Frames of every sample kept in memory from its start: what a voice plays while the loader catches
        /// up. 8,192 frames is 171 ms at 48 kHz, far more than the loader needs to answer (it reads ahead
        /// of every voice in chunks of `SFZStreamer.chunkFrames`), and 64 KiB of a stereo sample.
        public var preloadFrames = 8192
        /// A sample no longer than this is loaded whole (streaming it would save little and cost a file).
        public var wholeBelowFrames = 16384
        /// The cap on the heads (and whole samples) of one store: 256 MiB (a Pi 4 with 2 GB keeps room).
        public var maximumPreloadedBytes = 256 << 20
        public var maximumSamples = 8192
        /// 2³¹ frames: 12 hours at 48 kHz; a longer header is a damaged file.
        public var maximumFramesPerSample = Int(Int32.max)
        public init() {}
    }

    public let limits: Limits
    /// Every sample's descriptor, indexed by `SFZSampleID.index`; `count` of them are valid.
    public let infos: UnsafeMutablePointer<SFZSampleInfo>
    public private(set) var count = 0
    /// The files, indexed like `infos` (the loader opens them by this).
    public private(set) var paths: [String] = []
    private var byPath: [String: SFZSampleID] = [:]
    /// Bytes of heads and whole samples in memory (control thread; status).
    public private(set) var preloadedBytes = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
        infos = .allocate(capacity: max(1, limits.maximumSamples))
    }

    deinit {
        for index in 0..<count { infos[index].head.deallocate() }
        infos.deallocate()
    }

    /// Loads `path` (once: a second load of the same path returns the same sample), keeping at least
    /// `residentFrames` frames of it in memory — more than the head when a region loops beyond the head over
    /// more than a stream buffer holds (`SFZVoiceEngine.streamableLoopFrames`), or `Int.max` for all of it.
    public func load(path: String, residentFrames: Int = 0) throws(SFZSampleError) -> SFZSampleID {
        if let known = byPath[path] {
            if residentFrames > infos[Int(known.index)].headFrames && !infos[Int(known.index)].isResident {
                throw SFZSampleError(
                    "\(path) was loaded with a shorter head; load it first with the most frames it must keep")
            }
            return known
        }
        guard count < limits.maximumSamples else {
            throw SFZSampleError("cannot load \(path): more than \(limits.maximumSamples) samples in one library")
        }
        var format = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &format) else {
            throw SFZSampleError("cannot read the sample \(path): \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
        let frames = Int(format.frames)
        guard format.frames >= 0, frames <= limits.maximumFramesPerSample, format.channels > 0,
            format.samplerate > 0
        else {
            throw SFZSampleError(
                "cannot use the sample \(path): \(format.frames) frames, \(format.channels) channels, "
                    + "\(format.samplerate) Hz (at most \(limits.maximumFramesPerSample) frames)")
        }
        let fileChannels = Int(format.channels)
        let channels = min(2, fileChannels)
        var headFrames = frames <= limits.wholeBelowFrames ? frames : min(frames, limits.preloadFrames)
        headFrames = min(frames, max(headFrames, residentFrames))
        let bytes = (headFrames + SFZSampleInfo.guardFrames) * channels * MemoryLayout<Float>.stride
        guard preloadedBytes + bytes <= limits.maximumPreloadedBytes else {
            throw SFZSampleError(
                "cannot load \(path): the samples' preloaded heads (\(limits.preloadFrames) frames each) would pass "
                    + "the cap of \(limits.maximumPreloadedBytes >> 20) MiB; play a smaller program of the library",
                passesCap: true)
        }
        let head = UnsafeMutablePointer<Float>.allocate(capacity: (headFrames + SFZSampleInfo.guardFrames) * channels)
        head.initialize(repeating: 0, count: (headFrames + SFZSampleInfo.guardFrames) * channels)
        let read = Self.read(file, into: head, from: 0, frames: headFrames, fileChannels: fileChannels)
        guard read == headFrames else {
            head.deallocate()
            throw SFZSampleError("cannot read the sample \(path): it ends after \(read) of \(frames) frames")
        }
        var loop = (start: -1, end: -1)
        if let fileLoop = Self.fileLoop(file), fileLoop.end < frames { loop = fileLoop }
        let id = SFZSampleID(index: Int32(count))
        infos[count] = SFZSampleInfo(
            frames: frames, channels: channels, sampleRate: Double(format.samplerate), headFrames: headFrames,
            head: head, loopStart: loop.start, loopEnd: loop.end, rootKey: Self.fileRootKey(file) ?? -1)
        count += 1
        paths.append(path)
        byPath[path] = id
        preloadedBytes += bytes
        return id
    }

    /// The first forward loop of the file's instrument chunk (a WAV's `smpl`), inclusive, if it has one.
    /// libsndfile's `SF_INSTRUMENT.loops` is an array of an unnamed struct, which Swift does not import: the
    /// loops are read from their place in the struct (after `loop_count`, four 32-bit fields each: mode, start,
    /// end one past the last frame, count).
    static func fileLoop(_ file: OpaquePointer) -> (start: Int, end: Int)? {
        var instrument = SF_INSTRUMENT()
        let size = Int32(MemoryLayout<SF_INSTRUMENT>.size)
        guard sf_command(file, Int32(SFC_GET_INSTRUMENT), &instrument, size) == Int32(SF_TRUE),
            instrument.loop_count > 0, let place = MemoryLayout<SF_INSTRUMENT>.offset(of: \.loop_count)
        else { return nil }
        return withUnsafeBytes(of: &instrument) { bytes in
            let first = place + 4
            let mode = bytes.load(fromByteOffset: first, as: Int32.self)
            let start = Int(bytes.load(fromByteOffset: first + 4, as: UInt32.self))
            let end = Int(bytes.load(fromByteOffset: first + 8, as: UInt32.self)) - 1
            guard mode != Int32(SF_LOOP_NONE), end > start else { return nil }
            return (start, end)
        }
    }

    /// The file's root key (its instrument chunk's base note), if it states one in 0…127.
    static func fileRootKey(_ file: OpaquePointer) -> Int? {
        var instrument = SF_INSTRUMENT()
        let size = Int32(MemoryLayout<SF_INSTRUMENT>.size)
        guard sf_command(file, Int32(SFC_GET_INSTRUMENT), &instrument, size) == Int32(SF_TRUE),
            (0...127).contains(Int(instrument.basenote))
        else { return nil }
        return Int(instrument.basenote)
    }

    /// The descriptor of a loaded sample.
    public func info(_ id: SFZSampleID) -> SFZSampleInfo { infos[Int(id.index)] }

    /// Reads `frames` frames from `first` on into `destination` as one or two interleaved channels (a file's
    /// further channels dropped); the frames read. Loader and control threads (file I/O).
    static func read(
        _ file: OpaquePointer, into destination: UnsafeMutablePointer<Float>, from first: Int, frames: Int,
        fileChannels: Int
    ) -> Int {
        guard frames > 0 else { return 0 }
        guard sf_seek(file, sf_count_t(first), SEEK_SET) == sf_count_t(first) else { return 0 }
        if fileChannels <= 2 {
            return Int(sf_readf_float(file, destination, sf_count_t(frames)))
        }
        // More than two channels: read through a scratch block and keep the first two.
        let block = 1024
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: block * fileChannels)
        defer { scratch.deallocate() }
        var done = 0
        while done < frames {
            let got = Int(sf_readf_float(file, scratch, sf_count_t(min(block, frames - done))))
            if got <= 0 { break }
            for frame in 0..<got {
                destination[2 * (done + frame)] = scratch[frame * fileChannels]
                destination[2 * (done + frame) + 1] = scratch[frame * fileChannels + 1]
            }
            done += got
        }
        return done
    }
}

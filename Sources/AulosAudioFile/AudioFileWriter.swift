import AulosCore
import CSndfile

/// The container of an audio file, chosen from the file name's extension.
public enum AudioFileType: String, Sendable, CaseIterable {
    case wav, flac

    public init?(path: String) {
        guard let dot = path.lastIndex(of: ".") else { return nil }
        self.init(rawValue: path[path.index(after: dot)...].lowercased())
    }
}

/// Writes interleaved PCM frames to a WAV or FLAC file through libsndfile.
///
/// Threads: whichever thread writes (the offline renderer's); not real-time (it does file I/O).
/// The frames handed to `write` must be interleaved in `format`, which must be Float32, Int16, Int24
/// (packed) or Int32; FLAC takes Int16 and Int24 only.
public final class AudioFileWriter {
    public let path: String
    public let format: StreamFormat
    public let type: AudioFileType
    private var file: OpaquePointer?
    public private(set) var framesWritten: Int64 = 0

    public init(path: String, format: StreamFormat) throws(AudioUnitError) {
        guard let type = AudioFileType(path: path) else {
            throw AudioUnitError(.invalidFile, "\(path): unknown file type; use .wav or .flac")
        }
        try format.validate()
        guard format.isInterleaved, let sample = format.sampleFormat else {
            throw AudioUnitError(.formatNotSupported, "audio files are written from interleaved frames")
        }
        let subtype: Int32
        switch sample {
        case .float32: subtype = Int32(SF_FORMAT_FLOAT)
        case .int16: subtype = Int32(SF_FORMAT_PCM_16)
        case .int24: subtype = Int32(SF_FORMAT_PCM_24)
        case .int32: subtype = Int32(SF_FORMAT_PCM_32)
        }
        if type == .flac && !(sample == .int16 || sample == .int24) {
            throw AudioUnitError(.formatNotSupported, "FLAC holds 16- or 24-bit integer samples, not \(sample)")
        }
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelsPerFrame)
        info.format = (type == .wav ? Int32(SF_FORMAT_WAV) : Int32(SF_FORMAT_FLAC)) | subtype
        guard sf_format_check(&info) != 0 else {
            throw AudioUnitError(
                .formatNotSupported, "libsndfile cannot write \(format.compactDescription) as \(type.rawValue)")
        }
        guard let handle = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioUnitError(.invalidFile, "cannot write \(path): \(String(cString: sf_strerror(nil)))")
        }
        // No PEAK chunk: it carries a time stamp, and renders must be byte-for-byte repeatable.
        sf_command(handle, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        self.path = path
        self.format = format
        self.type = type
        file = handle
    }

    deinit { try? close() }

    /// Writes `frameCount` interleaved frames from `data`.
    public func write(_ data: UnsafeRawPointer, frameCount: Int) throws(AudioUnitError) {
        guard let file else { throw AudioUnitError(.invalidFile, "\(path) is closed") }
        let channels = Int(format.channelsPerFrame)
        let written: Int64
        switch (type, format.sampleFormat!) {
        case (.wav, _):
            // WAV stores little-endian PCM exactly as it is in memory here, including packed 24-bit.
            let bytes = Int64(frameCount * Int(format.bytesPerFrame))
            written = sf_write_raw(file, data, bytes) / Int64(format.bytesPerFrame)
        case (.flac, .int16):
            written = sf_writef_short(file, data.assumingMemoryBound(to: Int16.self), Int64(frameCount))
        case (.flac, _):
            // FLAC goes through libsndfile's int API: widen packed 24-bit samples to left-justified Int32.
            let bytes = data.assumingMemoryBound(to: UInt8.self)
            let wide = (0..<(frameCount * channels)).map { index -> Int32 in
                let b = bytes + index * 3
                return (Int32(b[0]) << 8 | Int32(b[1]) << 16 | Int32(Int8(bitPattern: b[2])) << 24)
            }
            written = sf_writef_int(file, wide, Int64(frameCount))
        }
        guard written == Int64(frameCount) else {
            throw AudioUnitError(.invalidFile, "writing \(path) failed: \(String(cString: sf_strerror(file)))")
        }
        framesWritten += written
    }

    /// Finishes the file (headers, FLAC stream). Safe to call twice.
    public func close() throws(AudioUnitError) {
        guard let handle = file else { return }
        file = nil
        guard sf_close(handle) == 0 else {
            throw AudioUnitError(.invalidFile, "closing \(path) failed")
        }
    }
}

/// Reads an audio file into Float32 frames (for tests and tools that compare renders).
public struct AudioFileContents: Sendable {
    public let sampleRate: Double
    public let channels: Int
    /// Interleaved samples, full scale ±1.0.
    public let samples: [Float]
    /// libsndfile's major format and subtype (SF_FORMAT_* values).
    public let majorFormat: Int32
    public let subtype: Int32

    public var frameCount: Int { channels == 0 ? 0 : samples.count / channels }

    public init(path: String) throws(AudioUnitError) {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioUnitError(.invalidFile, "cannot read \(path): \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
        var samples = [Float](repeating: 0, count: Int(info.frames) * Int(info.channels))
        let read = samples.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
        guard read == info.frames else { throw AudioUnitError(.invalidFile, "\(path) is truncated") }
        sampleRate = Double(info.samplerate)
        channels = Int(info.channels)
        self.samples = samples
        majorFormat = info.format & Int32(SF_FORMAT_TYPEMASK)
        subtype = info.format & Int32(SF_FORMAT_SUBMASK)
    }
}

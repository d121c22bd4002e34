import AulosCore
import CSndfile

#if canImport(Glibc)
import Glibc
#endif

/// The container of an audio file, chosen from the file name's extension.
public enum AudioFileType: String, Sendable, CaseIterable {
    case wav, flac

    public init?(path: String) {
        guard let dot = path.lastIndex(of: ".") else { return nil }
        self.init(rawValue: path[path.index(after: dot)...].lowercased())
    }
}

/// Writes interleaved PCM frames to a WAV or FLAC file through libsndfile — never over a file a user
/// has until the new one is whole. Frames go to a temporary file beside the target (`NAME.partial-PID`);
/// `close()` finishes it and renames it into place in one step, so the target is always either the old
/// file or the complete new one. A writer dropped without `close()` (a failed render, a full disk) removes
/// its temporary file and leaves the target as it was. A link as the target is followed: the file it
/// points to is replaced, the link stays.
///
/// A WAV file's sizes are 32-bit: past 4 GiB of audio (6.2 hours of 16-bit stereo at 48 kHz) its header
/// would wrap. Given the frames to come, the writer chooses RF64 (the EBU's 64-bit WAV, read by libsndfile,
/// sox, ffmpeg and DAWs) when they would not fit, and a plain WAV otherwise (byte-identical to before). A
/// WAV that grows past its limit anyway is an error, never a wrapped header.
///
/// Threads: whichever thread writes (the offline renderer's); not real-time (it does file I/O).
/// The frames handed to `write` must be interleaved in `format`, which must be Float32, Int16, Int24
/// (packed) or Int32; FLAC takes Int16 and Int24 only.
public final class AudioFileWriter {
    /// Where the finished file goes.
    public let path: String
    /// Where the frames are written until `close()`.
    public let temporaryPath: String
    public let format: StreamFormat
    public let type: AudioFileType
    /// Written as RF64 (the WAV would pass 4 GiB).
    public let isRF64: Bool
    private let wavDataLimit: Int64
    private var file: OpaquePointer?
    private var finished = false
    public private(set) var framesWritten: Int64 = 0
    /// The system's (or libsndfile's) reason the last write failed, without the file's name.
    public private(set) var failureReason: String?
    /// A descriptor of the temporary file for `checkpoint`'s fdatasync (libsndfile does not share its own).
    private var syncDescriptor: Int32 = -1

    /// The most audio data a plain WAV can hold: its RIFF size field is 32 bits, and the header and a
    /// possible padding byte come out of it.
    public static let wavDataLimit: Int64 = 0xFFFF_FFFF - 4096

    /// Opens the temporary file. `expectedFrames`: how many frames will be written, if known (a WAV then
    /// becomes RF64 when they would not fit).
    public convenience init(path: String, format: StreamFormat, expectedFrames: Int64? = nil) throws(AudioFileError) {
        try self.init(path: path, format: format, expectedFrames: expectedFrames, wavDataLimit: Self.wavDataLimit)
    }

    /// `wavDataLimit` lower than a WAV's own, so tests can reach it without writing 4 GiB.
    init(path: String, format: StreamFormat, expectedFrames: Int64?, wavDataLimit: Int64) throws(AudioFileError) {
        self.wavDataLimit = wavDataLimit
        guard let type = AudioFileType(path: path) else {
            throw AudioFileError("\(path): unknown file type; use .wav or .flac")
        }
        do { try format.validate() } catch { throw AudioFileError("cannot write \(path): \(error.detail)") }
        guard format.isInterleaved, let sample = format.sampleFormat else {
            throw AudioFileError("cannot write \(path): audio files are written from interleaved frames")
        }
        let subtype: Int32
        switch sample {
        case .float32: subtype = Int32(SF_FORMAT_FLOAT)
        case .int16: subtype = Int32(SF_FORMAT_PCM_16)
        case .int24: subtype = Int32(SF_FORMAT_PCM_24)
        case .int32: subtype = Int32(SF_FORMAT_PCM_32)
        }
        if type == .flac && !(sample == .int16 || sample == .int24) {
            throw AudioFileError("cannot write \(path): FLAC holds 16- or 24-bit integer samples, not \(sample)")
        }
        let expectedBytes = (expectedFrames ?? 0).multipliedReportingOverflow(by: Int64(format.bytesPerFrame))
        isRF64 = type == .wav && (expectedBytes.overflow || expectedBytes.partialValue > wavDataLimit)
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelsPerFrame)
        let major = type == .flac ? SF_FORMAT_FLAC : isRF64 ? SF_FORMAT_RF64 : SF_FORMAT_WAV
        info.format = Int32(major) | subtype
        guard sf_format_check(&info) != 0 else {
            throw AudioFileError("libsndfile cannot write \(format.compactDescription) as \(type.rawValue)")
        }
        let target = Self.resolvingLinks(path)
        Self.removeAbandonedPartials(of: target)
        temporaryPath = target + ".partial-\(getpid())"
        errno = 0
        guard let handle = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            throw AudioFileError("cannot write \(path): \(Self.reason(errno, libsndfile: nil))")
        }
        // No PEAK chunk: it carries a time stamp, and renders must be byte-for-byte repeatable.
        sf_command(handle, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        // The new file keeps the permissions of the one it replaces.
        var old = stat()
        if stat(target, &old) == 0 { chmod(temporaryPath, old.st_mode & 0o7777) }
        self.path = path
        self.format = format
        self.type = type
        file = handle
    }

    /// A writer dropped without `close()` did not finish: the target keeps what it had.
    deinit { discard() }

    /// Writes `frameCount` interleaved frames from `data`.
    public func write(_ data: UnsafeRawPointer, frameCount: Int) throws(AudioFileError) {
        guard let file else { throw AudioFileError("\(path) is closed") }
        let channels = Int(format.channelsPerFrame)
        if type == .wav && !isRF64
            && (framesWritten + Int64(frameCount)) * Int64(format.bytesPerFrame) > wavDataLimit
        {
            throw AudioFileError(
                "\(path): a WAV file holds at most 4 GiB of audio; render less, or to FLAC"
                    + untouchedNote)
        }
        let written: Int64
        errno = 0
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
            let reason = Self.reason(errno, libsndfile: file)
            failureReason = reason
            throw AudioFileError("cannot write \(path): \(reason)" + untouchedNote)
        }
        framesWritten += written
    }

    /// Makes the file on disk describe the frames written so far: a WAV's header sizes are rewritten (FLAC's
    /// stream header is only written at the end; its frames are readable without it) and the data is synced.
    /// A writer killed outright then leaves a file that is whole up to the last checkpoint, not one whose
    /// header says 0 bytes. For a recording's disk thread every few seconds: never on a real-time thread.
    /// Without `syncing`, only the header: enough for SIGKILL, which loses nothing the kernel was given.
    public func checkpoint(syncing: Bool = true) {
        guard let file else { return }
        if type == .wav { sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0) }
        // A power cut loses what the kernel has not written yet; SIGKILL alone loses nothing written.
        guard syncing else { return }
        if syncDescriptor < 0 { syncDescriptor = open(temporaryPath, O_WRONLY | O_CLOEXEC) }
        if syncDescriptor >= 0 { fdatasync(syncDescriptor) }
    }

    /// Finishes the file (headers, FLAC stream) and renames it into place. Safe to call twice.
    public func close() throws(AudioFileError) {
        guard let handle = file else { return }
        file = nil
        closeSyncDescriptor()
        errno = 0
        guard sf_close(handle) == 0 else {
            let reason = Self.reason(errno, libsndfile: nil)
            unlink(temporaryPath)
            throw AudioFileError("cannot finish \(path): \(reason)" + untouchedNote)
        }
        guard rename(temporaryPath, Self.resolvingLinks(path)) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw AudioFileError("cannot put \(path) in place: \(reason)" + untouchedNote)
        }
        finished = true
    }

    /// Finishes the file with whatever was written and renames it into place — also after a write error (a
    /// full disk), when `close()` would give up: a recording cannot be made again, so what fitted is the
    /// take. A WAV's header is made to describe the whole frames actually in the file (`WAVHeaderRepair`); a
    /// FLAC keeps the blocks libFLAC wrote. Returns the frames kept (a FLAC's: those handed to the encoder)
    /// and, when libsndfile could not finish the file, why. Throws only when the file cannot be put in place;
    /// it is then left as `temporaryPath`, never removed. Safe to call twice.
    public func closeKeepingWhatWasWritten() throws(AudioFileError) -> (frames: Int64, failure: String?) {
        guard !finished else { return (framesWritten, nil) }
        var failure: String?
        if let handle = file {
            file = nil
            closeSyncDescriptor()
            errno = 0
            if sf_close(handle) != 0 { failure = Self.reason(errno, libsndfile: nil) }
        }
        // Whole frames of a write cut short count too: they are in the file.
        if type == .wav, let present = try? WAVHeaderRepair.repair(temporaryPath) { framesWritten = present }
        let frames = framesWritten
        guard rename(temporaryPath, Self.resolvingLinks(path)) == 0 else {
            throw AudioFileError(
                "cannot put \(path) in place: \(String(cString: strerror(errno))); what was written is in "
                    + temporaryPath)
        }
        finished = true
        return (frames, failure)
    }

    /// Gives up: the temporary file is removed and the target keeps what it had. Safe to call at any time.
    public func discard() {
        guard !finished else { return }
        closeSyncDescriptor()
        if let handle = file {
            file = nil
            sf_close(handle)
        }
        unlink(temporaryPath)
    }

    private func closeSyncDescriptor() {
        if syncDescriptor >= 0 { Glibc.close(syncDescriptor) }
        syncDescriptor = -1
    }

    /// "; the old NAME is untouched" when there is one: what the user most wants to know after a failure.
    private var untouchedNote: String {
        access(path, F_OK) == 0 ? " (the existing \(path) is untouched)" : ""
    }

    /// The system's reason when there is one (a full disk, a file-size limit, permissions): libsndfile's
    /// own text for those is misleading (a FLAC write to a full disk reports a "decoder" error).
    static func reason(_ error: Int32, libsndfile file: OpaquePointer?) -> String {
        error != 0 ? String(cString: strerror(error)) : String(cString: sf_strerror(file))
    }

    /// Temporary files of earlier writers to the same target that were killed outright (SIGKILL, a power
    /// cut), named `NAME.partial-PID` for a process that no longer exists: removed, so they do not pile up.
    /// A render can be made again; a recording's are kept instead (`recoverAbandonedPartials`).
    static func removeAbandonedPartials(of target: String) {
        for (partial, _) in abandonedPartials(of: target) { unlink(partial) }
    }

    /// The temporary files beside `target` (`NAME.partial-PID`) of processes that no longer exist.
    static func abandonedPartials(of target: String) -> [(path: String, pid: Int32)] {
        let slash = target.lastIndex(of: "/")
        let folder = slash.map { String(target[..<$0]) } ?? "."
        let prefix = (slash.map { String(target[target.index(after: $0)...]) } ?? target) + ".partial-"
        return (FileContents.entries(inFolder: folder.isEmpty ? "/" : folder) ?? []).compactMap { name, _ in
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count)), pid > 0 else { return nil }
            return kill(pid, 0) != 0 && errno == ESRCH ? ((folder.isEmpty ? "" : folder) + "/" + name, pid) : nil
        }
    }

    /// A recording's temporary files left by a process killed outright (SIGKILL, the OOM killer, systemd's
    /// TimeoutStopSec, a power cut) before it renamed them into place: moved aside as
    /// `NAME.recovered-PID.EXT`, never removed — a take cannot be made again, and the next recording to the
    /// same name would otherwise remove them. A WAV's header is rewritten to describe the audio in it (the
    /// recorder's checkpoints keep it within seconds of the end; the rest is on disk too); a FLAC is kept as
    /// it is: its frames play, and its stream header, written only at the end, gives no length. Returns what
    /// was moved where, and the frames a WAV holds.
    public static func recoverAbandonedPartials(of path: String) -> [(from: String, to: String, frames: Int64?)] {
        let target = resolvingLinks(path)
        let type = AudioFileType(path: target)
        let dot = target.lastIndex(of: ".").flatMap { target[$0...].contains("/") ? nil : $0 } ?? target.endIndex
        return abandonedPartials(of: target).compactMap { partial, pid in
            let frames = type == .wav ? try? WAVHeaderRepair.repair(partial) : nil
            // Never over a file already there (an earlier recovery of a reused process id).
            var number = 1
            var aside: String
            repeat {
                aside = target[..<dot] + ".recovered-\(pid)" + (number == 1 ? "" : "-\(number)") + target[dot...]
                number += 1
            } while access(aside, F_OK) == 0
            guard rename(partial, aside) == 0 else { return nil }
            return (partial, aside, frames)
        }
    }

    /// The file a chain of symbolic links ends at (the path itself when it is not a link or does not exist).
    static func resolvingLinks(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let real = realpath(path, nil) else {
            return path
        }
        defer { free(real) }
        return String(cString: real)
    }
}

/// An audio file that cannot be written or read, as one line naming the file and what to do.
///
/// Threads: a value.
public struct AudioFileError: ReportableError, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }
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

    /// The most frames read unless asked for more: 64 Mi (23 minutes of 48 kHz audio), so a small file whose
    /// header, or whose compression, claims hours cannot take the machine's memory.
    public static let defaultFrameLimit = 1 << 26

    /// Reads the regular file at `path`, at most `frameLimit` frames. Anything else is refused before
    /// libsndfile opens it: its open blocks forever on a FIFO nobody writes to (a rig's wavetable hung `aulos
    /// render`, deaf to SIGTERM), and it calls a directory "Format not recognised".
    public init(path: String, frameLimit: Int = AudioFileContents.defaultFrameLimit) throws(AudioFileError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw AudioFileError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let kind: String? =
            switch status.st_mode & S_IFMT {
            case S_IFREG: nil
            case S_IFDIR: "a directory"
            case S_IFIFO: "a named pipe (FIFO)"
            case S_IFCHR, S_IFBLK: "a device"
            case S_IFSOCK: "a socket"
            default: "not a regular file"
            }
        if let kind { throw AudioFileError("\(path) is \(kind), not an audio file") }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError("cannot read \(path): \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
        // A FLAC whose writer was killed has no length in its header (libsndfile says SF_COUNT_MAX): read
        // to its end.
        let known = info.frames < Int64(Int32.max)
        if known && info.frames > frameLimit {
            throw AudioFileError("\(path) holds \(info.frames) frames, more than the \(frameLimit) read here")
        }
        var samples = [Float](repeating: 0, count: known ? Int(info.frames) * Int(info.channels) : 0)
        var read =
            known ? samples.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) } : 0
        if !known {
            var block = [Float](repeating: 0, count: 4096 * Int(info.channels))
            while case let got = block.withUnsafeMutableBufferPointer({ sf_readf_float(file, $0.baseAddress, 4096) }),
                got > 0
            {
                samples += block[..<(Int(got) * Int(info.channels))]
                read += got
                if read > frameLimit {
                    throw AudioFileError("\(path) holds more than the \(frameLimit) frames read here")
                }
            }
        }
        guard !known || read == info.frames else { throw AudioFileError("\(path) is truncated") }
        sampleRate = Double(info.samplerate)
        channels = Int(info.channels)
        self.samples = samples
        majorFormat = info.format & Int32(SF_FORMAT_TYPEMASK)
        subtype = info.format & Int32(SF_FORMAT_SUBMASK)
    }
}

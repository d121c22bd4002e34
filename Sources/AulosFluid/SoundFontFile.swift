import AulosCore

#if canImport(Glibc)
import Glibc
#endif

/// A SoundFont 2 file looked at before FluidSynth loads it, so the ways a font is broken become one clear
/// line instead of FluidSynth's silence. FluidSynth loads a font whose sample headers all point outside
/// its sample data and renders exact zeros, exit 0; the `fluidsynth` command only warns. Reads the RIFF
/// chunk headers and the preset data (`pdta`, kilobytes to a few megabytes), never the samples, and every
/// length it reads is checked against the file.
///
/// Threads: control side (it reads the file).
public struct SoundFontFile: Sendable, Equatable {
    /// Sample headers in the font (the terminal "EOS" record not counted).
    public var sampleCount = 0
    /// Of those, the ones whose start, end and loop lie inside the sample data and whose data is in the
    /// file (not ROM): the ones that can sound.
    public var playableSampleCount = 0
    /// Presets in the font (the terminal "EOP" record not counted).
    public var presetCount = 0
    /// The presets by bank, program and name, as the file lists them (its terminal record left out).
    public var presets: [Preset] = []
    /// The presets by bank, then program, as a menu lists them (a font stores them in any order).
    public var presetsByNumber: [Preset] { presets.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) } }

    public struct Preset: Sendable, Equatable, Codable {
        public var bank: Int
        public var program: Int
        public var name: String
    }
    /// Problems that leave the font usable, each a line for the user.
    public var warnings: [String] = []
    /// Bytes of sample data: what FluidSynth holds in memory for the font (it loads every sample).
    public var sampleBytes: Int64 = 0

    /// The most a SoundFont may be: RIFF sizes are 32-bit.
    public static let sizeLimit: Int64 = 0xFFFF_FFFF
    /// The most preset data read (FluidR3_GM, 141 MB, has 600 kB of it).
    static let presetDataLimit = 64 << 20

    /// Looks at the file: an error when it cannot be a usable SoundFont (not a file, not RIFF `sfbk`, no
    /// sample data, no presets, no sample that can sound, more samples than `availableMemory` bytes),
    /// warnings when part of it is broken.
    public static func inspect(_ path: String, availableMemory: Int64? = systemAvailableMemory()) throws(AudioUnitError)
        -> SoundFontFile
    {
        func fail(_ what: String) -> AudioUnitError { AudioUnitError(.invalidFile, "SoundFont \(path): \(what)") }
        // Without blocking: an open of a FIFO nobody writes to would wait forever (and deaf to SIGTERM).
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw fail(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw fail(String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT != S_IFDIR else { throw fail("is a directory, not a SoundFont file") }
        guard info.st_mode & S_IFMT != S_IFIFO else { throw fail("is a named pipe (FIFO), not a SoundFont file") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw fail("is not a regular file") }
        let fileSize = Int64(info.st_size)
        guard fileSize <= sizeLimit + 8 else { throw fail("is larger than a SoundFont can be (4 GiB)") }

        func read(_ count: Int, at offset: Int64) -> [UInt8]? {
            guard count >= 0, offset >= 0, offset + Int64(count) <= fileSize else { return nil }
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes[done...].withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress, $0.count, off_t(offset) + off_t(done))
                }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return nil }
                done += got
            }
            return bytes
        }
        guard let header = read(12, at: 0), header[0..<4] == [0x52, 0x49, 0x46, 0x46],
            header[8..<12] == [0x73, 0x66, 0x62, 0x6B]
        else {
            throw AudioUnitError(.invalidFile, "\(path) is not a SoundFont (no RIFF 'sfbk' header)")
        }
        var file = SoundFontFile()
        let declared = Int64(littleEndian32(header, 4)) + 8
        if declared > fileSize {
            file.warnings.append(
                "SoundFont \(path) is truncated: its header promises \(declared) bytes, the file has \(fileSize); "
                    + "sounds at its end may be missing")
        }
        let end = min(declared, fileSize)
        // The top level: LIST chunks INFO, sdta (smpl: the samples) and pdta (presets, instruments, samples).
        var sampleWords: Int64?
        var presetData: [UInt8]?
        var offset: Int64 = 12
        while offset + 12 <= end, let chunk = read(12, at: offset) {
            let size = Int64(littleEndian32(chunk, 4))
            let body = offset + 8
            if chunk[0..<4] == [0x4C, 0x49, 0x53, 0x54] {  // LIST
                let kind = String(decoding: chunk[8..<12], as: UTF8.self)
                if kind == "sdta" {
                    var inner = body + 4
                    while inner + 8 <= min(body + size, end), let sub = read(8, at: inner) {
                        let subSize = Int64(littleEndian32(sub, 4))
                        if sub[0..<4] == [0x73, 0x6D, 0x70, 0x6C] {  // smpl
                            sampleWords = min(subSize, end - inner - 8) / 2
                        }
                        file.sampleBytes += min(subSize, max(0, end - inner - 8))  // smpl and sm24
                        inner += 8 + subSize + (subSize & 1)
                    }
                } else if kind == "pdta" {
                    guard size - 4 <= presetDataLimit else { throw fail("its preset data is implausibly large") }
                    presetData = read(Int(min(size - 4, end - body - 4)), at: body + 4)
                }
            }
            offset = body + size + (size & 1)
        }
        guard let sampleWords, sampleWords > 0 else { throw fail("has no sample data (no 'smpl' chunk)") }
        guard let presetData else { throw fail("has no preset data (no 'pdta' list)") }
        // pdta's sub-chunks: phdr (38-byte preset headers) and shdr (46-byte sample headers) matter here.
        var position = 0
        var sawSamples = false
        while position + 8 <= presetData.count {
            let size = Int(littleEndian32(presetData, position + 4))
            let id = String(decoding: presetData[position..<(position + 4)], as: UTF8.self)
            let body = position + 8
            let available = max(0, min(size, presetData.count - body))
            if id == "phdr" {
                file.presetCount = max(0, available / 38 - 1)
                // Each 38-byte header: a 20-byte name (NUL-padded), then program and bank as 16-bit words.
                file.presets = (0..<file.presetCount).map { index in
                    let record = body + index * 38
                    let name = presetData[record..<(record + 20)].prefix { $0 != 0 }
                    return Preset(
                        bank: Int(presetData[record + 22]) | Int(presetData[record + 23]) << 8,
                        program: Int(presetData[record + 20]) | Int(presetData[record + 21]) << 8,
                        name: String(decoding: name, as: UTF8.self))
                }
            }
            if id == "shdr" {
                sawSamples = true
                let records = available / 46
                for index in 0..<max(0, records - 1) {
                    let record = body + index * 46
                    let start = Int64(littleEndian32(presetData, record + 20))
                    let stop = Int64(littleEndian32(presetData, record + 24))
                    let type = UInt16(presetData[record + 44]) | UInt16(presetData[record + 45]) << 8
                    file.sampleCount += 1
                    if start < stop && stop <= sampleWords && type & 0x8000 == 0 { file.playableSampleCount += 1 }
                }
            }
            position = body + size + (size & 1)
        }
        guard file.presetCount > 0 else { throw fail("has no presets") }
        guard sawSamples, file.sampleCount > 0 else { throw fail("has no sample headers") }
        guard file.playableSampleCount > 0 else {
            throw fail(
                "no sample can sound: all \(file.sampleCount) sample headers point outside its \(sampleWords) "
                    + "sample frames (a corrupt or truncated font)")
        }
        // FluidSynth reads every sample into memory (streaming them would do file I/O on the render
        // thread): a font bigger than the memory there is would end with the process killed.
        if let available = availableMemory, file.sampleBytes > available {
            throw fail(
                "its samples need \(file.sampleBytes.bytesText) of memory and this machine has "
                    + "\(available.bytesText) available; use a smaller font")
        }
        let broken = file.sampleCount - file.playableSampleCount
        if broken > 0 {
            file.warnings.append(
                "SoundFont \(path): \(broken) of \(file.sampleCount) samples point outside its sample data; notes "
                    + "that use them will be silent")
        }
        return file
    }

    private static func littleEndian32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        guard at + 4 <= bytes.count else { return 0 }
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16
            | UInt32(bytes[at + 3]) << 24
    }
}

/// MemAvailable from /proc/meminfo, in bytes (nil where there is none).
public func systemAvailableMemory() -> Int64? {
    guard let bytes = try? FileContents.read("/proc/meminfo", limit: 1 << 16) else { return nil }
    let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("MemAvailable:") }
    guard let kilobytes = line?.split(separator: " ").dropFirst().first.flatMap({ Int64($0) }) else { return nil }
    return kilobytes * 1024
}

#if canImport(Glibc)
import Glibc
#endif

/// Makes a WAV file's header describe the audio actually in it: the sizes of a file whose writer was killed
/// (SIGKILL, the OOM killer, a power cut) or ran out of disk say less, or more, than the bytes that are
/// there. The data chunk is taken to run to the end of the file — true of every WAV `AudioFileWriter`
/// writes, which puts nothing after its audio — rounded down to whole frames; the RIFF size, the data size
/// and a `fact` chunk's frame count are rewritten to match, and a last partial frame is cut off (it is not
/// audio: a frame's samples are written together). Only for files Aulos wrote: a WAV with chunks after its
/// audio would have them taken for audio.
///
/// Threads: any (plain file I/O, not real-time).
public enum WAVHeaderRepair {
    /// Where a WAV's sizes are, as read from its first 64 KiB.
    struct Layout {
        var length: Int64
        var blockAlign: Int
        var factOffset: Int?
        var dataOffset: Int
        /// What the data chunk's header says it holds, in bytes.
        var describedBytes: Int64
        /// Whole frames from the data chunk's start to the end of the file, as many as a plain WAV's
        /// 32-bit sizes can describe.
        var presentFrames: Int64 {
            let room = (Int64(UInt32.max) - Int64(dataOffset - 8)) / Int64(blockAlign)
            return min(max(0, length - Int64(dataOffset)) / Int64(blockAlign), room)
        }
    }

    /// The frames in `path`'s data chunk after the repair; nil when it is not a WAV this can repair (not
    /// RIFF/WAVE, no `fmt ` or `data` chunk in its first 64 KiB).
    @discardableResult
    public static func repair(_ path: String) throws(AudioFileError) -> Int64? {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw AudioFileError("cannot repair \(path): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        guard let layout = layout(descriptor) else { return nil }
        let frames = layout.presentFrames
        let dataBytes = frames * Int64(layout.blockAlign)
        try put(UInt32(dataBytes), at: layout.dataOffset - 4, descriptor, path)
        try put(UInt32(Int64(layout.dataOffset - 8) + dataBytes), at: 4, descriptor, path)
        if let fact = layout.factOffset { try put(UInt32(truncatingIfNeeded: frames), at: fact, descriptor, path) }
        if layout.length > Int64(layout.dataOffset) + dataBytes {
            ftruncate(descriptor, off_t(Int64(layout.dataOffset) + dataBytes))
        }
        return frames
    }

    /// The frames a WAV's header says its data chunk holds, and the whole frames its bytes hold; nil when it
    /// is not a WAV `repair` reads.
    public static func sizes(of path: String) -> (described: Int64, present: Int64)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        return layout(descriptor).map { ($0.describedBytes / Int64($0.blockAlign), $0.presentFrames) }
    }

    static func layout(_ descriptor: Int32) -> Layout? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        var head = [UInt8](repeating: 0, count: Int(min(Int64(info.st_size), 65_536)))
        let read = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard read == head.count, head.count >= 12, tag(head, 0) == "RIFF", tag(head, 8) == "WAVE" else {
            return nil
        }
        var position = 12
        var blockAlign = 0
        var factOffset: Int?
        while position + 8 <= head.count {
            let size = Int(word(head, position + 4))
            switch tag(head, position) {
            case "fmt " where position + 8 + 14 <= head.count:
                blockAlign = Int(head[position + 8 + 12]) | Int(head[position + 8 + 13]) << 8
            case "fact" where size >= 4: factOffset = position + 8
            case "data" where blockAlign > 0:
                return Layout(
                    length: Int64(info.st_size), blockAlign: blockAlign, factOffset: factOffset,
                    dataOffset: position + 8, describedBytes: Int64(size))
            default: break
            }
            position += 8 + size + (size & 1)
        }
        return nil
    }

    private static func tag(_ bytes: [UInt8], _ at: Int) -> String {
        String(decoding: bytes[at..<(at + 4)], as: UTF8.self)
    }

    private static func word(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) }
    }

    private static func put(_ value: UInt32, at offset: Int, _ descriptor: Int32, _ path: String)
        throws(AudioFileError)
    {
        var little = value.littleEndian
        guard pwrite(descriptor, &little, 4, off_t(offset)) == 4 else {
            throw AudioFileError("cannot repair \(path): \(String(cString: strerror(errno)))")
        }
    }
}

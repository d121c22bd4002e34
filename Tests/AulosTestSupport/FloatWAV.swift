#if canImport(Glibc)
import Glibc
#endif

/// Reads a 32-bit float WAV file (what `aulos render --format float` and `fluidsynth -O float` write), for
/// tests that compare renders: the samples per channel. Nil for anything else.
public enum FloatWAV {
    public static func read(_ path: String) -> [[Float]]? {
        let bytes = TestFiles.bytes(path)
        guard bytes.count > 12, Array(bytes[0..<4]) == Array("RIFF".utf8), Array(bytes[8..<12]) == Array("WAVE".utf8)
        else { return nil }
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        var offset = 12
        var channels = 0
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                let format = u16(body)
                guard format == 3 || format == 0xFFFE, u16(body + 14) == 32 else { return nil }
                channels = u16(body + 2)
            } else if id == "data" {
                guard channels > 0 else { return nil }
                let frames = min(size, bytes.count - body) / (4 * channels)
                var result = [[Float]](repeating: [], count: channels)
                for channel in 0..<channels { result[channel].reserveCapacity(frames) }
                for frame in 0..<frames {
                    for channel in 0..<channels {
                        result[channel].append(Float(bitPattern: UInt32(u32(body + 4 * (frame * channels + channel)))))
                    }
                }
                return result
            }
            offset = body + size + (size & 1)
        }
        return nil
    }
}

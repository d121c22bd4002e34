/// SHA-1 (FIPS 180-4), for one purpose only: the WebSocket handshake's `Sec-WebSocket-Accept` (RFC 6455
/// §4.2.2), which is defined with it. Not for anything that needs a secure hash (SHA-1 is broken for that);
/// passwords go through crypt(3) (`WebAccess`).
///
/// Threads: any (a pure function).
enum SHA1 {
    /// The 20-byte digest of `message`.
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
        )
        // The message, a 1 bit, zeros to 56 mod 64 bytes, and the length in bits (big-endian).
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
        var words = [UInt32](repeating: 0, count: 80)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for t in 0..<16 {
                let at = block + t * 4
                words[t] =
                    UInt32(padded[at]) << 24 | UInt32(padded[at + 1]) << 16 | UInt32(padded[at + 2]) << 8
                    | UInt32(padded[at + 3])
            }
            for t in 16..<80 { words[t] = rotate(words[t - 3] ^ words[t - 8] ^ words[t - 14] ^ words[t - 16], 1) }
            var (a, b, c, d, e) = state
            for t in 0..<80 {
                let (f, k): (UInt32, UInt32) =
                    switch t {
                    case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                    case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                    case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                    default: (b ^ c ^ d, 0xCA62_C1D6)
                    }
                let temporary = rotate(a, 5) &+ f &+ e &+ k &+ words[t]
                (e, d, c, b, a) = (d, c, rotate(b, 30), a, temporary)
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
        }
        var digest: [UInt8] = []
        for word in [state.0, state.1, state.2, state.3, state.4] {
            for shift in stride(from: 24, through: 0, by: -8) {
                digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
            }
        }
        return digest
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value << count | value >> (32 - count)
    }
}

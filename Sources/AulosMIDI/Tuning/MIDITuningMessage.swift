/// The MIDI Tuning Standard's messages (MIDI 1.0 Detailed Specification, "MIDI Tuning"): single-note
/// tuning changes (real-time, and real-time or non-real-time with a bank) and the bulk tuning dump of all
/// 128 keys, each key's pitch as a semitone and a 14-bit fraction of one (7F 7F 7F: leave the key as it
/// is).
///
/// Inside Aulos a key change travels with the rest of the MIDI to an instrument as two internal events at
/// the message's frame — 0xF4 (key, semitone) then 0xF5 (fraction MSB, LSB) — so it lands sample-accurately
/// and the render thread applies it without a lock. These statuses are undefined in MIDI and never reach
/// a plugin or a device.
///
/// Threads: values and pure functions.
public enum MIDITuningMessage {
    /// One key's new pitch, in MIDI note units (semitone + fraction).
    public struct KeyChange: Equatable, Sendable {
        public var key: UInt8
        public var semitone: UInt8
        /// Sixteen-thousand-three-hundred-eighty-fourths of a semitone.
        public var fraction: UInt16
        public var pitch: Double { Double(semitone) + Double(fraction) / 16_384 }

        public init(key: UInt8, semitone: UInt8, fraction: UInt16) {
            (self.key, self.semitone, self.fraction) = (key, semitone, fraction)
        }
    }

    /// The key changes in `data` (the bytes between F0 and F7), or nil if it is not a tuning message
    /// Aulos plays (or is malformed).
    public static func keyChanges(_ data: [UInt8]) -> [KeyChange]? {
        guard data.count >= 5, data[2] == 0x08, data.allSatisfy({ $0 < 0x80 }) else { return nil }
        switch (data[0], data[3]) {
        case (0x7F, 0x02):  // real-time single-note change: program, count, then the keys
            return singleNotes(data, countAt: 5)
        case (0x7F, 0x07), (0x7E, 0x07):  // single-note change with a bank: bank, program, count, keys
            return singleNotes(data, countAt: 6)
        case (0x7E, 0x01):  // bulk dump: program, a 16-character name, 128 × 3 bytes, checksum
            guard data.count == 5 + 16 + 128 * 3 + 1 else { return nil }
            return (0..<128).compactMap { key in
                change(key: UInt8(key), data, at: 5 + 16 + key * 3)
            }
        default:
            return nil
        }
    }

    private static func singleNotes(_ data: [UInt8], countAt index: Int) -> [KeyChange]? {
        guard data.count > index else { return nil }
        let count = Int(data[index])
        guard data.count >= index + 1 + 4 * count else { return nil }
        return (0..<count).compactMap { entry in
            let at = index + 1 + 4 * entry
            return change(key: data[at], data, at: at + 1)
        }
    }

    /// The pitch at `at` (semitone, MSB, LSB) for `key`, or nil for 7F 7F 7F (no change).
    private static func change(key: UInt8, _ data: [UInt8], at: Int) -> KeyChange? {
        let (semitone, msb, lsb) = (data[at], data[at + 1], data[at + 2])
        if semitone == 0x7F && msb == 0x7F && lsb == 0x7F { return nil }
        return KeyChange(key: key, semitone: semitone, fraction: UInt16(msb) << 7 | UInt16(lsb))
    }

    /// The internal events that carry `change` to an instrument's render side.
    public static func events(for change: KeyChange) -> [ChannelMessage] {
        [
            ChannelMessage(status: keyStatus, data1: change.key, data2: change.semitone),
            ChannelMessage(
                status: fractionStatus, data1: UInt8(change.fraction >> 7), data2: UInt8(change.fraction & 0x7F)),
        ]
    }

    /// The internal statuses: a key and its semitone, then the fraction that completes the change.
    @inlinable public static var keyStatus: UInt8 { 0xF4 }
    @inlinable public static var fractionStatus: UInt8 { 0xF5 }
}

/// Keys written in an SFZ file: a MIDI number (0…127) or a note name — a letter `a`–`g` (either case), an
/// optional `#` or `b`, and an octave from -1 to 9, with middle C = `c4` = 60 (the convention of the SFZ
/// format and every player of it; `c-1` is 0, `g9` is 127).
///
/// Threads: pure functions.
public enum SFZNote {
    /// The key `text` names, or nil when it is neither a number nor a note name. Numbers outside 0…127 are
    /// returned as they are (the caller clamps; `hikey=-1` has a meaning of its own).
    public static func parse(_ text: String) -> Int? {
        if let number = Int(text) { return number }
        // 60.0 from a generator that writes floats.
        if let number = Double(text), number == number.rounded(), abs(number) < 1000 { return Int(number) }
        var bytes = Array(text.utf8)
        guard bytes.count >= 2 else { return nil }
        let offsets: [UInt8: Int] = [
            UInt8(ascii: "c"): 0, UInt8(ascii: "d"): 2, UInt8(ascii: "e"): 4, UInt8(ascii: "f"): 5,
            UInt8(ascii: "g"): 7, UInt8(ascii: "a"): 9, UInt8(ascii: "b"): 11,
        ]
        guard let letter = offsets[bytes[0] | 0x20] else { return nil }
        bytes.removeFirst()
        var semitone = letter
        if bytes.first == UInt8(ascii: "#") {
            semitone += 1
            bytes.removeFirst()
        } else if bytes.first == UInt8(ascii: "b"), bytes.count >= 2 {
            semitone -= 1
            bytes.removeFirst()
        }
        guard let octave = Int(String(decoding: bytes, as: UTF8.self)), (-1...9).contains(octave) else { return nil }
        return (octave + 1) * 12 + semitone
    }

    /// A key's name as players show it (`c4`, `c#4`), with its number: "c4 (60)".
    public static func name(_ key: Int) -> String {
        let names = ["c", "c#", "d", "d#", "e", "f", "f#", "g", "g#", "a", "a#", "b"]
        guard (0...127).contains(key) else { return "\(key)" }
        return "\(names[key % 12])\(key / 12 - 1)"
    }
}

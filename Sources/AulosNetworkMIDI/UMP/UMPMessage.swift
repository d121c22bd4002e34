/// How the Universal MIDI Packet is cut into messages: a message's length follows from its type (the top four
/// bits of its first word), so a run of words splits without any other framing.
///
/// Layout source: "Universal MIDI Packet (UMP) Format and MIDI 2.0 Protocol" (M2-104-UM) §2.1, the message type
/// table (as remembered; no copy of the specification is on this machine): types 0x0–0x2 and 0x6–0x7 are one word,
/// 0x3–0x4 and 0x8–0xA two, 0xB–0xC three, 0x5 and 0xD–0xF four. Zephyr's `UMP_NUM_WORDS` and ALSA's
/// `snd_ump_packet_length` agree (read through the code search).
///
/// Threads: a value.
public enum UMPMessage {
    /// The message types Aulos reads (M2-104-UM §2.1).
    public enum MessageType {
        public static let utility: UInt8 = 0x0
        public static let system: UInt8 = 0x1
        public static let midi1ChannelVoice: UInt8 = 0x2
        public static let data64: UInt8 = 0x3
        public static let midi2ChannelVoice: UInt8 = 0x4
        public static let data128: UInt8 = 0x5
        public static let flexData: UInt8 = 0xD
        public static let stream: UInt8 = 0xF
    }

    /// The message type of a message whose first word is `word`.
    public static func type(_ word: UInt32) -> UInt8 { UInt8(word >> 28) }

    /// How many words a message whose first word is `word` has.
    public static func wordCount(_ word: UInt32) -> Int {
        switch type(word) {
        case 0x0, 0x1, 0x2, 0x6, 0x7: 1
        case 0x3, 0x4, 0x8, 0x9, 0xA: 2
        case 0xB, 0xC: 3
        default: 4
        }
    }

    /// `words` cut into whole messages; nil when the last message is cut off (the words end inside it).
    public static func split(_ words: ArraySlice<UInt32>) -> [ArraySlice<UInt32>]? {
        let messages = wholeMessages(words)
        return messages.reduce(0) { $0 + $1.count } == words.count ? messages : nil
    }

    /// The whole messages at the start of `words`; a last one cut off is left out.
    public static func wholeMessages(_ words: ArraySlice<UInt32>) -> [ArraySlice<UInt32>] {
        var messages: [ArraySlice<UInt32>] = []
        var index = words.startIndex
        while index < words.endIndex {
            let count = wordCount(words[index])
            guard index + count <= words.endIndex else { break }
            messages.append(words[index..<index + count])
            index += count
        }
        return messages
    }
}

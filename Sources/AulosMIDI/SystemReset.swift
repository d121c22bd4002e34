/// The system-exclusive messages that reset a General MIDI instrument: GM1 and GM2 System On
/// (`7E dd 09 01|03`), Roland GS Reset (`41 dd 42 12 40 00 7F 00 41`) and Yamaha XG System On
/// (`43 1n 4C 00 00 7E 00`), given as the bytes between F0 and F7. Aulos applies one as Reset All Controllers
/// (and All Sound Off) on every channel of every instrument: CC 91/93 back to 40 and 0, bend, modulation,
/// expression and pedals back to their defaults.
///
/// Threads: a pure function.
public enum SystemReset {
    public static func isReset(_ data: [UInt8]) -> Bool {
        if data.count >= 4, data[0] == 0x7E, data[2] == 0x09, data[3] == 0x01 || data[3] == 0x03 { return true }
        if data.count >= 9, data[0] == 0x41, Array(data[2...8]) == [0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41] {
            return true
        }
        if data.count >= 7, data[0] == 0x43, data[1] & 0xF0 == 0x10,
            Array(data[2...6]) == [0x4C, 0x00, 0x00, 0x7E, 0x00]
        {
            return true
        }
        return false
    }

    /// The channel messages a reset stands for on one instrument: All Sound Off and Reset All Controllers on
    /// each of the 16 channels.
    public static let channelMessages: [ChannelMessage] = (UInt8(0)..<16).flatMap { channel in
        [
            ChannelMessage(status: 0xB0 | channel, data1: 120, data2: 0),
            ChannelMessage(status: 0xB0 | channel, data1: 121, data2: 0),
        ]
    }
}

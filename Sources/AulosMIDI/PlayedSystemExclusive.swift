/// The system-exclusive messages Aulos plays, as the channel events parts' instruments receive at the
/// message's frame — one reading shared by files and keyboards:
/// - a GM/GS/XG reset: Reset All Controllers and All Sound Off on every channel (`SystemReset`);
/// - a MIDI Tuning Standard message: its key changes as internal events (`MIDITuningMessage`), which the
///   synth applies and the other instruments ignore.
///
/// Threads: a value.
public enum PlayedSystemExclusive: Equatable, Sendable {
    case reset([ChannelMessage])
    case tuning([ChannelMessage])

    /// What `data` (the bytes between F0 and F7) plays as, or nil for a message Aulos does not play.
    public init?(_ data: [UInt8]) {
        if SystemReset.isReset(data) {
            self = .reset(SystemReset.channelMessages)
        } else if let changes = MIDITuningMessage.keyChanges(data) {
            self = .tuning(changes.flatMap(MIDITuningMessage.events))
        } else {
            return nil
        }
    }

    public var messages: [ChannelMessage] {
        switch self {
        case .reset(let messages), .tuning(let messages): messages
        }
    }
}

/// The latest time an input may place an event. The MIDI file reader refuses an event later than this; the
/// score reader refuses a time written past it in its own unit (seconds, beats at the fastest tempo,
/// frames at 768 kHz). So every conversion of an input's time to a sample time stays far inside Int64 and
/// can never trap, whatever the file says (a 37-byte MIDI file can claim a note-off centuries away).
///
/// A week is deliberately above the longest play or render a user can ask for (`--max-duration`); the
/// player's own limit, checked before anything is rendered, is what a user meets in practice.
///
/// Threads: constants.
public enum InputTimeLimit {
    /// A week, in seconds: 4.6 · 10¹¹ frames at 768 kHz, seven orders of magnitude inside Int64.
    public static let seconds: Double = 604_800

    /// "a week", for messages.
    public static let description = "a week (168 hours)"
}

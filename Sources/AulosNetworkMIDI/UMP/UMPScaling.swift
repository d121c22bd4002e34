/// How a MIDI 2.0 message's wider values become the 7- and 14-bit bytes of its MIDI 1.0 form: what FluidSynth, LV2
/// and SFZ play. The whole value travels beside those bytes (`MIDIResolution`), and the synth plays that instead
/// (on the scale `MIDI2Scale` gives, the inverse of the way up below).
///
/// Source: M2-104-UM's translation appendix (MIDI 1.0 ↔ MIDI 2.0), as remembered: going down is a plain right
/// shift (truncation), going up is the "min-center-max" scheme that keeps 0, the center and the maximum exact.
/// Only the way down is needed here (Aulos receives). What the MIDI 1.0 form loses: a 16-bit velocity keeps its top
/// 7 bits (512 steps of 65,536 per step), a 32-bit controller or pressure its top 7 (2^25 per step), a 32-bit pitch
/// bend its top 14 (2^18 per step, 0x8000_0000 the center becomes 8192 exactly).
///
/// Threads: functions of values.
public enum UMPScaling {
    /// A 16-bit value to 7 bits: the top 7.
    public static func sevenBits(_ value: UInt16) -> UInt8 { UInt8(value >> 9) }

    /// A 32-bit value to 7 bits: the top 7.
    public static func sevenBits(_ value: UInt32) -> UInt8 { UInt8(value >> 25) }

    /// A 32-bit value to 14 bits (pitch bend, RPN data): the top 14.
    public static func fourteenBits(_ value: UInt32) -> UInt16 { UInt16(value >> 18) }

    /// A MIDI 2.0 note-on's 16-bit velocity as MIDI 1.0's: the top 7 bits, but never 0 — MIDI 2.0's velocity 0 is a
    /// note that sounds (quietly), while MIDI 1.0's is a note-off, so it becomes 1 (as the translation rules say).
    public static func noteOnVelocity(_ value: UInt16) -> UInt8 { max(1, sevenBits(value)) }
}

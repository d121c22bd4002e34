import AulosIO
import AulosRig
import AulosUnits

/// What a live run reports on every control tick (for the CLI's status line) and at the end.
///
/// Threads: a value, made on the control thread.
public struct LiveStatus: Sendable {
    public var seconds: Double
    public var voices: Int
    public var statistics: IOStatistics
    public var grant: PCMGrant
    /// Live MIDI events that arrived after their frame (keyboard play only).
    public var midiLate = 0
    /// Voices ended early under overload.
    public var voicesShed = 0
    /// What the output stage (gain and limiter) has done since the rig started, whether it limits, and its
    /// latency in frames (part of what a listener waits for, beside the device buffer).
    public var outputStage: PeakLimiterUnit.Activity?
    public var limiting = true
    public var outputStageLatency = 0
    /// The recording (`--record`), once finished: its file, the frames in it, the frames dropped while the
    /// disk fell behind, and what went wrong if the disk failed.
    public var recording: RecordingOutcome?
    /// Why the recording (the last one started) stopped writing before it was stopped — a full disk — and
    /// what it kept; nil while it writes, and from the next `record start`.
    public var recordingFailure: String?
    /// The SFZ parts' streaming counters (late voices, bytes streamed); nil when the rig has no SFZ part.
    public var sfzStreaming: SFZStreamingSummary?
}

/// What the caller of a live run wants to hear about as it goes — status, warnings, information, the
/// sequencer's connection notices, the device's events. Every closure is called on the control thread.
public struct PlaybackObserver {
    public var status: (LiveStatus) -> Void = { _ in }
    public var warning: (String) -> Void = { _ in }
    public var info: (String) -> Void = { _ in }
    public var sequencerNotice: (MIDIInputNotice) -> Void = { _ in }
    public var deviceEvent: (IOEvent) -> Void = { _ in }

    public init() {}
}

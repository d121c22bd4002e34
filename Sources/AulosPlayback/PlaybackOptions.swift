import AulosMIDI
import AulosRig

/// What to play and with what — the input, the instrument or rig, the sound, the tempo — shared by file
/// render (`aulos render`) and live play (`aulos play`).
///
/// Threads: a value, built on the control thread.
public struct PlaybackOptions: Sendable {
    /// A Standard MIDI File or a score; nil plays the built-in demo piece (file render and `play --demo`)
    /// or nothing (keyboard play).
    public var input: String?
    /// How a MIDI input file is read: forgivingly (as players do, with warnings) or strictly (`--strict`).
    public var midiReading = MIDIFileReading.forgiving
    public var instrument: InstrumentChoice = .synth
    /// The LV2 plugin's URI when `instrument` is `lv2`; the SFZ library's path when it is `sfz`.
    public var plugin: String?
    public var soundFont: String?
    /// A program sent to every channel (but 10) before the input's own events.
    public var program: Int?
    /// A synth preset by name or number.
    public var preset: String?
    /// The sample rate and slice asked for (`--sample-rate`, `--slice`): they win over a rig's own, for every
    /// rig of a set. Nil: the rig's own, or 48 kHz and 256 frames for one instrument.
    public var sampleRate: Double?
    public var slice: UInt32?
    /// Seconds played after the last event, for release tails and reverb: exactly this long, or — with
    /// `tailEndsBelow` — at most this long.
    public var tail = 1.5
    /// A level in dBFS (−90 for `aulos render` without `--tail`): an offline render's tail ends once the output
    /// has stayed below it for `PlaybackOptions.quietTail` seconds, as FluidSynth's ends when its voices do.
    public var tailEndsBelow: Float?
    public static let quietTail = 0.2
    /// The longest a file may play or render, in seconds, checked before anything starts: a day unless the
    /// user asks for more (`--max-duration`, at most `InputTimeLimit.seconds`). A wrong tick in a small
    /// file must not fill a disk with hours of silence.
    public var maximumDuration = PlaybackOptions.defaultMaximumDuration
    public static let defaultMaximumDuration = 86_400.0
    /// The most `maximumDuration` may be: no input places events later.
    public static let longestMaximumDuration = InputTimeLimit.seconds
    /// A whole rig instead of one instrument.
    public var rig: Rig?
    /// A rig set (rigs recalled by program change); wins over `rig`.
    public var rigSet: RigSet?
    /// Without reverb and chorus (`--dry`): every rig played dry, and no General MIDI returns for one
    /// instrument.
    public var dry = false
    /// A master iPod-style EQ preset (overrides the rig's).
    public var eq: String?
    /// The output stage's gain in dB (`--gain`; overrides the rig's `output.gain`).
    public var gain: Float?
    /// Whether the output stage limits (`--no-limiter` sets false; nil: the rig's `output.limiter`, on).
    public var limiter: Bool?
    /// A Scala scale and keyboard mapping for every synth and sampler part (over a rig's own).
    public var tuning: String?
    /// A WAV or FLAC file `aulos play` records its output into.
    public var record: String?
    /// Recordings (`record`, `record start`) also write each part's own output beside the master's.
    public var recordParts = false
    /// `--force`: `record` may replace files that exist (refused otherwise, before playing).
    public var recordReplacing = false
    /// MPE zones for the synth (without a rig).
    public var mpe: MPELayout?
    public var keymap: String?
    /// The transport's tempo (replaces the input's tempo map for tempo-synced units; the input's own
    /// event times are not changed).
    public var tempo: Double?
    /// Arpeggiate synth parts: mode and rate.
    public var arpeggio: Arpeggio?
    /// Live: end voices when the DSP load passes 80 % (the overload governor), so the device never runs
    /// dry. Off where every voice must sound whatever the load — comparing a live run with an offline
    /// render on a slow machine — at the risk of xruns.
    public var shedsVoicesUnderOverload = OverloadGovernor().enabled

    public init() {}

    /// The rig set to play: the given set (with `eq` as every rig's master EQ), the given rig, or one part
    /// playing every channel with General MIDI's reverb and chorus returns (the synth plays its drum kit on
    /// channel 10, the sampler its SoundFont's).
    public func playedRigSet() -> RigSet {
        if var set = rigSet ?? rig.map(RigSet.init) {
            for index in set.entries.indices {
                if let eq { set.entries[index].rig.eq = eq }
                if let gain { set.entries[index].rig.gain = gain }
                if let limiter { set.entries[index].rig.limiter = limiter }
                if let sampleRate { set.entries[index].rig.sampleRate = sampleRate }
                if let slice { set.entries[index].rig.slice = slice }
                if dry { set.entries[index].rig.dry = true }
                if let tuning {
                    set.entries[index].rig.tuning = tuning
                    set.entries[index].rig.keymap = keymap
                    for part in set.entries[index].rig.parts.indices {
                        (set.entries[index].rig.parts[part].tuning, set.entries[index].rig.parts[part].keymap) = (
                            nil, nil
                        )
                    }
                }
            }
            return set
        }
        var part = Rig.Part(name: instrument.rawValue, instrument: instrument, channels: Array(1...16))
        part.preset = preset
        part.program = program
        part.soundFont = soundFont
        if instrument == .sfz { part.library = plugin } else { part.plugin = plugin }
        if instrument != .lv2 { (part.tuning, part.keymap) = (tuning, keymap) }
        if instrument == .synth { part.mpe = mpe }
        var rig = Rig(name: "default", parts: [part])
        rig.sampleRate = sampleRate ?? rig.sampleRate
        rig.slice = slice ?? rig.slice
        rig.eq = eq
        rig.gain = gain ?? rig.gain
        rig.limiter = limiter ?? rig.limiter
        // Like FluidSynth: General MIDI's reverb and chorus, following each channel's CC 91 and 93.
        if dry { rig.dry = true } else { rig.returns = ReturnBus.generalMIDI }
        return RigSet(rig)
    }

    /// The transport's tempo map: `tempo` throughout, or the input's own.
    func tempoMap(of input: InputFile) -> [(beat: Double, bpm: Double)] {
        tempo.map { [(beat: 0, bpm: $0)] } ?? input.tempoMap
    }
}

// The typed model of an SFZ region: what it maps, what it plays and how it is shaped. Values follow the
// SFZ v1 specification's defaults and ranges (sfzformat.com), with the SFZ v2/ARIA extensions where v1 has
// none; out-of-range values are clamped to the range given beside each field, as players do, rather than
// refused. No audio code here: the voices read these values.

/// How a region is triggered.
public enum SFZTrigger: String, Sendable, CaseIterable {
    /// On note-on (v1 default).
    case attack
    /// On note-off, once the sustain pedal lets the note go (v1), attenuated by `rt_decay`.
    case release
    /// On note-on when no other note is held on the channel (v1).
    case first
    /// On note-on when another note is held on the channel (v1).
    case legato
    /// On note-off whatever the pedal does (v2/ARIA).
    case releaseKey = "release_key"
}

/// How a region's sample loops (v1 `loop_mode`).
public enum SFZRegionLoopMode: String, Sendable, CaseIterable {
    case noLoop = "no_loop"
    /// Plays to the end whatever the note-off does.
    case oneShot = "one_shot"
    case loopContinuous = "loop_continuous"
    /// Loops while the note is held, then plays on past the loop end.
    case loopSustain = "loop_sustain"
}

/// How a voice stops when another region chokes it (v1 `off_mode`; `time` is v2 with `off_time`).
public enum SFZOffMode: String, Sendable, CaseIterable {
    case fast, normal, time
}

/// The filter types of v1 and the common v2 ones (`fil_type`); which the voices implement is theirs to say.
public enum SFZRegionFilterType: String, Sendable, CaseIterable {
    case lpf1p = "lpf_1p"
    case hpf1p = "hpf_1p"
    case lpf2p = "lpf_2p"
    case hpf2p = "hpf_2p"
    case bpf2p = "bpf_2p"
    case brf2p = "brf_2p"
    case bpf1p = "bpf_1p"
    case brf1p = "brf_1p"
    case apf1p = "apf_1p"
    case lpf4p = "lpf_4p"
    case hpf4p = "hpf_4p"
    case lpf6p = "lpf_6p"
    case hpf6p = "hpf_6p"
    case pkf2p = "pkf_2p"
    case lsh, hsh, peq
    case lpf2pSV = "lpf_2p_sv"
    case hpf2pSV = "hpf_2p_sv"
    case bpf2pSV = "bpf_2p_sv"
    case brf2pSV = "brf_2p_sv"
}

/// A crossfade curve (`xf_keycurve`, `xf_velcurve`, `xf_cccurve`): `power` (v1 default) keeps the summed power
/// of two crossfading regions constant, `gain` keeps their summed amplitude constant.
public enum SFZCrossfadeCurve: String, Sendable, CaseIterable {
    case power, gain
}

/// A range of a MIDI controller's values (`locc7=64 hicc7=127`; crossfade ranges too).
///
/// Threads: a value.
public struct SFZCCRange: Sendable, Hashable {
    public var controller: Int
    public var low: Int
    public var high: Int

    public init(controller: Int, low: Int, high: Int) {
        self.controller = controller
        self.low = low
        self.high = high
    }
}

/// A controller modulating a value (`volume_oncc7=-6`), with the curve and smoothing it goes through.
///
/// Threads: a value.
public struct SFZCCModulation: Sendable, Hashable {
    public var controller: Int
    /// In the target's unit (dB, %, cents), reached at the controller's top value through the curve.
    public var depth: Float = 0
    /// A `<curve>`'s `curve_index` (0: linear 0…1, the default; see `SFZCurve`).
    public var curve: Int = 0
    /// v2 `*_smoothccN`, in ms.
    public var smooth: Float = 0
    /// v2 `*_stepccN`: the value moves in steps of this size (0: continuous).
    public var step: Float = 0

    public init(controller: Int, depth: Float = 0, curve: Int = 0, smooth: Float = 0, step: Float = 0) {
        self.controller = controller
        self.depth = depth
        self.curve = curve
        self.smooth = smooth
        self.step = step
    }
}

/// A stage of an envelope a controller or velocity modulates.
public enum SFZEnvelopeStage: String, Sendable, CaseIterable {
    case delay, start, attack, hold, decay, sustain, release, depth
}

/// A DAHDSR envelope (`ampeg_`, `fileg_`, `pitcheg_` in v1). Times in seconds (0…100), `start` and `sustain`
/// in % (0…100), `depth` in cents (-12000…12000; the amplitude envelope has none). The `vel2` fields add their
/// amount at full velocity (scaled by velocity/127), as v1 defines them.
///
/// Threads: a value.
public struct SFZRegionEnvelope: Sendable, Hashable {
    public var delay: Float = 0
    public var start: Float = 0
    public var attack: Float = 0
    public var hold: Float = 0
    public var decay: Float = 0
    public var sustain: Float = 100
    public var release: Float = 0
    public var depth: Float = 0
    public var velocityToDelay: Float = 0
    public var velocityToAttack: Float = 0
    public var velocityToHold: Float = 0
    public var velocityToDecay: Float = 0
    public var velocityToSustain: Float = 0
    public var velocityToRelease: Float = 0
    public var velocityToDepth: Float = 0
    /// Controllers adding to a stage (`ampeg_attackcc1` in v1, `ampeg_attack_oncc1` in v2): seconds, %, cents.
    public var controllers: [SFZEnvelopeControl] = []

    public init() {}
}

/// A controller adding `amount` (at its top value) to an envelope stage.
///
/// Threads: a value.
public struct SFZEnvelopeControl: Sendable, Hashable {
    public var stage: SFZEnvelopeStage
    public var controller: Int
    public var amount: Float

    public init(stage: SFZEnvelopeStage, controller: Int, amount: Float) {
        self.stage = stage
        self.controller = controller
        self.amount = amount
    }
}

/// An LFO (`amplfo_`, `fillfo_`, `pitchlfo_` in v1): delay and fade in seconds (0…100), frequency in Hz
/// (0…20), depth in dB for amplitude (-10…10) or cents for filter and pitch (-1200…1200); controllers add to
/// depth and frequency (`amplfo_depthcc1`, `amplfo_freqcc1`; v2 `_oncc` spellings read the same).
///
/// Threads: a value.
public struct SFZRegionLFO: Sendable, Hashable {
    public var delay: Float = 0
    public var fade: Float = 0
    public var frequency: Float = 0
    public var depth: Float = 0
    public var depthControllers: [SFZCCModulation] = []
    public var frequencyControllers: [SFZCCModulation] = []

    public init() {}
}

/// What a region plays: a file (its path as written, with `default_path`, and resolved inside the library's
/// root by `SFZLibrary`), or one of the built-in generators v2 names with a `*` (`*sine`, `*saw`, `*square`,
/// `*triangle`, `*noise`, `*silence`).
public enum SFZSample: Sendable, Hashable {
    case file(String)
    case generator(String)
    case none
}

/// One region with the effective value of every opcode the model knows: what it inherited from control,
/// global, master and group, overridden by its own. Defaults are SFZ v1's (v2's where v1 has no such opcode).
///
/// Threads: a value; built on the control thread, read anywhere.
public struct SFZRegion: Sendable, Hashable {
    /// Where its `<region>` header is.
    public var location: SFZLocation

    // MARK: Sample and playback

    public var sample: SFZSample = .none
    /// The sample's resolved path (inside the root), set by `SFZLibrary.load`; nil for generators.
    public var samplePath: String?
    /// The sample's index in `SFZLibrary.samples` (each file listed once), or -1.
    public var sampleIndex = -1
    /// Frames skipped at the start (0…2³²−1); `offset_random` adds up to that many more (v1).
    public var offset: Int = 0
    public var offsetRandom: Int = 0
    /// The last frame played; nil plays to the sample's end (v1; `end=-1` or `end=0` silences the region, as
    /// players do: `isSilenced`).
    public var end: Int?
    /// Times a `one_shot`/`no_loop` region plays (v1 `count`; 0: once).
    public var count: Int = 0
    /// nil: as the file says (its `smpl` loop makes it `loop_continuous`, else `no_loop`) — v1's rule.
    public var loopMode: SFZRegionLoopMode?
    /// Frames; nil: the file's loop points.
    public var loopStart: Int?
    public var loopEnd: Int?
    /// Seconds before the region starts sounding (v1 `delay`, 0…100), plus up to `delay_random`.
    public var delay: Float = 0
    public var delayRandom: Float = 0

    // MARK: Mapping

    /// Keys (0…127); `hikey=-1` leaves a region no key (v2: played only by other means). `key=` sets both and
    /// `pitch_keycenter`.
    public var lowKey = 0
    public var highKey = 127
    /// 0…127 (v1: lovel defaults to 0).
    public var lowVelocity = 0
    public var highVelocity = 127
    /// MIDI channels 1…16.
    public var lowChannel = 1
    public var highChannel = 16
    /// Controller ranges the channel's controllers must be in (`loccN`/`hiccN`, N 0…127; default 0…127).
    public var controllerRanges: [SFZCCRange] = []
    /// Pitch bend −8192…8192 (v1).
    public var lowBend = -8192
    public var highBend = 8192
    /// Program 0…127 (v1 `loprog`/`hiprog`): a rig's `program:` chooses among them.
    public var lowProgram = 0
    public var highProgram = 127
    /// The region plays when the note's random value r (0 ≤ r < 1) has lorand ≤ r < hirand (hirand = 1 takes 1).
    public var lowRandom: Float = 0
    public var highRandom: Float = 1
    /// Round robin: the region plays the `seqPosition`th (1…seqLength) of every `seqLength` notes that reach
    /// it (v1; 1…100).
    public var sequenceLength = 1
    public var sequencePosition = 1
    /// Keyswitches (v1): the range of keys that switch, the last switch key the region needs, the key that
    /// must be down (`sw_down`) or up (`sw_up`), the previous note (`sw_previous`), the switch in force
    /// before any is pressed (`sw_default`), and the switch's name (v2 `sw_label`).
    public var switchLowKey: Int?
    public var switchHighKey: Int?
    public var switchLast: Int?
    public var switchDown: Int?
    public var switchUp: Int?
    public var switchPrevious: Int?
    public var switchDefault: Int?
    public var switchLabel: String?
    public var trigger: SFZTrigger = .attack
    /// dB a release region loses per second the note was held (v1 `rt_decay`, 0…200).
    public var releaseDecay: Float = 0
    /// Exclusive groups (v1 `group`/`off_by`, any 32-bit number; 0 is none for off_by).
    public var group = 0
    public var offBy = 0
    public var offMode: SFZOffMode = .fast
    /// Seconds a voice takes to stop with `off_mode=time` (v2; `fast` stops in about 6 ms, as players do).
    public var offTime: Float = 0.006
    /// Voices of this region's `group` at once (v2 `polyphony`, 1…256); nil: no limit of its own.
    public var polyphony: Int?
    /// Voices of this region's group on one key at once (v2 `note_polyphony`, 1…256); nil: no limit.
    public var notePolyphony: Int?
    /// Whether the sustain and sostenuto pedals hold this region's voices (v2 `sustain_sw`, `sostenuto_sw`).
    public var sustainSwitch = true
    public var sostenutoSwitch = true

    // MARK: Pitch

    /// The key at which the sample plays at its recorded pitch (v1, default 60); `pitch_keycenter=sample`
    /// takes the file's root key (`keycenterFromSample`).
    public var keycenter = 60
    public var keycenterFromSample = false
    /// Cents per key (v1, −1200…1200, default 100).
    public var pitchKeytrack: Float = 100
    /// Cents (v1 −100…100; players accept more: −9600…9600 here).
    public var tune: Float = 0
    /// Semitones (v1, −127…127).
    public var transpose = 0
    /// Cents at full velocity (v1, −9600…9600).
    public var pitchVeltrack: Float = 0
    /// Cents of random detune, up to (v1 `pitch_random`, 0…9600).
    public var pitchRandom: Float = 0
    /// Cents at full bend up and down (v1, −9600…9600; defaults 200 and −200).
    public var bendUp: Float = 200
    public var bendDown: Float = -200

    // MARK: Amplitude

    /// dB (v1 −144…6; players accept up to +48 here).
    public var volume: Float = 0
    /// `global_volume`, `master_volume` and `group_volume` (ARIA), in dB, played on top of `volume`.
    public var globalVolume: Float = 0
    public var masterVolume: Float = 0
    public var groupVolume: Float = 0
    /// % (v2, 0…100).
    public var amplitude: Float = 100
    /// % (v1, −100…100).
    public var pan: Float = 0
    public var width: Float = 100
    public var position: Float = 0
    /// % of the velocity curve applied (v1, −100…100, default 100).
    public var ampVeltrack: Float = 100
    /// `amp_velcurve_N` points (velocity 0…127, gain 0…1), sorted by velocity; empty: the default curve.
    public var ampVelcurve: [SFZCurvePoint] = []
    /// dB per key from `ampKeycenter` (v1, −96…12).
    public var ampKeytrack: Float = 0
    public var ampKeycenter = 60
    /// dB of random attenuation, up to (v1 `amp_random`, 0…24).
    public var ampRandom: Float = 0

    // MARK: Envelopes, filter, LFOs

    public var amplitudeEnvelope = SFZRegionEnvelope()
    public var filterEnvelope = SFZRegionEnvelope()
    public var pitchEnvelope = SFZRegionEnvelope()
    public var filterType: SFZRegionFilterType = .lpf2p
    /// Hz (v1, 0…sample rate/2); nil: no filter.
    public var cutoff: Float?
    /// dB (v1, 0…40).
    public var resonance: Float = 0
    /// Cents per key from `filterKeycenter` (v1, 0…1200), cents at full velocity (v1, −9600…9600).
    public var filterKeytrack: Float = 0
    public var filterKeycenter = 60
    public var filterVeltrack: Float = 0
    /// Cents of random cutoff change, up to (v1 `fil_random`, 0…9600).
    public var filterRandom: Float = 0
    public var amplitudeLFO = SFZRegionLFO()
    public var filterLFO = SFZRegionLFO()
    public var pitchLFO = SFZRegionLFO()

    // MARK: Controller modulation

    /// dB (`volume_onccN`, v1 `gain_ccN`).
    public var volumeControllers: [SFZCCModulation] = []
    /// % (`amplitude_onccN`, v1 `amplitude_ccN`).
    public var amplitudeControllers: [SFZCCModulation] = []
    /// % (`pan_onccN`).
    public var panControllers: [SFZCCModulation] = []
    /// % (`width_onccN`, `position_onccN`).
    public var widthControllers: [SFZCCModulation] = []
    public var positionControllers: [SFZCCModulation] = []
    /// Cents (`cutoff_onccN`, v1 `cutoff_ccN`).
    public var cutoffControllers: [SFZCCModulation] = []
    /// dB (`resonance_onccN`).
    public var resonanceControllers: [SFZCCModulation] = []
    /// Cents (`pitch_onccN`; `tune_onccN` is the same opcode spelled as v2 players also read it).
    public var pitchControllers: [SFZCCModulation] = []

    // MARK: Crossfades (v1): gain rises over xfin and falls over xfout

    /// Keys and velocities (0…127); a range written backwards (lo > hi) is read as a step at lo.
    public var crossfadeInKeys = SFZSpan(low: 0, high: 0)
    public var crossfadeOutKeys = SFZSpan(low: 127, high: 127)
    public var crossfadeInVelocities = SFZSpan(low: 0, high: 0)
    public var crossfadeOutVelocities = SFZSpan(low: 127, high: 127)
    public var crossfadeInControllers: [SFZCCRange] = []
    public var crossfadeOutControllers: [SFZCCRange] = []
    public var crossfadeKeyCurve: SFZCrossfadeCurve = .power
    public var crossfadeVelocityCurve: SFZCrossfadeCurve = .power
    public var crossfadeControllerCurve: SFZCrossfadeCurve = .power

    public init(location: SFZLocation) { self.location = location }

    /// Whether `end` silences the region (`end=-1`, or `end=0`, which players treat the same).
    public var isSilenced: Bool { end.map { $0 <= 0 } ?? false }

    /// Whether the region is played by note-ons (attack, first, legato) rather than note-offs.
    public var isAttack: Bool { trigger == .attack || trigger == .first || trigger == .legato }
}

/// A pair of bounds as written (`xfin_lokey`/`xfin_hikey`): kept apart, since a file may set either first.
///
/// Threads: a value.
public struct SFZSpan: Sendable, Hashable {
    public var low: Int
    public var high: Int

    public init(low: Int, high: Int) {
        self.low = low
        self.high = high
    }
}

/// A point of a curve: an input 0…127 and the value there.
///
/// Threads: a value.
public struct SFZCurvePoint: Sendable, Hashable {
    public var input: Int
    public var value: Float

    public init(input: Int, value: Float) {
        self.input = input
        self.value = value
    }
}

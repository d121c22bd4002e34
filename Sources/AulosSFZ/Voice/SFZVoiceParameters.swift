/// How a voice loops its sample: SFZ's `loop_mode`.
///
/// Threads: a value.
public enum SFZLoopMode: UInt8, Sendable, BitwiseCopyable {
    /// Plays from `offset` to `end` once; a note-off releases the envelope.
    case noLoop
    /// Plays to the end whatever the note-off (drums): only a choke stops it early.
    case oneShot
    /// Loops from `loopStart` to `loopEnd` for as long as the voice sounds, release included.
    case loopContinuous
    /// Loops until the note-off, then plays on past the loop's end to the sample's end.
    case loopSustain
}

/// SFZ's `fil_type`, the ones the voice has.
///
/// Threads: a value.
public enum SFZFilterType: UInt8, Sendable, BitwiseCopyable {
    case none
    /// One-pole low- and high-pass (6 dB/octave; no resonance).
    case lowPass1Pole, highPass1Pole
    /// Two-pole state-variable low-, high- and band-pass (12 dB/octave; resonance in dB).
    case lowPass2Pole, highPass2Pole, bandPass2Pole
    /// One-pole band-pass: the one-pole low-pass then the one-pole high-pass at the same cutoff (6 dB/octave
    /// each side, −6 dB at the cutoff; no resonance).
    case bandPass1Pole
}

/// An envelope's times (seconds) and levels (0…1), SFZ's DAHDSR: from `start`, wait `delay`, rise linearly
/// to 1 over `attack`, stay there for `hold`, fall to `sustain` over `decay`, and after the note-off fall to 0
/// over `release`. Decay and release are exponential curves that land on their targets exactly at their
/// times (see `SFZEnvelope`).
///
/// Threads: a value.
public struct SFZEnvelopeTimes: Sendable, BitwiseCopyable, Equatable {
    public var delay: Double = 0
    public var start: Float = 0
    public var attack: Double = 0
    public var hold: Double = 0
    public var decay: Double = 0
    public var sustain: Float = 1
    public var release: Double = 0
    @_noAllocation @_noLocks
    public init(
        delay: Double = 0, start: Float = 0, attack: Double = 0, hold: Double = 0, decay: Double = 0,
        sustain: Float = 1, release: Double = 0
    ) {
        (self.delay, self.start, self.attack, self.hold) = (delay, start, attack, hold)
        (self.decay, self.sustain, self.release) = (decay, sustain, release)
    }
}

/// A sine LFO: `frequency` in Hz, `depth` (dB for the amplitude LFO, cents for the filter and pitch LFOs),
/// silent for `delay` seconds after the voice starts, then its depth rising linearly over `fade` seconds.
///
/// Threads: a value.
public struct SFZLFO: Sendable, BitwiseCopyable, Equatable {
    public var frequency: Double = 0
    public var depth: Float = 0
    public var delay: Double = 0
    public var fade: Double = 0
    @_noAllocation @_noLocks
    public init(frequency: Double = 0, depth: Float = 0, delay: Double = 0, fade: Double = 0) {
        (self.frequency, self.depth, self.delay, self.fade) = (frequency, depth, delay, fade)
    }
}

/// Everything one voice plays, resolved to numbers: what the region, the note, its velocity and the
/// controllers at the note-on make of the region's opcodes. The unit maps a parsed region to this in one
/// place; the voice knows nothing of SFZ's text.
///
/// Frames are the sample file's frames. `end`, `loopStart` and `loopEnd` are inclusive, as SFZ's opcodes
/// are; −1 means "the file's": the sample's last frame for `end`, the file's loop (a WAV's `smpl` chunk) for
/// the loop, or the whole sample when the file has none.
///
/// Threads: a value (made on the render thread by the unit's kernel, or anywhere).
public struct SFZVoiceParameters: Sendable, BitwiseCopyable {
    public var sample: SFZSampleID
    public var offset: Int = 0
    public var end: Int = -1
    public var loopMode: SFZLoopMode = .noLoop
    public var loopStart: Int = -1
    public var loopEnd: Int = -1
    /// The pitch relative to the sample played at its own rate, in cents: (key − pitch_keycenter) ×
    /// pitch_keytrack + tune + 100 × transpose + velocity tracking. The voice adds the sample's rate against
    /// the output's, so 0 plays the sample at its recorded pitch.
    public var pitchCents: Double = 0
    /// Linear gain: volume, amplitude and velocity (curve and tracking) multiplied out.
    public var gain: Float = 1
    /// −1 (left) … 1 (right). A mono sample is panned; a stereo sample's balance moves.
    public var pan: Float = 0
    /// A stereo sample's width: 1 as recorded, 0 mono, −1 channels swapped (SFZ's −100…100 % over 100).
    public var width: Float = 1
    /// Where a stereo sample's image sits, −1 … 1 (SFZ's `position` over 100).
    public var position: Float = 0
    public var amplitudeEnvelope = SFZEnvelopeTimes()
    public var filterEnvelope = SFZEnvelopeTimes(sustain: 0)
    /// Cents the filter envelope moves the cutoff at its peak (`fileg_depth`).
    public var filterEnvelopeDepth: Float = 0
    public var pitchEnvelope = SFZEnvelopeTimes(sustain: 0)
    /// Cents the pitch envelope moves the pitch at its peak (`pitcheg_depth`).
    public var pitchEnvelopeDepth: Float = 0
    public var filterType: SFZFilterType = .none
    /// Hz.
    public var cutoff: Double = 20000
    /// dB of resonance at the cutoff (two-pole filters; SFZ's `resonance`, 0…40).
    public var resonance: Float = 0
    /// dB.
    public var amplitudeLFO = SFZLFO()
    /// Cents.
    public var filterLFO = SFZLFO()
    /// Cents.
    public var pitchLFO = SFZLFO()
    /// The choke group a voice belongs to (`group`): `choke(group:)` silences the voices of one group.
    public var group: UInt32 = 0

    @_noAllocation @_noLocks
    public init(sample: SFZSampleID) { self.sample = sample }
}

/// The controller-driven values a voice follows while it sounds (CC volume and pan, a cutoff and a pitch
/// controller, the pitch bend), as the unit resolves them. The voice glides to new values over
/// `SFZVoice.inputGlideSeconds`, so a moving controller does not zipper.
///
/// Threads: a value.
public struct SFZVoiceInputs: Sendable, BitwiseCopyable, Equatable {
    /// dB added to the voice's gain.
    public var volume: Float = 0
    /// Added to the pan (and a stereo sample's position), −2 … 2 in all.
    public var pan: Float = 0
    /// Cents added to the cutoff.
    public var cutoff: Float = 0
    /// Cents added to the pitch.
    public var pitch: Float = 0
    @_noAllocation @_noLocks
    public init(volume: Float = 0, pan: Float = 0, cutoff: Float = 0, pitch: Float = 0) {
        (self.volume, self.pan, self.cutoff, self.pitch) = (volume, pan, cutoff, pitch)
    }
}

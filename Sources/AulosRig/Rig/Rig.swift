import AulosMIDI

/// Which instrument a part plays: Aulos's synth or sampler, an SFZ library (`Rig.Part.library`), or an LV2
/// plugin (`Rig.Part.plugin`).
public enum InstrumentChoice: String, Sendable, CaseIterable {
    case synth, sampler, lv2, sfz

    /// "synth", "sampler", "lv2:URI" or "sfz:PATH" split into the choice and its URI or path (the second
    /// value: an LV2 plugin's URI, an SFZ library's path as written); nil for anything else.
    public static func parse(_ text: String) -> (InstrumentChoice, plugin: String?)? {
        if text.hasPrefix("lv2:") {
            let uri = String(text.dropFirst(4))
            return uri.contains(":") ? (.lv2, uri) : nil
        }
        if text.hasPrefix("sfz:") {
            let path = String(text.dropFirst(4))
            return path.isEmpty ? nil : (.sfz, path)
        }
        return InstrumentChoice(rawValue: text).flatMap { $0 == .lv2 || $0 == .sfz ? nil : ($0, nil) }
    }
}

/// A rig: the whole playing setup as a file a person can read and edit (YAML, documented in docs/rigs.md).
/// Instruments ("parts") with their MIDI channels and sounds, each on a mixer bus with volume and pan (and
/// optionally its own EQ) and sends to return buses with effects, then the output volume, a master EQ and
/// a master effect chain.
///
/// Threads: control side.
public struct Rig: Equatable, Sendable {
    public struct Part: Equatable, Sendable {
        public var name: String
        public var instrument: InstrumentChoice
        /// MIDI channels 1…16 whose events this part plays.
        public var channels: [Int]
        /// Synth preset (name or number), or an LV2 plugin's preset (its label).
        public var preset: String?
        /// Program: for the synth a preset number, for the sampler sent to the part's channels at the start.
        public var program: Int?
        /// Sampler only: the bank (bank select, CC 0) sent before `program` at the start — FluidR3's variations
        /// are bank 8. Needs a program.
        public var bank: Int?
        /// Sampler SoundFont path; nil uses the bundled font.
        public var soundFont: String?
        /// The LV2 plugin's URI, for an `lv2` part.
        public var plugin: String?
        /// The SFZ library's `.sfz` file, for an `sfz` part (a rig file's relative path made relative to the
        /// rig file's folder when read).
        public var library: String?
        /// Parameter values of the part's instrument, by parameter name (an LV2 plugin's also by port symbol),
        /// after its preset (and an LV2 plugin's state).
        public var parameters: [String: Float] = [:]
        /// What channels play other than the part's starting sound, by channel (1…16): bank select and
        /// program change sent to the part at the start (`aulos save` writes what a player chose live). A
        /// synth part's first channel plays its `preset`, so it is not among them.
        public var programs: [Int: Program] = [:]
        /// An LV2 part's property values set by message (a sample's path), by label or URI, as text.
        public var properties: [String: String] = [:]
        /// An LV2 part's saved plugin state: Turtle, as the plugin and lilv write it.
        public var state: String?
        public var volume: Float = 1
        public var pan: Float = 0
        public var enabled = true
        /// An iPod-style EQ preset for this part alone.
        public var eq: String?
        /// The notes this part plays (a split or a layer's range); others pass it by.
        public var keys: ClosedRange<Int> = 0...127
        /// Semitones added to every note this part plays.
        public var transpose = 0
        public var velocity = VelocityCurve.linear
        /// Send levels (0…1) to the rig's return buses, by return name; after the part's fader.
        public var sends: [String: Float] = [:]
        /// The part's insert effects, in order, between its instrument and its EQ (built-in or LV2).
        public var effects: [EffectSpec] = []
        /// LV2 MIDI effects (MIDI in and out, no audio: eg-fifths, x42's MIDI filters), in order before the
        /// instrument: the part's MIDI goes through them, and what the last plays, the instrument plays.
        public var midiEffects: [EffectSpec] = []
        /// The most voices the part's instrument sounds at once (synth 1…4,096, default 64; sampler
        /// 16…4,096, default FluidSynth's 256; SFZ 1…4,096, default 64).
        public var polyphony: Int?
        /// The channels (1…16) a synth part plays its drum kit on; nil: channel 10, as General MIDI has it.
        public var drumChannels: [Int]?
        /// A synth part's MPE zones (nil: none, until an MPE Configuration Message sets them).
        public var mpe: MPELayout?
        /// A synth part's wavetable (a WAV of single cycles, or a bundled name) and its cycle length.
        public var wavetable: String?
        public var wavetableCycle: Int?
        /// A Scala scale (`.scl`) and keyboard mapping (`.kbm`) for this part, over the rig's.
        public var tuning: String?
        public var keymap: String?
        /// Where the part was read from, for errors found when the rig is built.
        public var source = SourceLocation.none

        public init(name: String, instrument: InstrumentChoice, channels: [Int]) {
            self.name = name
            self.instrument = instrument
            self.channels = channels
        }
    }

    /// A bank (CC 0 · 128 + CC 32) and program (0…127): what an instrument's channel plays.
    public typealias Program = ChannelPrograms.Choice

    public var name: String
    public var sampleRate = 48_000.0
    /// The host transport's tempo in live play (beats per minute), unless a file or `--tempo` gives one;
    /// a set's first rig's. Nil: 120.
    public var tempo: Double?
    public var slice: UInt32 = 256
    /// The audio driver it plays through live (`driver: alsa` or `jack`); nil: ALSA unless `--driver` says.
    public var driver: String?
    /// The web panel and OSC for live play (`web:`, `web-password:`, `osc:`).
    public var servers = LiveServers()
    public var volume: Float = 1
    /// The output stage's gain in dB (`output.gain`), before its limiter.
    public var gain: Float = 0
    /// Whether the output stage limits (`output.limiter: off` turns it off): the true-peak limiter at the end
    /// of the master chain that keeps the output at or below −1 dBTP.
    public var limiter = true
    /// Master iPod-style EQ preset.
    public var eq: String?
    public var parts: [Part]
    /// Controllers routed to unit parameters while this rig plays.
    public var controls: [ControlMapping] = []
    /// Named states of this rig (`snapshots:`), recalled while it plays without rebuilding anything.
    public var snapshots: [Snapshot] = []
    /// 1…16: program changes on this channel recall the snapshots (`snapshot-channel:`) and are not played.
    public var snapshotChannel: Int?

    /// A named state of a rig: values set as `aulos set` sets them (parameters glide to them) and programs
    /// sent to parts' channels. Recalled by name or number from the socket, OSC and the panel, and by
    /// program change on the rig's snapshot channel.
    public struct Snapshot: Equatable, Sendable {
        public var name: String
        /// The program (0…127) that recalls it on the snapshot channel, as written; nil: its position (from 0).
        public var program: Int?
        /// `TARGET: value` (a number, or an EQ preset's name for an EQ target), in the order written.
        public var values: [(target: String, value: String)] = []
        /// Per part name, per channel: the bank and program sent.
        public var programs: [String: [Int: Program]] = [:]
        public var source = SourceLocation.none

        public init(name: String) { self.name = name }

        public static func == (a: Snapshot, b: Snapshot) -> Bool {
            a.name == b.name && a.program == b.program && a.programs == b.programs
                && a.values.map { "\($0.target)=\($0.value)" } == b.values.map { "\($0.target)=\($0.value)" }
        }
    }
    /// Return buses the parts send to (a reverb, a chorus…), each with its effects, summed into the master.
    public var returns: [ReturnBus] = []
    /// The master insert chain, after the master EQ.
    public var masterEffects: [EffectSpec] = []
    /// A Scala scale (`.scl`) and keyboard mapping (`.kbm`) for every synth and sampler part without its own.
    public var tuning: String?
    public var keymap: String?
    /// Played without its returns, sends, part and master effects (`dry: true`, `--dry`): the parts
    /// straight to the output, as before effects existed — bit for bit.
    public var dry = false

    /// The most effects one chain (a part's, a return's, the master's) may hold, and a whole set.
    public static let maximumEffectsPerChain = 16
    public static let maximumEffects = 128

    /// This rig as it plays when dry: no returns, no sends, no part or master effects.
    public var playedDry: Rig {
        var rig = self
        rig.returns = []
        rig.masterEffects = []
        for index in rig.parts.indices {
            rig.parts[index].sends = [:]
            rig.parts[index].effects = []
        }
        rig.dry = true
        return rig
    }

    public init(name: String, parts: [Part]) {
        self.name = name
        self.parts = parts
    }
}

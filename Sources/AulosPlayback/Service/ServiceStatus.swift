import AulosRig
import Foundation

/// What `aulos status --json` prints: the running instrument as the control thread last saw it.
public struct ServiceStatus: Codable, Sendable, Equatable {
    public struct Control: Codable, Sendable, Equatable {
        public var cc: Int
        public var channel: Int?
        public var target: String
    }

    public var pid: Int32
    /// The set's name, its rigs, and the one playing (0-based).
    public var rigSet: String
    public var rigs: [String]
    public var activeRig: Int
    public var rig: String
    public var device: String
    public var sampleRate: Double
    public var period: UInt32
    public var periods: UInt32
    /// The device buffer (ms): the constant latency live MIDI is placed at.
    public var bufferMs: Double
    public var seconds: Double
    public var voices: Int
    /// Voices ended early to avoid an xrun (overload), since start.
    public var voicesShed: Int
    public var dspLoad: Double
    public var peakLoad: Double
    /// The DSP load averaged over every cycle since the rig started (nil from an older aulos): what the means
    /// in `cpu` add up to, over the same cycles.
    public var meanLoad: Double?
    /// CPU load measured per unit on the render thread: each part's, the shared units', the notifications'
    /// (nil from an older aulos, or with unit timing off).
    public var cpu: CPU?
    /// Per rig of the set, in `rigs` order: its parts' peak load when it last played and whether a switch to it
    /// is predicted to fit the period (nil from an older aulos).
    public var rigLoads: [RigLoad]?
    public var xruns: Int
    public var lateSlices: Int
    public var deviceLost: Bool
    public var midiDelivered: Int
    public var midiLate: Int
    public var midiDropped: Int
    public var midiStale: Int
    /// Sequencer ports playing into aulos (keyboards and programs); nil without a sequencer yet.
    public var keyboards: [String]?
    /// Network MIDI sessions and how their packets fare (nil without network MIDI, and from an older aulos).
    public var networkSessions: [NetworkSession]?
    public var controls: [Control]
    /// The target a MIDI-learn is waiting to map.
    public var learning: String?
    public var rigSwitches: Int
    public var reloads: Int
    /// Why the last SIGHUP left the rig as it was (its file could not be read); nil after a good reload.
    public var reloadFailure: String?
    /// Why the last rig that played runs instead of the configured one (it could not be read or built, or its
    /// last start crashed); nil when the configured rig plays.
    public var fallback: String?
    /// A render cycle stuck inside a unit (a plugin that hangs), named by the watchdog; nil while cycles run.
    public var stuckUnit: String?
    /// Levels after each fader, dBFS: every part, each send and return, the master (nil from an older aulos).
    public var meters: [Meter]?
    /// What lets the rig play but may cost it (an LV2 plugin that is not hard-real-time capable).
    public var warnings: [String]?
    /// The tempo last set by `tempo` (nil: the rig's own), and whether the host transport is playing.
    public var tempo: Double?
    public var transportPlaying: Bool?
    /// Where the host transport stood in the last slice (quarter-note beat, BPM): its own, or JACK's.
    public var transportBeat: Double?
    public var transportTempo: Double?
    /// The file being recorded now (the panel's record button, `record start`), if any.
    public var recordingTo: String?
    /// Why the recording (the last one started) stopped writing before `record stop` — a full disk — and
    /// what it kept; nil while it writes, and from the next `record start`.
    public var recordingFailure: String?
    /// The last channel messages in (at most 32), numbered from the start, oldest first.
    public var recentMIDI: [MIDIActivity]?
    /// The output stage since the rig started: whether it limits, its latency, what it did (nil from an older
    /// aulos).
    public var limiter: Limiter?
    /// What each channel of the active rig's parts plays now, as the instruments took it (nil from an older
    /// aulos): the panel's preset menus follow it.
    public var programs: [ChannelProgram]?
    /// The file player, when a file is loaded (nil otherwise, and from an older aulos).
    public var player: Player?
    /// The snapshot recalled last in the rig playing (nil: none since it was built).
    public var snapshot: String?
    /// Each SFZ part's streaming: voices, underruns, bytes streamed and preloaded (nil without SFZ parts).
    public var sampleStreaming: [SampleStreamingStatus]?

    /// CPU load as fractions of the period (0.05 is 5 %), smoothed like `dspLoad`, each with its mean over the
    /// run: every part of the set (a rig left behind rings out, and costs while it does), the units the parts
    /// share (mixers, returns, master EQ and effects, output stage, the I/O unit's conversion) and the render
    /// notifications (MIDI in, the players, the transport, meters, recorders and part taps). Each is measured
    /// on its own; together they are the render, and `dspLoad` is that plus the driver's work around it.
    public struct CPU: Codable, Sendable, Equatable {
        public struct Part: Codable, Sendable, Equatable {
            /// The part's rig (0-based, as `activeRig`) and its name there.
            public var rig: Int
            public var part: String
            public var cpu: Double
            public var mean: Double
        }

        public var parts: [Part]
        public var shared: Double
        public var meters: Double
        public var sharedMean: Double
        public var metersMean: Double
    }

    /// A rig's parts at their peak load while it last played (`measured` false: it has not played since the rig
    /// was built, and nothing is predicted), the load a switch to it is predicted to give the period (the DSP
    /// load now, less the playing rig's parts, plus this peak), and whether that fits (within 90 %). A
    /// measurement of the last time it played, not a guarantee.
    public struct RigLoad: Codable, Sendable, Equatable {
        public var name: String
        public var measured: Bool
        public var peak: Double?
        public var predicted: Double?
        public var fits: Bool?
    }

    /// The file player: its file, whether it plays, where it is and how long the file is (seconds).
    public struct Player: Codable, Sendable, Equatable {
        public var file: String
        public var state: String
        public var position: Double
        public var duration: Double
        public var loop: Bool
        /// Times the file has come round since it started looping.
        public var passes: Int
        /// The playlist's songs (file names), when the player has one, and the one loaded (from 1).
        public var playlist: [String]? = nil
        public var song: Int? = nil
    }

    /// Part `part`'s channel `channel` (1…16) plays `program` of `bank` (CC 0 · 128 + CC 32).
    public struct ChannelProgram: Codable, Sendable, Equatable {
        public var part: String
        public var channel: Int
        public var bank: Int
        public var program: Int
    }

    public struct Limiter: Codable, Sendable, Equatable {
        public var on: Bool
        public var latencyMs: Double
        /// Samples turned down by 0.1 dB or more, and the deepest reduction (dB).
        public var limitedSamples: Int
        public var deepestReductionDb: Double
        /// Samples that reached full scale (only with the limiter off), and the highest peak (dBFS).
        public var fullScaleSamples: Int
        public var peakDb: Double
    }

    /// A network MIDI session: the peer's name and address, packets read, lost and repaired from the recovery
    /// journal, how late the last packet arrived after its time (ms) and the best clock round trip (ms).
    public struct NetworkSession: Codable, Sendable, Equatable {
        public var peer: String
        public var address: String
        public var kind: String
        public var packets: Int
        public var lost: Int
        public var repaired: Int
        public var latencyMs: Double?
        public var clockRoundTripMs: Double?
    }

    public struct MIDIActivity: Codable, Sendable, Equatable {
        public var sequence: Int
        public var text: String
    }

    public struct Meter: Codable, Sendable, Equatable {
        public var name: String
        public var peak: Float
        public var average: Float
    }
}

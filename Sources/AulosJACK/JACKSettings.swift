/// How the JACK I/O unit joins a JACK server (or PipeWire through pipewire-jack): its client name, where
/// its ports connect, whether it takes MIDI, and what it does with JACK's transport.
///
/// Threads: a value, made by the host (the command line) before the rig is built.
public struct JACKSettings: Sendable, Equatable {
    /// How Aulos relates to JACK's transport.
    public enum Transport: String, Sendable, Equatable, CaseIterable {
        /// Aulos keeps its own transport.
        case off
        /// Aulos's host transport follows JACK's: rolling, position, and the timebase master's bar/beat/tick
        /// and tempo (without a master, the beat comes from Aulos's own tempo map at JACK's frame).
        case follow
        /// As `follow`, and Aulos is the timebase master: it publishes its tempo map as JACK's BBT position.
        case master
    }

    /// The JACK client name (JACK makes it unique by appending -01, -02 … when it is taken).
    public var clientName: String
    /// The server to join; nil: the default one (JACK_DEFAULT_SERVER, or "default").
    public var serverName: String?
    /// Ports the outputs connect to, in order (out_1 → the first, out_2 → the second …); nil: the server's
    /// physical playback ports; empty: none (connect them yourself).
    public var outputConnections: [String]?
    /// Ports the inputs connect from, when the input element is on; nil: the physical capture ports.
    public var inputConnections: [String]?
    /// Register a JACK MIDI input port (`midi_in`).
    public var midiInput = true
    /// Connect every physical (hardware) JACK MIDI output to `midi_in`, as the ALSA sequencer input does
    /// with keyboards.
    public var midiAutoconnect = true
    /// Also connect the JACK MIDI outputs whose names contain one of these.
    public var midiConnections: [String] = []
    public var transport: Transport = .off
    /// Each part also on a pair of ports of its own (`PART_L`, `PART_R`: after its effects and EQ, before
    /// its volume and pan in the mix), for recording parts apart in a DAW.
    public var partOutputs = false

    public init(clientName: String = "Aulos") { self.clientName = clientName }

    /// A JACK client name from a rig name: JACK forbids ':' (it separates client from port) and limits the
    /// length; an empty name is "Aulos".
    public static func clientName(forRig rig: String) -> String {
        let cleaned = String(rig.map { $0 == ":" || $0.isNewline ? "-" : $0 })
        let trimmed = cleaned.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        let name = String(String(trimmed).prefix(48))
        return name.isEmpty ? "Aulos" : name
    }
}

import CJACK

/// Finding ports on a JACK server by type and flags.
///
/// Threads: the control thread (never inside a JACK callback).
enum JACKPort {
    static let audioType = JACK_DEFAULT_AUDIO_TYPE
    static let midiType = JACK_DEFAULT_MIDI_TYPE

    /// Full names ("client:port") of the ports of `type` whose flags include all of `flags`, in the
    /// server's order (system:playback_1 before system:playback_2).
    static func names(_ client: OpaquePointer, type: String, _ flags: UInt32) -> [String] {
        guard let list = jack_get_ports(client, nil, type, UInt(flags)) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        var names: [String] = []
        var index = 0
        while let name = list[index] {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }
}

import AulosCore
import AulosIO
import CALSA
import Glibc

extension AudioDriver {
    /// ALSA: the ALSA I/O unit, the cards alsa-lib sees, a capture check that opens the PCM without blocking.
    public static var alsa: AudioDriver {
        AudioDriver(
            name: "ALSA", outputComponent: ALSAOutputUnit.component, listCards: ALSADriver.systemCards,
            isInputAvailable: ALSADriver.isInputAvailable)
    }
}

extension ALSAOutputUnit: LiveIOUnit {
    /// The component hosts register to head a graph with the ALSA unit.
    public static var component: Component {
        Component(componentDescription, name: "Aulos: ALSA I/O") { ALSAOutputUnit() }
    }

    public var restartNeeded: IORestart? { nil }
    /// An ALSA PCM is the master output alone.
    public func partOutput(named name: String) -> RenderCallbackStruct? { nil }
}

/// What the audio session asks of ALSA beyond the I/O unit.
enum ALSADriver {
    /// The sound cards alsa-lib sees, as "index: name".
    static func systemCards() -> [String] {
        var cards: [String] = []
        var index: Int32 = -1
        while snd_card_next(&index) >= 0 && index >= 0 {
            var name: UnsafeMutablePointer<CChar>?
            if snd_card_get_name(index, &name) >= 0, let name {
                cards.append("\(index): \(String(cString: name))")
                free(name)
            } else {
                cards.append("\(index)")
            }
        }
        return cards
    }

    /// Whether the device can capture (Core Audio's InputAvailable): a capture stream opens on it.
    static func isInputAvailable(_ device: String, _ configuration: String?) -> Bool {
        aulos_alsa_capture_errors()
        var pcm: OpaquePointer?
        let status =
            configuration.map { aulos_alsa_open(&pcm, device, $0, SND_PCM_STREAM_CAPTURE, Int32(SND_PCM_NONBLOCK)) }
            ?? aulos_alsa_open(&pcm, device, nil, SND_PCM_STREAM_CAPTURE, Int32(SND_PCM_NONBLOCK))
        if let pcm { snd_pcm_close(pcm) }
        return status >= 0
    }
}

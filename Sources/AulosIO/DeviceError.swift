import AulosCore
import CALSA

#if canImport(Glibc)
import Glibc
#endif

/// A sound device that cannot be used, as one line saying what to do: missing (no card, no driver, a name
/// no configuration defines), busy (another program has it), refused (permission, or none of the formats,
/// rates and periods offered).
///
/// Threads: a value.
public struct DeviceError: ReportableError, Equatable, Sendable {
    public enum Kind: Sendable, Equatable {
        /// Not there (yet): a service waits for it.
        case missing
        /// Held by another program.
        case busy
        /// There, but it will not play what was asked (format, rate, period) or will not let us.
        case refused
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The same failure where the audio-unit API reports it (initialize, start): Core Audio's code for the
    /// kind, the same message.
    public var unitError: AudioUnitError {
        AudioUnitError(kind == .refused ? .formatNotSupported : .noConnection, message)
    }

    /// Opening `device` failed with `status` (a negative errno); alsa-lib's own message, when it printed
    /// one, is more precise than the errno.
    static func opening(_ device: String, _ status: Int32, capture: Bool = false) -> DeviceError {
        let what = "ALSA \(capture ? "capture " : "")device '\(device)'"
        if access("/dev/snd", F_OK) != 0
            && (device == "default" || device.hasPrefix("hw:") || device.hasPrefix("plughw:"))
        {
            return DeviceError(
                .missing,
                "no sound device: this machine has no /dev/snd (no sound card or driver); name a configured PCM with "
                    + "--device"
            )
        }
        switch status {
        case -EBUSY:
            return DeviceError(
                .busy,
                "\(what) is busy: another program (PipeWire, PulseAudio, JACK, another aulos) is using it; "
                    + "stop it or play through it (--device default)")
        case -EACCES, -EPERM:
            return DeviceError(
                .refused,
                "\(what): permission denied; add yourself to group audio (sudo usermod -aG audio $USER, then log in "
                    + "again)"
            )
        default:
            let detail = String(cString: aulos_alsa_last_error())
            let reason = detail.isEmpty ? String(cString: snd_strerror(status)) : detail
            return DeviceError(.missing, "cannot open \(what): \(reason) (see aulos devices)")
        }
    }
}

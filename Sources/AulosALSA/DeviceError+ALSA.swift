import AulosCore
import AulosIO
import CALSA
import Glibc

extension DeviceError {
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

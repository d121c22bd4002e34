import AulosCore
import CALSA

#if canImport(Glibc)
import Glibc
#endif

/// The ALSA sequencer could not be used, as one line saying what to do.
///
/// Threads: a value.
public struct SequencerError: ReportableError, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }

    /// The sequencer cannot be opened: missing (no snd-seq module, a container without /dev/snd) or
    /// refused (`status`, a negative errno).
    static func unavailable(_ status: Int32) -> SequencerError {
        if access("/dev/snd/seq", F_OK) != 0 {
            return SequencerError(
                "no ALSA sequencer: /dev/snd/seq is missing; load it with 'sudo modprobe snd-seq', "
                    + "or play a file with 'aulos play FILE'")
        }
        if status == -EACCES || status == -EPERM {
            return SequencerError(
                "the ALSA sequencer refused access (/dev/snd/seq); add yourself to group audio "
                    + "(sudo usermod -aG audio $USER, then log in again)")
        }
        return SequencerError("cannot open the ALSA sequencer: \(String(cString: snd_strerror(status)))")
    }
}

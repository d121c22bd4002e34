import AulosCore
import AulosMIDI

extension PlaybackOptions {
    /// Refuses, before anything is built or written, an input that would play for longer than
    /// `maximumDuration`: one line with the length found, the limit and how to raise it, and — for a render —
    /// how much it would write (`bytesPerFrame`; `compressed` says the file type shrinks it by an unknown
    /// amount).
    func checkPlayingTime(
        frames: Int64, sampleRate: Double, output: (bytesPerFrame: Int, compressed: Bool)? = nil
    ) throws(InputFileError) {
        let seconds = Double(frames) / sampleRate
        guard seconds > maximumDuration else { return }
        var message =
            "\(input ?? "the demo piece") plays for \(seconds.hoursMinutesSeconds) with its tail, longer than the "
            + "\(maximumDuration.hoursMinutesSeconds) limit"
        if let output {
            let bytes = Double(frames) * Double(output.bytesPerFrame)
            message += "; it would write \(output.compressed ? "up to " : "")\(Self.describeBytes(bytes))"
        }
        message += " (--max-duration SECONDS allows more, up to \(Int(InputTimeLimit.seconds / 3600)) hours)"
        throw InputFileError(message)
    }

    /// `515.4 GB`, `63.2 MB`: decimal units, as disks are sold.
    static func describeBytes(_ bytes: Double) -> String {
        for (unit, scale) in [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)] where bytes >= scale {
            return (bytes / scale).fixed(1) + " " + unit
        }
        return "\(Int(bytes)) bytes"
    }
}

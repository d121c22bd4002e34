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
            message += "; it would write \(output.compressed ? "up to " : "")\(Int64(bytes).bytesText)"
        }
        message += " (--max-duration SECONDS allows more, up to \(Int(InputTimeLimit.seconds / 3600)) hours)"
        throw InputFileError(message)
    }

}

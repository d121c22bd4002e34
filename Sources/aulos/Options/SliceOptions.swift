import ArgumentParser
import AulosCore

/// The rate and slice a rig renders at, for commands that build a rig (`graph`, `render`, `play`). Given,
/// they win over a rig file's own; not given, a rig's own or 48 kHz and 256 frames.
struct SliceOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Sample rate in Hz, a whole number 8000…192000 (default: the rig's, or 48000)."))
    var sampleRate: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Frames per render slice, 1…4096 (play: 16…4096, the device period; default: the rig's, or 256). "
                + "Sets MaximumFramesPerSlice on every unit."))
    var slice: Int?

    func validate() throws {
        if let sampleRate {
            guard sampleRate >= 8_000, sampleRate <= 192_000 else {
                throw ValidationError("--sample-rate must be between 8000 and 192000 Hz, not \(sampleRate.clean)")
            }
            guard sampleRate == sampleRate.rounded() else {
                throw ValidationError("--sample-rate must be a whole number of Hz, not \(sampleRate)")
            }
        }
        if let slice, !(1...4096).contains(slice) {
            throw ValidationError("--slice must be between 1 and 4096 frames, not \(slice)")
        }
    }
}

import ArgumentParser

/// The rate and slice a rig renders at, for commands that build the default rig (`graph`, `render`, `play`).
struct SliceOptions: ParsableArguments {
    @Option(help: "Sample rate in Hz.")
    var sampleRate: Double = 48_000

    @Option(help: "Frames per render slice (1...4096). Sets MaximumFramesPerSlice on every unit.")
    var slice: UInt32 = 256

    func validate() throws {
        guard sampleRate >= 8_000, sampleRate <= 192_000 else {
            throw ValidationError("--sample-rate must be between 8000 and 192000 Hz, not \(sampleRate)")
        }
        guard (1...4096).contains(slice) else {
            throw ValidationError("--slice must be between 1 and 4096 frames, not \(slice)")
        }
    }
}

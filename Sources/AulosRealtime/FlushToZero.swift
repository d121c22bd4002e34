import CAulosRealtime

/// Flush-to-zero and denormals-are-zero for the calling thread: subnormal floats (the last 2⁻¹²⁶ of a
/// decaying filter, reverb or plugin tail) become 0 instead of costing tens to hundreds of cycles each on
/// x86. Every render thread sets it once (`RealtimeThread` for the ALSA I/O and MIDI threads, JACK's
/// thread-init callback for its process thread), as the peers do; a subnormal tail is inaudible (below
/// -750 dBFS).
///
/// Threads: acts on the calling thread only (the control register is per thread). Real-time safe.
public enum FlushToZero {
    /// Turns FTZ/DAZ (FPCR.FZ on aarch64) on for the calling thread; returns the control word before, for
    /// `restore`.
    @discardableResult
    public static func enable() -> UInt64 {
        let before = aulos_fp_control()
        aulos_fp_set_control(before | aulos_fp_flush_to_zero_bits())
        return before
    }

    /// Puts back a control word `enable` returned.
    public static func restore(_ control: UInt64) { aulos_fp_set_control(control) }

    /// Whether the calling thread flushes subnormals (false on a CPU without the bits).
    public static var isEnabled: Bool {
        let bits = aulos_fp_flush_to_zero_bits()
        return bits != 0 && aulos_fp_control() & bits == bits
    }

    /// Runs `body` with FTZ/DAZ on, then restores the thread's previous mode.
    public static func scope<Result: ~Copyable, Failure>(_ body: () throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        let before = enable()
        defer { restore(before) }
        return try body()
    }
}

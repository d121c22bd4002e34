/// A circular delay line over memory its owner allocates once (on the control thread, sized for the longest
/// delay at the highest sample rate) and frees once: writing and reading never allocate.
///
/// Threads: render thread (a plain value inside an effect's kernel).
public struct DelayLine: BitwiseCopyable, @unchecked Sendable {
    public let buffer: UnsafeMutablePointer<Float>
    /// The buffer's length, a power of two, so wrapping is a mask.
    public let capacity: Int
    let mask: Int
    var writeIndex = 0

    /// The samples a line of `capacity` needs: the longest delay plus room for interpolation, rounded up to a
    /// power of two.
    public static func capacity(forDelay samples: Int) -> Int {
        var size = 16
        while size < samples + 4 { size <<= 1 }
        return size
    }

    /// A line over `buffer` (`capacity` floats, a power of two), zeroed.
    public init(buffer: UnsafeMutablePointer<Float>, capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "a delay line's capacity is a power of two")
        self.buffer = buffer
        self.capacity = capacity
        self.mask = capacity - 1
        buffer.initialize(repeating: 0, count: capacity)
    }

    /// The longest delay the line can read back, in samples.
    public var longestDelay: Int {
        @inlinable @_noAllocation @_noLocks get { capacity - 4 }
    }

    /// Writes the next sample (advancing time by one sample).
    @inline(__always) @_noAllocation @_noLocks
    public mutating func write(_ sample: Float) {
        writeIndex = (writeIndex + 1) & mask
        buffer[writeIndex] = sample
    }

    /// The sample written `delay` samples ago (0: the last one written), `delay` in 0…`longestDelay`.
    @inline(__always) @_noAllocation @_noLocks
    public func read(_ delay: Int) -> Float { buffer[(writeIndex - delay) & mask] }

    /// The signal `delay` samples ago, linearly interpolated between samples (exact at whole delays).
    @inline(__always) @_noAllocation @_noLocks
    public func read(fractional delay: Float) -> Float {
        let whole = Int(delay)
        let fraction = delay - Float(whole)
        let newer = buffer[(writeIndex - whole) & mask]
        let older = buffer[(writeIndex - whole - 1) & mask]
        return newer + fraction * (older - newer)
    }

    /// The signal `delay` samples ago through a first-order all-pass (Thiran) interpolator: flat magnitude at
    /// every frequency, so a modulated line in a feedback loop loses nothing to interpolation. `state` is the
    /// interpolator's last output, kept by the caller (one per read position). The fractional part is kept
    /// within 0.5…1.5 samples, where the all-pass coefficient stays small (−0.2…0.33) and well behaved.
    @inline(__always) @_noAllocation @_noLocks
    public func read(allPass delay: Float, state: inout Float) -> Float {
        let (whole, coefficient) = Self.allPassPosition(delay)
        return read(allPassAt: whole, coefficient: coefficient, state: &state)
    }

    /// `read(allPass:state:)` with the position worked out once (`allPassPosition`) for a delay that holds
    /// for a while: what a line read every sample at a slowly moving delay uses.
    @inline(__always) @_noAllocation @_noLocks
    public func read(allPassAt whole: Int, coefficient: Float, state: inout Float) -> Float {
        let newer = buffer[(writeIndex - whole) & mask]
        let older = buffer[(writeIndex - whole - 1) & mask]
        state = coefficient * (newer - state) + older
        return state
    }

    /// A delay as the all-pass interpolator reads it: whole samples, and the coefficient for the fraction
    /// (kept within 0.5…1.5 samples).
    @inline(__always) @_noAllocation @_noLocks
    public static func allPassPosition(_ delay: Float) -> (whole: Int, coefficient: Float) {
        var whole = Int(delay)
        var fraction = delay - Float(whole)
        if fraction < 0.5 && whole > 0 {
            fraction += 1
            whole -= 1
        }
        return (whole, (1 - fraction) / (1 + fraction))
    }

    /// Silence.
    @_noAllocation @_noLocks
    public mutating func clear() {
        buffer.update(repeating: 0, count: capacity)
        writeIndex = 0
    }
}

/// Moving a value toward a target by at most a fixed step per sample: how a delay time slides to a new
/// length without a jump (a jump in a read position is a click).
public enum Slew {
    @inline(__always) @_noAllocation @_noLocks
    public static func step(_ value: Float, toward target: Float, by step: Float) -> Float {
        abs(target - value) <= step ? target : value + (target > value ? step : -step)
    }
}

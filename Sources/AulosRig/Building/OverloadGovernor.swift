import AulosMIDI

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the render inside its period under overload: when the I/O thread's DSP load passes 80 %, every
/// instrument's voice limit drops to three quarters of what it sounds (the instruments shed the excess,
/// released and oldest voices first); below 50 % the limits climb back an eighth at a time. Acting on the
/// smoothed load before a slice runs late is what keeps an xrun from happening at all.
///
/// Threads: the control thread (the live session's tick); the limits are atomics the render thread reads.
public struct OverloadGovernor {
    static let shedAbove = 0.80
    static let restoreBelow = 0.50

    /// Off, it never touches the limits.
    public let enabled: Bool

    /// `enabled` defaults to on unless AULOS_NO_SHEDDING is set (scripts/overload-test.sh measures what
    /// shedding prevents that way).
    public init(enabled: Bool = getenv("AULOS_NO_SHEDDING") == nil) { self.enabled = enabled }

    public mutating func update(load: Double, instruments: [any MusicDevice]) {
        guard enabled else { return }
        for instrument in instruments {
            let budget = instrument.voiceBudget
            let ceiling = Int(instrument.polyphony)
            if load > Self.shedAbove {
                budget.limit = max(4, min(budget.limit, ceiling, budget.active) * 3 / 4)
            } else if load < Self.restoreBelow && budget.limit < ceiling {
                let raised = budget.limit + max(1, budget.limit / 8)
                budget.limit = raised >= ceiling ? Int.max : raised
            }
        }
    }
}

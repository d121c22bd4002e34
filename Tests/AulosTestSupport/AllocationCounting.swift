import CAllocationCounter
import Testing

/// Heap allocations made by this thread while the counted bodies ran: how the zero-allocation tests
/// measure the render thread and nothing the test runner does.
///
/// Threads: count on the thread being measured.
public struct AllocationTally: Sendable {
    public private(set) var allocations: Int64 = 0
    public private(set) var frees: Int64 = 0
    public private(set) var counted = 0

    public init() {}

    /// Runs `body`, adding what it allocated on this thread.
    public mutating func count<Result>(_ body: () throws -> Result) rethrows -> Result {
        allocation_counter_begin()
        defer {
            let tally = allocation_counter_end()
            allocations += tally.allocations
            frees += tally.frees
            counted += 1
        }
        return try body()
    }
}

/// Whether this build counts allocations at all. Sanitizer builds bring their own malloc, so the counting
/// one is left out there.
public var allocationsCanBeCounted: Bool { allocation_counter_is_compiled_in() == 1 }

/// Expects that nothing `tally` counted allocated (nor freed, with `orFrees`). Where this build cannot
/// count (a sanitizer owns malloc) the test is cancelled with that reason — reported as not run, never
/// passed — so call it after the test's other expectations.
public func expectNoAllocations(
    _ tally: AllocationTally, _ what: String = "rendering", orFrees: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    guard allocationsCanBeCounted else {
        try Test.cancel(
            "allocations not counted for \(what): a sanitizer build owns malloc", sourceLocation: sourceLocation)
    }
    #expect(
        allocation_counter_is_active() == 1, "the counting malloc is not the process's", sourceLocation: sourceLocation)
    #expect(tally.counted > 0, "nothing was counted", sourceLocation: sourceLocation)
    #expect(
        tally.allocations == 0, "\(what) allocated \(tally.allocations) times in \(tally.counted) counted calls",
        sourceLocation: sourceLocation)
    if orFrees { #expect(tally.frees == 0, "\(what) freed \(tally.frees) times", sourceLocation: sourceLocation) }
}

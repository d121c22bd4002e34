import CAllocationCounter
import Testing

/// The zero-allocation tests are only as good as the counter: prove it sees Swift allocations.
@Suite(.enabled(if: allocation_counter_is_compiled_in() == 1, "sanitizer build: the sanitizer owns malloc"))
struct AllocationCounterTests {
    @Test func counterIsTheProcessMalloc() {
        #expect(allocation_counter_is_active() == 1)
    }

    @Test func counterSeesSwiftAllocations() {
        allocation_counter_begin()
        let array = [Int](repeating: 7, count: Int.random(in: 100...200))
        let count = allocation_counter_end()
        #expect(array.count >= 100)
        #expect(count.allocations >= 1)
    }

    @Test func counterIgnoresNonAllocatingWork() {
        var total = 0
        allocation_counter_begin()
        for index in 0..<10_000 { total &+= index &* 3 }
        let count = allocation_counter_end()
        #expect(total != 0)
        #expect(count.allocations == 0)
        #expect(count.frees == 0)
    }
}

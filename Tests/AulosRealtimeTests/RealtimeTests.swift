import AulosRealtime
import AulosTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The lock-free pieces the render thread relies on: the SPSC ring and the hazard-pointer exchange.
@Suite struct RealtimeTests {
    @Test func ringIsFIFOAndBounded() {
        let ring = SPSCRing<Int>(minimumCapacity: 5)
        defer { ring.deallocate() }
        #expect(ring.capacity == 8)
        for value in 0..<8 { #expect(ring.push(value)) }
        #expect(!ring.push(99))
        #expect(ring.count == 8)
        #expect(ring.peek() == 0)
        for value in 0..<8 { #expect(ring.pop() == value) }
        #expect(ring.pop() == nil)
    }

    @Test func ringCarriesOneMillionValuesInOrderBetweenTwoThreads() async {
        let ring = SPSCRing<UInt64>(minimumCapacity: 256)
        defer { ring.deallocate() }
        let total: UInt64 = 1_000_000
        let producer = TestThread {
            var next: UInt64 = 0
            while next < total { if ring.push(next) { next += 1 } }
        }
        var expected: UInt64 = 0
        var outOfOrder = 0
        while expected < total {
            if let value = ring.pop() {
                if value != expected { outOfOrder += 1 }
                expected += 1
            }
        }
        producer.join()
        #expect(outOfOrder == 0)
    }

    @Test func hazardExchangeKnowsWhenAPlanIsReleased() {
        let exchange = HazardExchange()
        defer { exchange.deallocate() }
        let first = UnsafeMutableRawPointer(bitPattern: 0x1000)!
        let second = UnsafeMutableRawPointer(bitPattern: 0x2000)!
        #expect(exchange.publish(first) == nil)
        #expect(exchange.acquire() == first)
        #expect(exchange.publish(second) == first)
        #expect(exchange.isInUse(first))
        #expect(!exchange.waitUntilUnused(first, timeout: .milliseconds(5)))
        exchange.release()
        #expect(!exchange.isInUse(first))
        #expect(exchange.acquire() == second)
        exchange.release()
    }
}

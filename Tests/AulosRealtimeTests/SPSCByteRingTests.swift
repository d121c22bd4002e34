import AulosRealtime
import AulosTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The variable-length message ring JACK MIDI input, the LV2 kernel's property messages and the LV2 worker
/// rely on: messages of every length, the refusal paths, and two threads across constant wrap-around.
@Suite struct SPSCByteRingTests {
    /// Message `sequence`'s length, 0...maximumLength, scattered so neighbours differ (a multiplicative hash).
    static func length(of sequence: Int, maximumLength: Int) -> Int {
        Int((UInt64(truncatingIfNeeded: sequence) &* 0x9E37_79B9_7F4A_7C15) >> 40) % (maximumLength + 1)
    }

    /// Byte `index` of message `sequence`: its first four bytes are the sequence number (little-endian), the
    /// rest a pattern of both, so a message read at a wrong offset, a stale byte or a swapped pair shows.
    static func byte(_ index: Int, of sequence: Int) -> UInt8 {
        if index < 4 { return UInt8(truncatingIfNeeded: sequence >> (8 * index)) }
        return UInt8(truncatingIfNeeded: sequence &* 131 &+ index &* 7 &+ 1)
    }

    /// A side waiting for the other: spins 64 times, then sleeps 100 µs on each further try (yielding was not
    /// enough: beside other tests on two cores the spinning side kept the CPU from the other). False once it
    /// has waited 10 s: a broken ring can look full to the writer and empty to the reader at once, and the
    /// test then ends with what it saw rather than hanging.
    struct Waiting {
        var tries = 0
        var since: ContinuousClock.Instant?

        mutating func pause() -> Bool {
            tries += 1
            guard tries > 64 else { return true }
            usleep(100)
            guard tries & 63 == 0 else { return true }
            let now = ContinuousClock.now
            if since == nil { since = now }
            return now - since! < .seconds(10)
        }
    }

    static func fill(_ buffer: UnsafeMutableRawPointer, sequence: Int, count: Int) {
        for index in 0..<count { buffer.storeBytes(of: byte(index, of: sequence), toByteOffset: index, as: UInt8.self) }
    }

    static func matches(_ buffer: UnsafeRawPointer, sequence: Int, count: Int) -> Bool {
        for index in 0..<count where buffer.load(fromByteOffset: index, as: UInt8.self) != byte(index, of: sequence) {
            return false
        }
        return true
    }

    @Test func capacityRoundsUpAndFullRefusesWithoutWriting() {
        let ring = SPSCByteRing(minimumCapacity: 65)
        defer { ring.deallocate() }
        #expect(ring.capacity == 128)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 8)
        defer { scratch.deallocate() }
        #expect(ring.peekSize() == nil)
        #expect(ring.read(into: scratch, scratchSize: 128) == nil)
        // 4 + 60 bytes each: two fill the 128-byte ring exactly, a third (even an empty one) is refused.
        Self.fill(scratch, sequence: 1, count: 60)
        #expect(ring.write(scratch, size: 60))
        Self.fill(scratch, sequence: 2, count: 60)
        #expect(ring.write(scratch, size: 60))
        #expect(!ring.write(scratch, size: 0))
        #expect(!ring.write(scratch, size: -1))
        #expect(!ring.write(scratch, size: 125))  // never fits, even empty
        #expect(ring.peekSize() == 60)
        // A message larger than the reader's scratch space is skipped (−1) and the next one is intact.
        #expect(ring.read(into: scratch, scratchSize: 59) == -1)
        #expect(ring.write(nil, size: 0))  // an empty message, no bytes to copy
        #expect(ring.read(into: scratch, scratchSize: 60) == 60)
        #expect(Self.matches(scratch, sequence: 2, count: 60))
        #expect(ring.peekSize() == 0)
        #expect(ring.read(into: scratch, scratchSize: 0) == 0)
        #expect(ring.read(into: scratch, scratchSize: 128) == nil)
    }

    /// Every length 0–60 (every padding), sixteen times each through a 64-byte ring, so messages start
    /// at every 4-byte offset and split across the end of the storage (length words stay 4-aligned, whole):
    /// each comes back whole.
    @Test func everyLengthAtEveryOffsetRoundTrips() {
        let ring = SPSCByteRing(minimumCapacity: 64)
        defer { ring.deallocate() }
        let message = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        defer {
            message.deallocate()
            scratch.deallocate()
        }
        var failures = 0
        var sequence = 0
        for length in 0...60 {
            for _ in 0..<(ring.capacity / 4) {
                Self.fill(message, sequence: sequence, count: length)
                if !ring.write(message, size: length) { failures += 1 }
                if ring.peekSize() != length { failures += 1 }
                if ring.read(into: scratch, scratchSize: 64) != length { failures += 1 }
                if !Self.matches(scratch, sequence: sequence, count: length) { failures += 1 }
                sequence += 1
            }
        }
        #expect(failures == 0)
        #expect(ring.peekSize() == nil)
    }

    /// Two threads, a 4 KiB ring and 200,000 messages of 0–100 bytes (at most 104 bytes with the length word,
    /// 56 on average, so the ring wraps every 73 messages or so, 2,700 times in all); the reader's scratch
    /// space holds 64, so about a third are refused and skipped. Each message's length and bytes follow from
    /// its sequence number, so the consumer knows exactly what it must receive: every message in order,
    /// whole, or −1 for exactly those longer than 64 bytes. (A side that finds the ring full or empty spins
    /// a little, then sleeps: on a loaded machine the other side may be off the CPU for a while — in
    /// `make test` beside other builds, yielding instead, a million messages took 885 s and 200,000 took
    /// 580 s; the single-thread test covers every split.)
    @Test func twoThreadsCarryManyMessagesAcrossWrapAround() {
        let ring = SPSCByteRing(minimumCapacity: 4096)
        defer { ring.deallocate() }
        let total = 200_000
        let maximumLength = 100
        let scratchSize = 64
        let producerDone = Flag()
        let producer = TestThread {
            defer { producerDone.value.store(true, ordering: .releasing) }
            let message = UnsafeMutableRawPointer.allocate(byteCount: maximumLength, alignment: 8)
            defer { message.deallocate() }
            for sequence in 0..<total {
                let length = Self.length(of: sequence, maximumLength: maximumLength)
                Self.fill(message, sequence: sequence, count: length)
                var waiting = Waiting()
                while !ring.write(message, size: length) {
                    guard waiting.pause() else { return }
                }
            }
        }
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchSize, alignment: 8)
        defer { scratch.deallocate() }
        var wrongLength = 0
        var wrongBytes = 0
        var refused = 0
        var sequence = 0
        var waiting = Waiting()
        while sequence < total {
            // Half the reads look at the size first, as the LV2 worker does.
            if sequence & 1 == 0, let size = ring.peekSize(),
                size != Self.length(of: sequence, maximumLength: maximumLength)
            {
                wrongLength += 1
            }
            guard let size = ring.read(into: scratch, scratchSize: scratchSize) else {
                if waiting.pause() { continue } else { break }
            }
            waiting = Waiting()
            let length = Self.length(of: sequence, maximumLength: maximumLength)
            if size == -1 {
                refused += 1
                if length <= scratchSize { wrongLength += 1 }
            } else if size != length {
                wrongLength += 1
            } else if !Self.matches(scratch, sequence: sequence, count: size) {
                wrongBytes += 1
            }
            sequence += 1
        }
        // Whatever is still in the ring was never sent (a broken ring can make the reader see fewer messages,
        // or more): drained, so the producer never waits on a full ring forever, and counted.
        var extra = 0
        while !producerDone.value.load(ordering: .acquiring) {
            if ring.read(into: scratch, scratchSize: scratchSize) != nil {
                extra += 1
            } else if !waiting.pause() {
                break
            }
        }
        while extra < total, ring.read(into: scratch, scratchSize: scratchSize) != nil { extra += 1 }
        producer.join()
        #expect(sequence == total, "the reader waited 10 s for a message")
        #expect(extra == 0)
        #expect(wrongLength == 0)
        #expect(wrongBytes == 0)
        #expect(
            refused == (0..<total).count(where: { Self.length(of: $0, maximumLength: maximumLength) > scratchSize }))
        #expect(refused > total / 4)
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }
}

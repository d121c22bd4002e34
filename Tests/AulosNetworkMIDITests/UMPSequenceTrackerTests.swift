import Testing

@testable import AulosNetworkMIDI

/// The UMP data sequence rules without a network: copies, gaps, their requests and giving up.
@Suite struct UMPSequenceTrackerTests {
    @Test func copiesAreTakenOnceAcrossTheWrap() {
        var tracker = UMPSequenceTracker()
        #expect(tracker.receive(0xFFFE, [1], now: 0).deliver == [[1]])
        #expect(tracker.receive(0xFFFE, [1], now: 0).deliver.isEmpty)
        #expect(tracker.receive(0xFFFF, [2], now: 0).deliver == [[2]])
        #expect(tracker.receive(0, [3], now: 0).deliver == [[3]])
        #expect(tracker.duplicates == 1)
        #expect(tracker.requestNewGap(now: 0) == nil)
    }

    @Test func aGapIsAskedForAfterTheDatagramAndFilledInOrder() {
        var tracker = UMPSequenceTracker()
        _ = tracker.receive(10, [10], now: 0)
        #expect(tracker.receive(13, [13], now: 0).deliver.isEmpty)
        #expect(tracker.receive(12, [12], now: 0).deliver.isEmpty)
        let request = tracker.requestNewGap(now: 0)
        #expect(request?.sequence == 11 && request?.count == 1)
        #expect(tracker.requestNewGap(now: 0) == nil)  // asked once; the tick asks again
        #expect(tracker.receive(11, [11], now: 5).deliver == [[11], [12], [13]])
        #expect(tracker.recoveredByRetransmit == 1)
        #expect(!tracker.hasGap)
    }

    @Test func anUnfilledGapIsGivenUpAfterItsAttempts() {
        var tracker = UMPSequenceTracker()
        _ = tracker.receive(0, [0], now: 0)
        _ = tracker.receive(3, [3], now: 0)
        _ = tracker.requestNewGap(now: 0)
        #expect(tracker.tick(now: 10, timeout: 50, attempts: 2).request == nil)  // not yet
        #expect(tracker.tick(now: 50, timeout: 50, attempts: 2).request?.sequence == 1)
        let outcome = tracker.tick(now: 100, timeout: 50, attempts: 2)
        #expect(outcome.gaveUp && outcome.deliver == [[3]])
        #expect(tracker.lost == 2)
        #expect(tracker.receive(4, [4], now: 100).deliver == [[4]])
    }

    @Test func heldBackCommandsAreBounded() {
        var tracker = UMPSequenceTracker()
        _ = tracker.receive(0, [0], now: 0)
        var gaveUp = false
        for sequence in 2...UInt16(NetworkMIDILimits.maximumPendingUMPCommands + 2) {
            gaveUp = gaveUp || tracker.receive(sequence, [UInt32(sequence)], now: 0).gaveUp
        }
        #expect(gaveUp)
        #expect(tracker.pending.isEmpty)
        #expect(tracker.lost == 1)
    }
}

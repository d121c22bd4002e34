import AulosCore
import AulosMIDI
import AulosTestSupport
import Synchronization
import Testing

/// A simulated sound card and MIDI source for the live placement: a device whose crystal runs `ppm` off
/// nominal, an I/O thread that wakes once per period with random scheduling jitter, and MIDI events arriving
/// at random moments. Everything is in ns of a simulated CLOCK_MONOTONIC.
struct SimulatedLiveClock {
    let sampleRate: Double
    let period: Int
    let ppm: Double
    let jitterNanos: Double
    var random: SeededRandom

    /// The true host time of sample frame `frame` (the device's clock).
    func trueNanos(ofFrame frame: Double) -> Double { 5e9 + frame / (sampleRate * (1 + ppm * 1e-6)) * 1e9 }
    func trueFrame(atNanos nanos: Double) -> Double { (nanos - 5e9) / 1e9 * sampleRate * (1 + ppm * 1e-6) }

    /// When the I/O thread wakes for the period starting at `frame`: the device interrupt (a period after
    /// the previous one was consumed) plus scheduling jitter, never early.
    mutating func wakeNanos(forFrame frame: Int64) -> Int64 {
        Int64(trueNanos(ofFrame: Double(frame)) + Double.random(in: 0...jitterNanos, using: &random))
    }
}

nonisolated(unsafe) let sharedUnusedBuffers = UnsafeMutablePointer<AulosBufferList>.allocate(capacity: 1)

/// Drives a `LiveMIDIInput`'s render notification slice by slice and collects where each event landed.
struct LivePlacementHarness {
    let queue = MIDIEventQueue(capacity: 4096)
    let input: LiveMIDIInput
    let period: Int
    /// The notification ignores the buffers; the callback type still wants a pointer (one for all).
    var unusedBuffers: UnsafeMutablePointer<AulosBufferList> { sharedUnusedBuffers }

    init(sampleRate: Double = 48_000, period: Int, placement: LiveMIDIPlacement = .constantLatency) {
        self.period = period
        input = LiveMIDIInput(destinations: [queue], sampleRate: sampleRate, periodFrames: period, placement: placement)
    }

    /// Renders one slice; returns the absolute frames of the events delivered in it (by their data1).
    func slice(at frame: Int64, hostNanos: Int64?) -> [(note: UInt8, frame: Int64)] {
        var flags = RenderActionFlags.preRender
        var stamp = AudioTimeStamp(sampleTime: frame, hostTime: hostNanos.map { UInt64($0) })
        let notify = input.renderNotify
        _ = notify.callback(notify.refCon, &flags, &stamp, 0, UInt32(period), unusedBuffers)
        var landed: [(UInt8, Int64)] = []
        while let event = queue.list.popDue(at: Int.max) { landed.append((event.data1, frame + Int64(event.offset))) }
        queue.list.endSlice(frameCount: period)
        return landed
    }
}

@Suite struct LiveMIDIPlacementTests {
    /// The heart of jitter-free live input: with a device 80 ppm fast, the I/O thread waking up to 50 µs
    /// late (a real-time thread on a quiet machine) or up to 200 µs late (a loaded one), and events arriving
    /// anywhere, every event sounds the same time after it arrived: within one frame, or 1.5 under the
    /// heavy jitter (±0.5 of that is rounding to whole frames).
    @Test(arguments: [(64, 50.0), (256, 50.0), (1024, 50.0), (64, 200.0), (256, 200.0), (1024, 200.0)])
    func eventsLandAConstantLatencyAfterArrival(period: Int, jitterMicroseconds: Double) {
        var clock = SimulatedLiveClock(
            sampleRate: 48_000, period: period, ppm: 80, jitterNanos: jitterMicroseconds * 1000,
            random: SeededRandom(seed: UInt64(period)))
        let harness = LivePlacementHarness(period: period)
        var arrivals: [Double] = []  // true frame at arrival, by note index
        var errors: [Double] = []
        var nextArrival = clock.trueNanos(ofFrame: 100)
        var frame: Int64 = 0
        let slices = Int(60 * 48_000 / period)
        for _ in 0..<slices {
            let wake = clock.wakeNanos(forFrame: frame)
            // Everything that arrived before the I/O thread woke is in the queue for this slice.
            while nextArrival < Double(wake) {
                harness.input.send(
                    LiveMIDIEvent(
                        arrivalNanos: Int64(nextArrival), destination: 0, status: 0x90,
                        data1: UInt8(arrivals.count % 128), data2: 100))
                arrivals.append(clock.trueFrame(atNanos: nextArrival))
                nextArrival += Double.random(in: 1e6...40e6, using: &clock.random)
            }
            for (_, landed) in harness.slice(at: frame, hostNanos: wake) {
                let index = errors.count
                errors.append(Double(landed) - arrivals[index])
            }
            frame += Int64(period)
        }
        #expect(errors.count > 2000)
        // Only while the loop locks on (its margin still growing) can an event be late.
        #expect(harness.input.lateCount <= 3)
        // After the loop has locked and narrowed (the first ten seconds): latency = one period plus at most the
        // wake-up jitter, the same for every event.
        let settled = Array(errors.dropFirst(errors.count / 6))
        let mean = settled.reduce(0, +) / Double(settled.count)
        let spread = settled.map { abs($0 - mean) }.max()!
        let jitterFrames = jitterMicroseconds * 1e-6 * 48_000
        #expect(
            mean >= Double(period) - 1 && mean <= Double(period) + jitterFrames + 1,
            "mean latency \(mean) frames, period \(period)")
        #expect(spread <= (jitterMicroseconds > 100 ? 1.5 : 1.0), "jitter ±\(spread) frames around \(mean)")
        print(
            "placement, period \(period), wake jitter \(Int(jitterMicroseconds)) µs: latency "
                + "\(String(format: "%.2f", mean)) frames, jitter ±\(String(format: "%.2f", spread)) frames, "
                + "\(harness.input.lateCount) late of \(errors.count)"
        )
    }

    /// Lowest-latency mode: whatever is queued plays at the start of the next slice.
    @Test func lowestLatencyDeliversAtTheSliceStart() {
        let harness = LivePlacementHarness(period: 256, placement: .lowestLatency)
        _ = harness.slice(at: 0, hostNanos: 1_000_000_000)
        harness.input.send(
            LiveMIDIEvent(arrivalNanos: 1_002_000_000, destination: 0, status: 0x90, data1: 60, data2: 1))
        harness.input.send(
            LiveMIDIEvent(arrivalNanos: 1_004_000_000, destination: 0, status: 0x90, data1: 61, data2: 1))
        let landed = harness.slice(at: 256, hostNanos: 1_005_333_333)
        #expect(landed.map(\.frame) == [256, 257], "same-frame events spread a frame apart in arrival order")
        #expect(harness.input.lateCount == 0)
    }

    /// Offline (no host time on the slices): events play at the next slice start, not lost.
    @Test func slicesWithoutHostTimeDeliverAtOnce() {
        let harness = LivePlacementHarness(period: 128)
        harness.input.send(LiveMIDIEvent(arrivalNanos: 123, destination: 0, status: 0x90, data1: 60, data2: 1))
        #expect(harness.slice(at: 0, hostNanos: nil).map(\.frame) == [0])
    }

    /// An event that reaches the render thread after its frame (the MIDI thread stalled) plays at once
    /// and is counted, with how late it was.
    @Test func staleEventsAreLateAndCounted() {
        let harness = LivePlacementHarness(period: 256)
        let nanosPerPeriod = 256.0 / 48_000 * 1e9
        for index in 0..<10 {
            _ = harness.slice(at: Int64(index * 256), hostNanos: Int64(1e9 + Double(index) * nanosPerPeriod))
        }
        // Arrived during slice 2, delivered only now at slice 10: its frame (2×256 + 256) is long gone.
        harness.input.send(
            LiveMIDIEvent(
                arrivalNanos: Int64(1e9 + 2 * nanosPerPeriod), destination: 0, status: 0x90, data1: 60, data2: 1))
        let landed = harness.slice(at: 2560, hostNanos: Int64(1e9 + 10 * nanosPerPeriod))
        #expect(landed.map(\.frame) == [2560])
        #expect(harness.input.lateCount == 1)
        #expect(harness.input.worstLateFrames >= 2560 - 768 - 1)
    }

    /// Events that arrive long before the render thread sees them (the device was away for a second):
    /// the note-on is dropped as stale, its note-off and the pedal still apply.
    @Test func longOverdueNoteOnsAreDroppedButNoteOffsApply() {
        let harness = LivePlacementHarness(period: 256)
        let nanosPerPeriod = 256.0 / 48_000 * 1e9
        for index in 0..<10 {
            _ = harness.slice(at: Int64(index * 256), hostNanos: Int64(1e9 + Double(index) * nanosPerPeriod))
        }
        for (status, data1, data2) in [
            (UInt8(0x90), UInt8(60), UInt8(100)), (0x80, 60, 0), (0xB0, 64, 0), (0x90, 62, 0),
        ] {
            harness.input.send(
                LiveMIDIEvent(
                    arrivalNanos: Int64(1e9 + 10 * nanosPerPeriod), destination: 0, status: status, data1: data1,
                    data2: data2))
        }
        // The device returns 1.2 s later (slices resume where they stopped): the events are 1.2 s overdue.
        let back = Int64(1e9 + 10 * nanosPerPeriod + 1.2e9)
        let landed = harness.slice(at: 2560, hostNanos: back)
        #expect(landed.map(\.note).sorted() == [60, 62, 64])  // the note-off, the velocity-0 note-on, the pedal
        #expect(harness.input.staleCount == 1)
    }

    /// Events due beyond this slice wait for theirs (the wake-up came early relative to the clock line).
    @Test func eventsDueLaterWaitForTheirSlice() {
        let harness = LivePlacementHarness(period: 256)
        let nanosPerPeriod = 256.0 / 48_000 * 1e9
        _ = harness.slice(at: 0, hostNanos: 1_000_000_000)
        // Arrives 1.5 periods after frame 0's wake: frame 384 + 256 latency = 640, in the slice at 512.
        harness.input.send(
            LiveMIDIEvent(
                arrivalNanos: Int64(1e9 + 1.5 * nanosPerPeriod), destination: 0, status: 0x90, data1: 60, data2: 1))
        #expect(harness.slice(at: 256, hostNanos: Int64(1e9 + nanosPerPeriod)).isEmpty)
        let landed = harness.slice(at: 512, hostNanos: Int64(1e9 + 2 * nanosPerPeriod))
        #expect(landed.count == 1 && abs(landed[0].frame - 640) <= 1)
    }

    /// Network MIDI is stamped with the time it should be heard, a playout latency ahead of now; a keyboard
    /// played meanwhile arrives after it but is due before it. Each lands on its own frame: the keyboard's
    /// note is not held behind the network's, nor the network's moved.
    @Test func aScheduledEventAheadDoesNotHoldBackAKeyboard() {
        let harness = LivePlacementHarness(period: 256)
        let nanosPerPeriod = 256.0 / 48_000 * 1e9
        _ = harness.slice(at: 0, hostNanos: 1_000_000_000)
        // To be heard 3 periods after frame 0's wake: frame 768 + 256 latency = 1024.
        harness.input.sendScheduled(
            .routed(
                ChannelMessage(status: 0x90, data1: 61, data2: 1), from: MIDISource(rawValue: 7),
                arrivalNanos: Int64(1e9 + 3 * nanosPerPeriod)))
        // Then a key, arriving half a period after frame 0's wake: frame 128 + 256 = 384.
        harness.input.send(
            LiveMIDIEvent(
                arrivalNanos: Int64(1e9 + 0.5 * nanosPerPeriod), destination: 0, status: 0x90, data1: 60, data2: 1))
        var landed: [(note: UInt8, frame: Int64)] = []
        for period in 1...4 {
            landed += harness.slice(at: Int64(period * 256), hostNanos: Int64(1e9 + Double(period) * nanosPerPeriod))
        }
        #expect(landed.count == 2)
        #expect(landed.first { $0.note == 60 }.map { abs($0.frame - 384) <= 1 } == true)
        #expect(landed.first { $0.note == 61 }.map { abs($0.frame - 1024) <= 1 } == true)
        #expect(harness.input.lateCount == 0)
    }

    /// The clock follows a discontinuity (an xrun, a reopened device) by starting over, not by drifting,
    /// and keeps the jitter margin it learnt (the machine did not change).
    @Test func theClockRestartsAfterADiscontinuity() {
        var clock = MIDIPlacementClock(sampleRate: 48_000, periodFrames: 256)
        var random = SeededRandom(seed: 7)
        let nanosPerPeriod = 256 / 48_000.0 * 1e9
        for index in 0..<2000 {
            clock.update(
                frame: Int64(index * 256),
                hostNanos: Int64(Double(index) * nanosPerPeriod + Double.random(in: 0...100_000, using: &random)))
        }
        let margin = clock.marginNanos
        #expect(margin > 20_000 && margin < 100_000)
        let late = Int64(2000 * nanosPerPeriod + 50e6)  // 50 ms late: an xrun
        clock.update(frame: 2000 * 256, hostNanos: late)
        #expect(clock.resets == 1)
        #expect(clock.marginNanos == margin)
        #expect(abs(clock.frame(atNanos: late) - (512_000 + margin / 1e9 * 48_000)) < 0.01)
    }

    @Test func placementAllocatesNothing() throws {
        let harness = LivePlacementHarness(period: 64)
        let nanosPerPeriod = 64.0 / 48_000 * 1e9
        var tally = AllocationTally()
        var flags = RenderActionFlags.preRender
        let notify = harness.input.renderNotify
        let buffers = harness.unusedBuffers  // a global made on first use: not inside the count
        for cycle in 0..<10_000 {
            harness.input.send(
                LiveMIDIEvent(
                    arrivalNanos: Int64(1e9 + (Double(cycle) - 0.5) * nanosPerPeriod), destination: 0,
                    status: 0x90, data1: 60, data2: 1))
            var stamp = AudioTimeStamp(
                sampleTime: Int64(cycle * 64), hostTime: UInt64(1e9 + Double(cycle) * nanosPerPeriod))
            tally.count {
                _ = notify.callback(notify.refCon, &flags, &stamp, 0, 64, buffers)
                while harness.queue.list.popDue(at: Int.max) != nil {}
                harness.queue.list.endSlice(frameCount: 64)
            }
        }
        #expect(harness.input.deliveredCount == 10_000)
        try expectNoAllocations(tally)
    }
}

/// The MIDI thread and the render thread at once (run under ThreadSanitizer by `make tsan`): everything
/// sent arrives, in order, nothing is torn.
@Suite struct LiveMIDIThreadingTests {
    @Test func aMIDIThreadAndARenderThreadShareTheInput() {
        let harness = LivePlacementHarness(period: 64, placement: .lowestLatency)
        let total = 20_000
        let finished = Atomic<Bool>(false)
        let producer = TestThread {
            var sent = 0
            while sent < total {
                // Note-offs: with these made-up arrival times a note-on would be long overdue and dropped.
                if harness.input.send(
                    LiveMIDIEvent(
                        arrivalNanos: Int64(sent), destination: 0, status: 0x80,
                        data1: UInt8(sent % 128), data2: 1))
                {
                    sent += 1
                }
            }
            finished.store(true, ordering: .releasing)
        }
        var received: [UInt8] = []
        var frame: Int64 = 0
        var idleAfterFinish = 0
        while received.count < total && idleAfterFinish < 10 {
            let landed = harness.slice(at: frame, hostNanos: Int64(frame) * 20_833).map(\.note)
            if landed.isEmpty && finished.load(ordering: .acquiring) { idleAfterFinish += 1 }
            received += landed
            frame += 64
            _ = harness.input.sampleTime(atNanos: 0)  // the published clock line, read across threads
        }
        producer.join()
        #expect(received.count == total)
        #expect(received == (0..<total).map { UInt8($0 % 128) })
        #expect(harness.input.deliveredCount == total)
    }
}

import AulosCore
import AulosMIDI
import AulosTestSupport
import Testing

nonisolated(unsafe) let clockHarnessBuffers = UnsafeMutablePointer<AulosBufferList>.allocate(capacity: 1)

/// The transport and the clock output driven slice by slice with host times, as the ALSA unit would.
struct ClockOutputHarness {
    let transport: HostTransport
    let output: MIDIClockOutput
    /// The notifications ignore the buffers; the callback type still wants a pointer (one for all).
    var buffers: UnsafeMutablePointer<AulosBufferList> { clockHarnessBuffers }
    var frame: Int64 = 0
    let slice: UInt32 = 256

    init(tempo: Double) {
        transport = HostTransport(sampleRate: 48_000, tempoMap: [(0, tempo)])
        output = MIDIClockOutput(host: transport.callbacks, sampleRate: 48_000, periodFrames: 256)
    }

    /// One slice heard at 1 s + frame / 48 kHz; returns what the clock output queued.
    mutating func render() -> [MIDIClockEvent] {
        var stamp = AudioTimeStamp(sampleTime: frame, hostTime: UInt64(1e9 + Double(frame) / 48_000 * 1e9))
        var pre = RenderActionFlags.preRender
        var post = RenderActionFlags.postRender
        for notify in [transport.renderNotify, output.renderNotify] {
            _ = notify.callback(notify.refCon, &pre, &stamp, 0, slice, buffers)
        }
        _ = transport.renderNotify.callback(transport.renderNotify.refCon, &post, &stamp, 0, slice, buffers)
        frame += Int64(slice)
        var events: [MIDIClockEvent] = []
        while let event = output.pop() { events.append(event) }
        return events
    }
}

@Suite struct MIDIClockOutputTests {
    /// 120 BPM: Start at beat 0, then a tick every 1/48 s exactly, stamped with when its beat is heard.
    @Test func ticksFollowTheTempoAndTheAudioClock() {
        var harness = ClockOutputHarness(tempo: 120)
        harness.transport.play()
        var events: [MIDIClockEvent] = []
        for _ in 0..<375 { events += harness.render() }  // 2 s
        #expect(events.first?.status == 0xFA)
        let ticks = events.filter { $0.status == 0xF8 }
        #expect(ticks.count == 96)  // 2 s × 2 beats × 24
        for (index, tick) in ticks.enumerated() {
            #expect(abs(Double(tick.hostNanos) - (1e9 + Double(index) * 1e9 / 48)) < 1_000, "tick \(index)")
        }
    }

    /// Stop sends Stop; playing again from beat 3 sends Song Position (sixteenth 12) and Continue, and the
    /// ticks resume from there.
    @Test func stopAndContinueFromASongPosition() {
        var harness = ClockOutputHarness(tempo: 90)
        harness.transport.play()
        for _ in 0..<100 { _ = harness.render() }
        harness.transport.stop()
        let stopped = harness.render()
        #expect(stopped.map(\.status) == [0xFC])
        #expect(harness.render().isEmpty)
        harness.transport.locate(beat: 3)
        harness.transport.play()
        let resumed = harness.render()
        #expect(resumed.prefix(2).map(\.status) == [0xF2, 0xFB])
        #expect(resumed.first.map { Int($0.data1) | Int($0.data2) << 7 } == 12)
        #expect(resumed.dropFirst(2).allSatisfy { $0.status == 0xF8 } && resumed.count >= 3)
    }

    /// The transport's and the clock output's notifications allocate nothing over 10,000 slices of ticks,
    /// stops and restarts (the MIDI thread's side, popping, is not the render thread).
    @Test func rendersWithoutAllocating() throws {
        let harness = ClockOutputHarness(tempo: 140)
        let transport = harness.transport.renderNotify
        let output = harness.output.renderNotify
        let buffers = harness.buffers  // a global made on first use: not inside the count
        harness.transport.play()
        var tally = AllocationTally()
        var sent = 0
        for cycle in 0..<10_000 {
            if cycle % 1000 == 500 { harness.transport.stop() }
            if cycle % 1000 == 600 { harness.transport.play() }
            let frame = Int64(cycle * 256)
            var stamp = AudioTimeStamp(sampleTime: frame, hostTime: UInt64(1e9 + Double(frame) / 48_000 * 1e9))
            var pre = RenderActionFlags.preRender
            var post = RenderActionFlags.postRender
            tally.count {
                _ = transport.callback(transport.refCon, &pre, &stamp, 0, 256, buffers)
                _ = output.callback(output.refCon, &pre, &stamp, 0, 256, buffers)
                _ = transport.callback(transport.refCon, &post, &stamp, 0, 256, buffers)
            }
            while harness.output.pop() != nil { sent += 1 }
        }
        #expect(sent > 2000)  // 53 s at 140 BPM, a tenth of it stopped: about 2,700 ticks plus starts/stops
        try expectNoAllocations(tally)
    }
}

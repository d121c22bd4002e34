import AulosCore
import AulosGraph
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A test unit that asks the host, on every render, for beat/tempo, musical time and transport state, and
/// logs the answers (render side, preallocated).
final class HostProbeUnit: AudioUnit, @unchecked Sendable {
    struct Entry: BitwiseCopyable {
        var status: Int32 = 0
        var beat = 0.0
        var tempo = 0.0
        var delta: UInt32 = 0
        var downbeat = 0.0
        var playing: UInt8 = 0
        var sample = 0.0
    }

    let log = UnsafeMutablePointer<Entry>.allocate(capacity: 100_000)
    let count = UnsafeMutablePointer<Int>.allocate(capacity: 1)

    init() {
        count.initialize(to: 0)
        super.init(
            description: ComponentDescription(type: .generator, subtype: "hprb", manufacturer: "Test"),
            name: "Test: Host Probe",
            inputs: 0, outputs: 1)
    }

    deinit {
        log.deallocate()
        count.deallocate()
    }

    var entries: [Entry] { Array(UnsafeBufferPointer(start: log, count: count.pointee)) }

    override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        UnitKernel.make(
            HostProbeKernel(host: hostCallbackInfo!, log: log, count: count), render: HostProbeKernel.render)
    }
}

struct HostProbeKernel {
    let host: HostCallbackInfo
    let log: UnsafeMutablePointer<HostProbeUnit.Entry>
    let count: UnsafeMutablePointer<Int>

    static let render: KernelRenderFunction = { state, _, _, _, _, frames, io in
        let kernel = state.assumingMemoryBound(to: HostProbeKernel.self).pointee
        io.pointee.zeroFill()
        var entry = HostProbeUnit.Entry()
        entry.status = kernel.host.beatAndTempo!(kernel.host.hostUserData, &entry.beat, &entry.tempo)
        _ = kernel.host.musicalTimeLocation!(kernel.host.hostUserData, &entry.delta, nil, nil, &entry.downbeat)
        _ = kernel.host.transportState!(
            kernel.host.hostUserData, &entry.playing, nil, nil, &entry.sample, nil, nil, nil)
        kernel.log[kernel.count.pointee] = entry
        kernel.count.pointee += 1
        return 0
    }
}

/// Generic Output ← host probe, with a transport.
func probeRig(_ transport: HostTransport, slice: UInt32) throws -> (AudioGraph, HostProbeUnit) {
    let registry = BuiltInUnits.registry()
    registry.register(
        Component(ComponentDescription(type: .generator, subtype: "hprb", manufacturer: "Test"), name: "probe") {
            HostProbeUnit()
        })
    let graph = AudioGraph(registry: registry)
    let output = try graph.addNode(GenericOutputUnit.componentDescription)
    let node = try graph.addNode(ComponentDescription(type: .generator, subtype: "hprb", manufacturer: "Test"))
    graph.open()
    let probe = try graph.unit(for: node) as! HostProbeUnit
    for id in [output, node] { try graph.unit(for: id).set(.maximumFramesPerSlice, slice) }
    try probe.set(.hostCallbacks, transport.callbacks)
    try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
    try graph.addRenderNotify(transport.renderNotify)
    try graph.initialize()
    try graph.start()
    return (graph, probe)
}

/// Renders slices of these sizes from sample 0.
func pull(_ graph: AudioGraph, slices: [UInt32]) {
    let harness = RenderHarness(graph.renderEntry!)
    for frames in slices { harness.renderSlice(frames) }
}

/// The host's beat, tempo and transport as units see them through the host callbacks, and an external MIDI
/// clock followed.
@Suite struct HostTimeTests {
    /// 120 BPM for 4 beats (96,000 frames), then 90 BPM: the beat at each slice's first frame is exact.
    func expectedBeat(atSample sample: Double) -> (Double, Double) {
        sample < 96_000 ? (sample * 120 / 60 / 48_000, 120) : (4 + (sample - 96_000) * 90 / 60 / 48_000, 90)
    }

    @Test(arguments: [
        [UInt32](repeating: 64, count: 3000), [UInt32](repeating: 1000, count: 200),
        (0..<800).map { UInt32(17 + ($0 * 37) % 400) },
    ])
    func beatAndTempoAtTheFirstFrameOfEverySlice(slices: [UInt32]) throws {
        let transport = HostTransport(sampleRate: 48_000, tempoMap: [(0, 120), (4, 90)])
        let (graph, probe) = try probeRig(transport, slice: 4096)
        transport.play()
        pull(graph, slices: slices)
        var start = 0.0
        for (index, entry) in probe.entries.enumerated() {
            let (beat, tempo) = expectedBeat(atSample: start)
            #expect(entry.status == 0)
            #expect(abs(entry.beat - beat) < 1e-9, "slice \(index)")
            #expect(entry.tempo == tempo)
            #expect(entry.sample == start)
            #expect(entry.playing == 1)
            // Frames to the next beat, rounded up; the current measure's downbeat in 4/4.
            let frameToNext = (ceil(beat - 1e-12) - beat) * 60 / tempo * 48_000
            #expect(abs(Double(entry.delta) - frameToNext.rounded(.up)) <= 1, "slice \(index)")
            #expect(entry.downbeat == floor(beat / 4) * 4)
            start += Double(slices[index])
        }
    }

    @Test func callbacksOutsideRenderAreRefused() throws {
        let transport = HostTransport(sampleRate: 48_000)
        let callbacks = transport.callbacks
        var beat = 0.0
        #expect(callbacks.beatAndTempo!(callbacks.hostUserData, &beat, nil) == -10863)
        var playing: UInt8 = 0
        #expect(callbacks.transportState!(callbacks.hostUserData, &playing, nil, nil, nil, nil, nil, nil) == -10863)
        #expect(callbacks.musicalTimeLocation!(callbacks.hostUserData, nil, nil, nil, nil) == -10863)
        // And after a render cycle, again refused.
        let (graph, _) = try probeRig(transport, slice: 256)
        pull(graph, slices: [256])
        #expect(callbacks.beatAndTempo!(callbacks.hostUserData, &beat, nil) == -10863)
    }

    @Test func transportStopsLocatesCyclesAndReports() throws {
        let transport = HostTransport(sampleRate: 48_000)
        var changes: [TransportChange] = []
        transport.addListener { changes.append($0) }
        let (graph, probe) = try probeRig(transport, slice: 1000)
        pull(graph, slices: [1000])  // stopped: beat stays 0
        transport.play()
        pull(graph, slices: [1000, 1000])
        transport.stop()
        pull(graph, slices: [1000, 1000])
        transport.locate(beat: 8)
        transport.handle(.continue)
        pull(graph, slices: [1000])
        transport.handle(.systemExclusive([0x7F, 0x7F, 0x06, 0x05]))  // MMC rewind
        transport.setCycle(startBeat: 0, endBeat: 0.25)  // 6,000 frames
        pull(graph, slices: [Array(repeating: UInt32(1000), count: 8)].flatMap { $0 })
        transport.dispatchChanges()
        let beats = probe.entries.map(\.beat)
        #expect(beats[0] == 0 && beats[1] == 0)
        #expect(abs(beats[2] - 1000.0 / 24_000) < 1e-12)
        #expect(beats[3] == beats[4] && beats[4] == 2000.0 / 24_000)  // stopped
        #expect(beats[5] == 8)
        #expect(beats[6] == 0)
        #expect(beats[12] == 0)  // wrapped at the cycle end (6,000 frames) back to beat 0
        // The first report is the initial (stopped) state; then play, stop, and the later moves.
        #expect(changes.first?.isPlaying == false)
        #expect(changes.contains { $0.isPlaying })
        #expect(changes.count >= 4)
    }

    /// "tempo 90" in live play is the session's tempo: after a rewind the transport still plays at 90 (it read
    /// the rig's 100 again while the change was written into the map at the beat where it was made), and
    /// the beat where the transport stood goes on without a jump. A change from here on keeps the map before.
    @Test func aTempoThroughoutHoldsAfterARewindAndKeepsTheBeat() throws {
        for throughout in [true, false] {
            let transport = HostTransport(sampleRate: 48_000, tempoMap: [(0, 100)])
            let (graph, probe) = try probeRig(transport, slice: 1000)
            transport.play()
            pull(graph, slices: [1000, 1000, 1000])
            if throughout { transport.setTempoThroughout(90) } else { transport.setTempo(90) }
            pull(graph, slices: [1000])
            transport.rewind()
            pull(graph, slices: [1000, 1000])
            let entries = probe.entries
            // Three slices at 100 BPM: beat 3,000 × 100 / 60 / 48,000 = 0.104166…; the fourth starts there (to
            // within a sample at the new tempo: the position moves to a whole sample).
            #expect(abs(entries[3].beat - 3000.0 * 100 / 60 / 48_000) <= 90.0 / 60 / 48_000)
            #expect(entries[3].tempo == 90)
            #expect(entries[4].beat == 0)
            #expect(entries[5].tempo == (throughout ? 90 : 100))
            #expect(abs(entries[5].beat - 1000.0 * (throughout ? 90 : 100) / 60 / 48_000) < 1e-9)
        }
    }

    @Test func midiStartStopContinueAndMachineControl() throws {
        let transport = HostTransport(sampleRate: 48_000)
        let (graph, probe) = try probeRig(transport, slice: 480)
        transport.handle(.songPosition(16))  // beat 4
        transport.handle(.continue)
        pull(graph, slices: [480])
        transport.handle(.systemExclusive([0x7F, 0x7F, 0x06, 0x01]))  // MMC stop
        pull(graph, slices: [480, 480])
        transport.handle(.systemExclusive([0x7F, 0x7F, 0x06, 0x02]))  // MMC play
        pull(graph, slices: [480])
        transport.handle(.start)  // from the top
        pull(graph, slices: [480])
        let entries = probe.entries
        #expect(entries[0].beat == 4 && entries[0].playing == 1)
        #expect(entries[1].playing == 0 && entries[2].beat == entries[1].beat)
        #expect(entries[3].playing == 1)
        #expect(entries[4].beat == 0)
    }

    /// ±1 ms of uniform jitter on every tick, at a slow, a middling and a fast tempo, 20 seeded runs each:
    /// from the fifth beat on, the follower's beat boundaries stay within 1 ms of the true clock's and its
    /// tempo within 0.1 BPM.
    @Test(arguments: [60.0, 128.0, 240.0])
    func clockFollowingLocksPhaseAndTempoUnderJitter(bpm: Double) {
        for seed in UInt64(1)...20 {
            var generator = SeededRandom(seed: seed)
            var follower = MIDIClockFollower()
            let tick = 60 / (bpm * 24)
            follower.receive(.start, at: 0)
            var worstPhase = 0.0
            var worstTempo = 0.0
            for k in 0..<(24 * 16) {
                let exact = Double(k) * tick
                follower.receive(.timingClock, at: exact + Double.random(in: -0.001...0.001, using: &generator))
                guard k >= 96, let line = follower.line else { continue }
                // Where does the follower put this beat position? Compare with the true clock.
                let beatNow = Double(k) / 24
                let predicted = line.origin + (beatNow - line.startBeat) * 24 * line.secondsPerTick
                worstPhase = max(worstPhase, abs(predicted - exact))
                worstTempo = max(worstTempo, abs(line.tempo - bpm))
            }
            #expect(worstPhase < 0.001, "seed \(seed): phase error \(worstPhase * 1000) ms")
            #expect(worstTempo < 0.1, "seed \(seed): tempo error \(worstTempo) BPM")
            if seed == 1 {
                print(
                    "clock following at \(bpm) BPM: worst phase \(worstPhase * 1000) ms, worst tempo \(worstTempo) BPM")
            }
        }
    }

    /// A clock that jumps from 120 to 140 BPM is followed: two and a half seconds after the change (the
    /// window's two seconds plus a beat) the estimate is within 0.1 BPM of the new tempo.
    @Test func clockFollowingTracksATempoChange() {
        var generator = SeededRandom(seed: 7)
        var follower = MIDIClockFollower()
        follower.receive(.start, at: 0)
        var time = 0.0
        for _ in 0..<(24 * 8) {
            follower.receive(.timingClock, at: time + Double.random(in: -0.001...0.001, using: &generator))
            time += 60 / (120.0 * 24)
        }
        #expect(abs(follower.tempo! - 120) < 0.1)
        let change = time
        while time < change + 2.5 {
            follower.receive(.timingClock, at: time + Double.random(in: -0.001...0.001, using: &generator))
            time += 60 / (140.0 * 24)
        }
        #expect(abs(follower.tempo! - 140) < 0.1, "tempo \(follower.tempo!)")
    }

    @Test func transportFollowsTheClock() throws {
        let transport = HostTransport(sampleRate: 48_000)
        let (graph, probe) = try probeRig(transport, slice: 480)
        let tick = 60.0 / (100 * 24)  // 100 BPM
        transport.receiveClock(.start, at: 0)
        for k in 0..<200 { transport.receiveClock(.timingClock, at: Double(k) * tick) }
        pull(graph, slices: [480])
        let entry = probe.entries[0]
        #expect(abs(entry.tempo - 100) < 0.01)
        #expect(abs(entry.beat - 0) < 1e-6)  // sample 0 = the first tick = beat 0
        #expect(abs(transport.followedTempo! - 100) < 0.01)
    }

    /// Found by an audit: ticks stamped at the same instant (a control-socket request `midi FA F8 F8`, or
    /// one sequencer timestamp for a burst) fitted a slope of zero, an infinite tempo and beat, and the
    /// render thread trapped converting the beat to Int64; a clock resumed after an hour overflowed the
    /// frames to the next beat. Such fits are no clock: the transport keeps what it had, and renders.
    @Test func implausibleClocksAreNotFollowed() throws {
        var follower = MIDIClockFollower()
        follower.receive(.start, at: 5)
        follower.receive(.timingClock, at: 5)
        follower.receive(.timingClock, at: 5)
        #expect(follower.line == nil)
        var late = MIDIClockFollower()
        late.receive(.start, at: 0)
        late.receive(.timingClock, at: 0)
        late.receive(.timingClock, at: 4000)
        #expect(late.line == nil)

        let transport = HostTransport(sampleRate: 48_000)
        let (graph, probe) = try probeRig(transport, slice: 480)
        transport.receiveClock(.start, at: 0)
        for _ in 0..<3 { transport.receiveClock(.timingClock, at: 0) }
        transport.receiveClock(.timingClock, at: 4000)
        pull(graph, slices: [480, 480])
        #expect(probe.entries.count == 2)
        #expect(probe.entries.allSatisfy { $0.beat.isFinite && $0.tempo == 120 })
    }

    /// A locate far past any file, or to no number at all, renders (it used to be able to trap the render
    /// thread converting the sample position).
    @Test func aLocateAnywhereRenders() throws {
        let transport = HostTransport(sampleRate: 48_000)
        let (graph, probe) = try probeRig(transport, slice: 480)
        for beat in [1e300, -1e300, .nan, .infinity] {
            transport.locate(beat: beat)
            pull(graph, slices: [480])
        }
        #expect(probe.entries.count == 4)
    }

    /// A file with a million tempo changes: the beat at any sample is found by bisection (this runs on
    /// every slice) and agrees with walking the map.
    @Test func aMillionTempoChangesAreFoundByBisection() throws {
        var map: [(beat: Double, bpm: Double)] = [(0, 120)]
        for index in 1..<1_000_000 { map.append((Double(index) / 8, Double(60 + index % 120))) }
        let transport = HostTransport(sampleRate: 48_000, tempoMap: map)
        let (graph, probe) = try probeRig(transport, slice: 4096)
        transport.play()
        pull(graph, slices: [UInt32](repeating: 4096, count: 500))
        // Walk the map to the sample of the last slice's first frame.
        let target = 499.0 * 4096
        var (sample, index) = (0.0, 0)
        while index + 1 < map.count {
            let next = sample + (map[index + 1].beat - map[index].beat) * 60 / map[index].bpm * 48_000
            if next.rounded() > target { break }
            (sample, index) = (next, index + 1)
        }
        let expected = map[index].beat + (target - sample.rounded()) * map[index].bpm / 60 / 48_000
        #expect(abs(probe.entries[499].beat - expected) < 1e-6)
        #expect(probe.entries[499].tempo == map[index].bpm)
    }
}

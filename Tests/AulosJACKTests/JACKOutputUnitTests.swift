import AulosCore
import AulosIO
import AulosJACK
import AulosMIDI
import AulosRig
import AulosTestSupport
import AulosUnits
import CAllocationCounter
import Foundation
import Synchronization
import Testing

/// The JACK I/O unit in this process, against a real `jackd -d dummy` at 64-frame cycles: its process
/// callback (JACK MIDI read, transport followed, the graph pulled into the ports) allocates nothing over
/// thousands of cycles while notes arrive and a timebase master rolls the transport.
@Suite(.serialized, .enabled(if: JACKServer.isAvailable, "needs jackd (jackd2) and cc: scripts/setup.sh --tests"))
struct JACKOutputUnitTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "aulos-jack-unit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// Counts allocations on the JACK process thread from the pre-render of slice `first` to the post-render
    /// of slice `last` (whole cycles of JACK's work between, not only the graph's).
    final class ProcessThreadTally: @unchecked Sendable {
        struct Window: ~Copyable {
            var slices = 0
            let first: Int
            let last: Int
            let allocations = Atomic<Int64>(-1)
            let frees = Atomic<Int64>(-1)
        }
        let window: UnsafeMutablePointer<Window>

        init(from first: Int, to last: Int) {
            window = .allocate(capacity: 1)
            window.initialize(to: Window(first: first, last: last))
        }

        deinit {
            window.deinitialize(count: 1)
            window.deallocate()
        }

        var renderNotify: RenderCallbackStruct {
            RenderCallbackStruct(
                { refCon, flags, _, _, _, _ in
                    let window = refCon!.assumingMemoryBound(to: Window.self)
                    if flags.pointee.contains(.preRender) {
                        if window.pointee.slices == window.pointee.first { allocation_counter_begin() }
                    } else if flags.pointee.contains(.postRender) {
                        if window.pointee.slices == window.pointee.last {
                            let counted = allocation_counter_end()
                            window.pointee.frees.store(counted.frees, ordering: .relaxed)
                            window.pointee.allocations.store(counted.allocations, ordering: .releasing)
                        }
                        window.pointee.slices += 1
                    }
                    return 0
                }, refCon: UnsafeMutableRawPointer(window))
        }
    }

    /// What the live MIDI path does with JACK MIDI off the process thread: nothing to play (the process
    /// cycle routed it), so it only counts what it heard.
    final class Listener: MIDIReceiver, @unchecked Sendable {
        let heardCount = Atomic<Int>(0)
        func receive(_ message: ChannelMessage, from source: MIDISource, arrivalNanos: Int64) {}
        func heard(_ message: ChannelMessage, from source: MIDISource) { heardCount.add(1, ordering: .relaxed) }
        func receive(system message: MIDIMessage, from source: MIDISource, arrivalNanos: Int64) {}
        func sourceEnded(_ source: MIDISource, arrivalNanos: Int64) -> Int { 0 }
    }

    @Test func processCallbackDoesNotAllocate() throws {
        let jack = try JACKServer(named: "tally", period: 64, in: folder)
        // Two rigs, switched by a program change on channel 16 inside the counted window.
        try "name: Tally\nparts:\n  - name: Lead\n    instrument: synth\n    preset: Glass Bell\n".write(
            toFile: folder + "/rig.yaml", atomically: true, encoding: .utf8)
        try "name: Other\nparts:\n  - name: Pad\n    instrument: synth\n".write(
            toFile: folder + "/other.yaml", atomically: true, encoding: .utf8)
        let set = "name: Set\ncontrol-channel: 16\nrigs:\n  - program: 0\n    rig: rig.yaml\n"
        try (set + "  - program: 1\n    rig: other.yaml\n").write(
            toFile: folder + "/set.yaml", atomically: true, encoding: .utf8)
        var settings = JACKSettings(clientName: "tally")
        settings.serverName = jack.name
        settings.outputConnections = []
        settings.transport = .follow
        settings.partOutputs = true  // the part's side output unit and ports, on the counted path too
        let session = AudioSession(driver: .jack(settings), device: "jack")
        let rig = try PlaybackRig(set: RigSet.load(folder + "/set.yaml"), session: session)
        defer { rig.close() }
        let unit = try #require(rig.graph.outputUnit as? JACKOutputUnit)
        #expect(unit.grant?.period == 64)
        #expect(rig.graph.units.contains { $0 is SideOutputUnit }, "no side output for the part")
        // The rig's router routes on the process thread; CC 1 is MIDI-learned to the lead's cutoff (the first
        // CC 1 maps it, every later one moves it).
        var router = RigRouter(rig: rig)
        router.learn(try rig.target("Lead.cutoff", preferring: 0))
        let input = LiveMIDIInput(
            destinations: rig.instruments.map(\.midiInput), sampleRate: 48_000, periodFrames: 64,
            router: router.kernel)
        try rig.graph.addRenderNotify(input.renderNotify)
        // 3,000 cycles of 64 frames (4 s) counted, after 100 to warm up.
        let tally = ProcessThreadTally(from: 100, to: 3_100)
        try rig.graph.addRenderNotify(tally.renderNotify)
        let listener = Listener()
        unit.framedMIDI = input.framedInput
        unit.midiReceiver = listener
        unit.hostTransport = rig.transport
        try rig.graph.start()
        defer { try? rig.graph.stop() }
        // A timebase master rolling the transport, and a chord every 16 cycles struck and released.
        let master = try jack.startProbe(["transport", "master", "8", "--master", "132", "--start"])
        var events: [String] = []
        for cycle in stride(from: 0, to: 4_000, by: 16) {
            events.append("\(cycle):\(cycle % 64):144:\(48 + cycle % 24):100")
            events.append("\(cycle + 8):\(63 - cycle % 64):128:\(48 + cycle % 24):0")
            events.append("\(cycle + 4):\(cycle % 64):176:1:\(cycle % 128)")
        }
        // The probe sends at most 64 events: 20 strikes, releases and CC 1 moves, then a rig switch and back
        // (program change on channel 16) in the counted window.
        events = Array(events.prefix(60)) + ["1200:10:207:1:0", "1600:20:207:0:0"]
        let sent = try jack.probe(["send", "notes", "5.5", "tally:midi_in"] + events)
        #expect(sent.status == 0, "\(sent.output)")
        #expect(rig.transport.renderedPosition.tempo == 132, "the transport did not follow JACK")
        let deadline = Date().addingTimeInterval(10)
        while tally.window.pointee.allocations.load(ordering: .acquiring) < 0 && Date() < deadline {
            usleep(50_000)
        }
        let allocations = tally.window.pointee.allocations.load(ordering: .acquiring)
        #expect(allocations >= 0, "the counting window did not close: \(tally.window.pointee.slices) slices")
        #expect(unit.midiEventsRead > 0, "no JACK MIDI reached the unit")
        #expect(input.deliveredCount > 0, "no note reached the instrument")
        #expect(router.switchCount == 2, "the program changes did not switch rigs in the cycle")
        #expect(input.takeActions().count >= 3, "the learned mapping and the rig switches were not reported")
        #expect(listener.heardCount.load(ordering: .relaxed) > 0, "the activity log heard nothing")
        #expect(master.finish().status == 0)
        guard allocationsCanBeCounted else {
            try Test.cancel("allocations not counted: a sanitizer build owns malloc")
        }
        #expect(allocation_counter_is_active() == 1, "the counting malloc is not the process's")
        #expect(allocations == 0, "the JACK process thread allocated \(allocations) times in 3,000 cycles")
    }
}

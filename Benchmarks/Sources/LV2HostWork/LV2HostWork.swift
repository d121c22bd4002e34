import AulosCore
import AulosGraph
import AulosLV2
import AulosMIDI
import AulosUnits
import CReferenceLV2Host

#if canImport(Glibc)
import Glibc
#endif

/// The work both hosts do in the LV2 hosting benchmark: the demo score played on mda JX10 into Dragonfly
/// Plate Reverb, 48 kHz, 64-frame blocks, the piece plus one second of tail.
public enum LV2HostWork {
    public static let synthURI = "http://drobilla.net/plugins/mda/JX10"
    /// The effect: Dragonfly Plate (it requires options:options and worker:schedule).
    public static let effectURI = "urn:dragonfly:plate"
    /// The effect hosted: `effectURI`, unless the environment's LV2HOST_EFFECT names another ("none": the
    /// instrument alone); for trying the pair with other plugins.
    public static var effect: String? {
        switch getenv("LV2HOST_EFFECT").map({ String(cString: $0) }) {
        case nil: effectURI
        case "none": nil
        case let uri?: uri
        }
    }
    /// How the benchmark names the pair.
    public static var chainName: String {
        "JX10 → " + (effect == effectURI ? "Dragonfly Plate" : effect.map { "<\($0)>" } ?? "nothing")
    }
    public static let sampleRate = 48_000.0
    public static let blockSize = 64

    /// The repository root (this file is Benchmarks/Sources/LV2HostWork/LV2HostWork.swift).
    public static var repositoryRoot: String {
        var path = #filePath
        for _ in 0..<4 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }
}

/// The demo score's channel messages (program changes aside), both as the timeline Aulos plays and, for the C host, block by block
/// in the order Aulos's event list hands them to a plugin (frame, then the same-frame rank, then arrival).
public struct DemoEvents: Sendable {
    public let timeline: [TimedMIDIEvent]
    /// Every block's events, flattened; block `b` has `events[blockStarts[b]..<blockStarts[b + 1]]`.
    public let events: [ReferenceMIDIEvent]
    public let blockStarts: [Int]
    public let blockCount: Int
    public var frameCount: Int { blockCount * LV2HostWork.blockSize }

    public init(scorePath: String = LV2HostWork.repositoryRoot + "/presets/scores/demo.score") throws {
        let score = try Score(text: try FileContents.text(scorePath, limit: 1 << 20))
        let scheduled = score.scheduledMessages(sampleRate: LV2HostWork.sampleRate)
        // Program changes are left out on both sides: Aulos turns them into a selection of the plugin's
        // presets made on the control thread (JX10 has presets), which a bare host has no counterpart for;
        // without them both play JX10's default patch.
        timeline = scheduled.messages.compactMap { item in
            ChannelMessage(item.message).flatMap {
                $0.status & 0xF0 == 0xC0 ? nil : TimedMIDIEvent(sampleTime: item.sampleTime, message: $0)
            }
        }
        let block = Int64(LV2HostWork.blockSize)
        let total = scheduled.end + Int64(LV2HostWork.sampleRate)
        blockCount = Int((total + block - 1) / block)
        var events: [ReferenceMIDIEvent] = []
        var starts: [Int] = [0]
        var next = 0
        for index in 0..<blockCount {
            let start = Int64(index) * block
            var inBlock: [(offset: Int, event: MIDIEvent)] = []
            while next < timeline.count && timeline[next].sampleTime < start + block {
                let event = timeline[next]
                inBlock.append(
                    (inBlock.count, MIDIEvent(offset: UInt32(max(0, event.sampleTime - start)), message: event.message))
                )
                next += 1
            }
            inBlock.sort { ($0.event.offset, $0.event.rank, $0.offset) < ($1.event.offset, $1.event.rank, $1.offset) }
            for (_, event) in inBlock {
                events.append(
                    ReferenceMIDIEvent(
                        frame: event.offset, status: event.status, data1: event.data1, data2: event.data2))
            }
            starts.append(events.count)
        }
        (self.events, blockStarts) = (events, starts)
    }
}

/// The C host (CReferenceLV2Host) with its own output buffers.
public final class ReferenceChain {
    let host: OpaquePointer
    public let left: UnsafeMutablePointer<Float>
    public let right: UnsafeMutablePointer<Float>

    public init?(synthURI: String = LV2HostWork.synthURI, effectURI: String? = LV2HostWork.effect) {
        guard
            let host = reference_lv2_host_create(
                synthURI, effectURI, LV2HostWork.sampleRate, Int32(LV2HostWork.blockSize))
        else { return nil }
        self.host = host
        left = .allocate(capacity: LV2HostWork.blockSize)
        right = .allocate(capacity: LV2HostWork.blockSize)
        left.initialize(repeating: 0, count: LV2HostWork.blockSize)
        right.initialize(repeating: 0, count: LV2HostWork.blockSize)
    }

    deinit {
        reference_lv2_host_destroy(host)
        left.deallocate()
        right.deallocate()
    }

    /// Renders the first `blocks` blocks of `demo`, calling `each` after every block (output in left/right).
    public func render(_ demo: DemoEvents, blocks: Int? = nil, each: (Int) -> Void = { _ in }) {
        let frames = Int32(LV2HostWork.blockSize)
        demo.events.withUnsafeBufferPointer { events in
            demo.blockStarts.withUnsafeBufferPointer { starts in
                for block in 0..<min(blocks ?? demo.blockCount, demo.blockCount) {
                    let first = starts[block]
                    reference_lv2_host_render(
                        host, events.baseAddress.map { $0 + first }, Int32(starts[block + 1] - first), frames, left,
                        right)
                    each(block)
                }
            }
        }
    }
}

/// The Aulos side: an AudioGraph of the instrument as an `LV2Unit`, the effect as an `LV2Unit` and the generic
/// output, the demo played into the instrument from its timeline (the path `aulos render` uses), rendered
/// slice by slice through the graph's render entry.
public final class AulosChain {
    let graph: AudioGraph
    let player: MIDITimelinePlayer
    let buffers: AudioBufferListStorage
    let entry: RenderEntry

    public init(
        _ demo: DemoEvents, synthURI: String = LV2HostWork.synthURI, effectURI: String? = LV2HostWork.effect
    ) throws {
        let registry = ComponentRegistry()
        registry.register(
            Component(GenericOutputUnit.componentDescription, name: "output") { GenericOutputUnit() })
        var descriptions: [ComponentDescription] = []
        for uri in [synthURI] + (effectURI.map { [$0] } ?? []) {
            let checked = try LV2Unit(uri: uri)
            // Checked above against the same process-wide plugin list: cannot fail.
            registry.register(Component(checked.componentDescription, name: checked.name) { try! LV2Unit(uri: uri) })
            descriptions.append(checked.componentDescription)
        }
        let graph = AudioGraph(registry: registry)
        self.graph = graph
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let nodes = try descriptions.map { description throws(AudioUnitError) in try graph.addNode(description) }
        graph.open()
        let frames = UInt32(LV2HostWork.blockSize)
        for id in [output] + nodes { try graph.unit(for: id).set(.maximumFramesPerSlice, frames) }
        let synth = try graph.unit(for: nodes[0]) as! LV2Unit
        for (source, destination) in zip(nodes, nodes.dropFirst() + [output]) {
            try graph.connectNodeInput(source, sourceOutput: 0, destination, destinationInput: 0)
        }
        player = MIDITimelinePlayer(destinations: [synth.midiInput])
        try graph.addRenderNotify(player.renderNotify)
        try graph.initialize()
        try graph.start()
        player.play(MIDITimeline(demo.timeline))
        entry = graph.renderEntry!
        buffers = AudioBufferListStorage(
            format: .canonical(channels: 2, sampleRate: LV2HostWork.sampleRate), maximumFrames: frames)
    }

    deinit {
        try? graph.stop()
        try? graph.uninitialize()
    }

    /// The output of the last slice rendered.
    public var left: UnsafeMutablePointer<Float> { buffers.list.pointee.floatChannel(0) }
    public var right: UnsafeMutablePointer<Float> { buffers.list.pointee.floatChannel(1) }

    /// Renders the first `blocks` slices of `demo` from sample time 0, calling `each` after every slice.
    public func render(_ demo: DemoEvents, blocks: Int? = nil, each: (Int) -> Void = { _ in }) {
        let frames = UInt32(LV2HostWork.blockSize)
        for block in 0..<min(blocks ?? demo.blockCount, demo.blockCount) {
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp(sampleTime: Int64(block) * Int64(frames))
            buffers.list.pointee.setFrameCount(frames, bytesPerFrame: 4)
            _ = entry.render(flags: &flags, timeStamp: &stamp, frameCount: frames, ioData: buffers.list)
            each(block)
        }
    }
}

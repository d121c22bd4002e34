import AulosCore
import AulosLV2
import AulosTestSupport
import Testing

/// LV2 plugins as units (the first cut): mda JX10 plays MIDI placed at a frame, its control ports are
/// parameters, mda Ambience processes audio, plugins Aulos cannot host are refused by name, and the render
/// path allocates nothing.
@Suite struct LV2UnitTests {
    static let jx10 = "http://drobilla.net/plugins/mda/JX10"

    static func initialized(_ uri: String, slice: UInt32 = 4096) throws -> LV2Unit {
        let unit = try LV2Unit(uri: uri)
        try unit.set(.maximumFramesPerSlice, slice)
        try unit.initialize()
        return unit
    }

    /// The JX10's output for a note-on `offset` frames into the first slice of `slice` frames, 8192
    /// frames long, left channel.
    static func note(at offset: UInt32, slice: UInt32) throws -> [Float] {
        let unit = try initialized(jx10, slice: slice)
        try unit.midiEvent(status: 0x90, data1: 60, data2: 110, offset: offset)
        return try Self.render(unit, slice: slice, buffers: RenderBuffers(frames: slice))
    }

    /// 8192 frames of `unit`'s left output in slices of `slice`.
    static func render(_ unit: LV2Unit, slice: UInt32, buffers: RenderBuffers) throws -> [Float] {
        var output: [Float] = []
        var time: Int64 = 0
        while output.count < 8192 {
            output += try renderUnit(unit, frames: slice, at: time, buffers: buffers)
            time += Int64(slice)
        }
        return Array(output.prefix(8192))
    }

    /// The JX10 handles events on its own 32-frame grid (counted from each run() call), so a note at frame
    /// k sounds from the grid point after k: the same frames as a bare lilv host gives (`BareLV2Host`) for
    /// the same events and blocks — and never before k.
    @Test(arguments: [(UInt32(0), UInt32(256)), (37, 256), (200, 256), (1000, 4096), (63, 64)])
    func aNoteSoundsWhereABareHostPlaysIt(_ offset: UInt32, _ slice: UInt32) throws {
        let output = try Self.note(at: offset, slice: slice)
        let bare = try BareLV2Host.note(Self.jx10, at: Int(offset), block: Int(slice), frames: 8192)
        let first = output.firstIndex { $0 != 0 } ?? -1
        #expect(first >= Int(offset), "first sound at \(first), before the note")
        #expect(
            output == bare,
            "differs from the bare lilv host (first sound \(first), bare's \(bare.firstIndex { $0 != 0 } ?? -1))")
    }

    /// A plugin that processes sample by sample (eg-amp, a gain) gives the same output whatever the slice.
    @Test func aSampleBySamplePluginDoesNotDependOnTheSliceSize() throws {
        func render(_ slice: UInt32) throws -> [Float] {
            let unit = try LV2Unit(uri: "http://lv2plug.in/plugins/eg-amp")
            let signal = UnsafeMutablePointer<Float>.allocate(capacity: 1)
            signal.initialize(to: 3)
            defer { signal.deallocate() }
            try unit.set(.setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: signal), scope: .input)
            try unit.set(.maximumFramesPerSlice, slice)
            try unit.initialize()
            try unit.setParameter(ParameterID(0), value: -6)
            return try Self.render(
                unit, slice: slice, buffers: RenderBuffers(frames: slice))
        }
        let reference = try render(256)
        #expect(reference.contains { $0 != 0 })
        for slice in [UInt32(64), 1000, 4096] { #expect(try render(slice) == reference, "slice \(slice)") }
    }

    @Test func controlPortsAreParameters() throws {
        let unit = try LV2Unit(uri: Self.jx10)
        let list = try unit.get(.parameterList, scope: .global)
        #expect(list.count == unit.plugin.ports.filter { $0.kind == .control && $0.isInput }.count)
        let first = try unit.parameterInfo(list[0])
        #expect(first.minValue == 0 && first.maxValue == 1)
        #expect(unit.componentDescription.type == .musicDevice)
    }

    @Test func anEffectProcessesItsInput() throws {
        let unit = try LV2Unit(uri: "http://drobilla.net/plugins/mda/Ambience")
        #expect(unit.inputBusCount == 1)
        let signal = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        signal.initialize(to: 3)  // noise
        defer { signal.deallocate() }
        try unit.set(.setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: signal), scope: .input)
        try unit.set(.maximumFramesPerSlice, UInt32(512))
        try unit.initialize()
        let buffers = RenderBuffers(frames: 512)
        var output: [Float] = []
        for slice in 0..<20 { output += try renderUnit(unit, frames: 512, at: Int64(slice * 512), buffers: buffers) }
        #expect(output.contains { $0 != 0 } && output.allSatisfy(\.isFinite))
    }

    /// x42's DJ cross-fader has two stereo inputs: the second pair is input bus 1. Faded all the way to B
    /// the output is bus 1's signal; to A, bus 0's.
    @Test func aSecondInputPairIsASecondBus() throws {
        let unit = try LV2Unit(uri: "http://gareus.org/oss/lv2/xfade")
        #expect(unit.inputBusCount == 2 && unit.outputBusCount == 1)
        let levels = UnsafeMutablePointer<Float>.allocate(capacity: 2)
        levels.initialize(from: [0.25, 0.5], count: 2)
        defer { levels.deallocate() }
        for bus in 0..<2 {
            try unit.set(
                .setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: levels + bus), scope: .input,
                element: Element(bus))
        }
        try unit.set(.maximumFramesPerSlice, UInt32(512))
        try unit.initialize()
        let buffers = RenderBuffers(frames: 512)
        for (fade, expected) in [(Float(1), Float(0.5)), (-1, 0.25)] {
            try unit.setParameter(ParameterID(0), value: fade)
            var last: [Float] = []
            for slice in 0..<200 { last = try renderUnit(unit, frames: 512, at: Int64(slice * 512), buffers: buffers) }
            #expect(abs(last[511] - expected) < 1e-3, "faded to \(fade): \(last[511])")
        }
    }

    /// x42's micro delay line reports its delay on a latency port: the unit's Latency (seconds) follows it,
    /// and the control output is readable.
    @Test func aLatencyPortIsTheUnitsLatency() throws {
        let unit = try LV2Unit(uri: "http://gareus.org/oss/lv2/nodelay#micro")
        let silence = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        silence.initialize(to: 0)
        defer { silence.deallocate() }
        try unit.set(.setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: silence), scope: .input)
        try unit.set(.maximumFramesPerSlice, UInt32(256))
        try unit.initialize()
        try unit.setParameter(ParameterID(0), value: -480)
        _ = try renderUnit(unit, frames: 256, buffers: RenderBuffers(frames: 256))
        #expect(unit.controlOutput(1) == 480)
        #expect(abs(try unit.get(.latency, scope: .global) - 0.01) < 1e-9)
        #expect(unit.controlOutput(0) == nil, "port 0 is an input")
    }

    @Test func playingAllocatesNothing() throws {
        let unit = try Self.initialized(Self.jx10, slice: 64)
        let graphless = RenderBuffers(frames: 64)
        var tally = AllocationTally()
        for cycle in 0..<10_200 {
            if cycle % 50 == 0 {
                try unit.midiEvent(status: 0x90, data1: UInt8(48 + cycle / 50 % 24), data2: 100, offset: 10)
                try unit.midiEvent(status: 0x80, data1: UInt8(48 + (cycle / 50 + 20) % 24), data2: 0, offset: 30)
                try unit.setParameter(ParameterID(UInt32(cycle / 50 % 10)), value: Float(cycle % 7) / 7)
            }
            graphless.prepare(64)
            var flags = RenderActionFlags(rawValue: 0)
            let list = graphless.list
            let stamp = AudioTimeStamp(sampleTime: Int64(cycle * 64))
            // The first 200 cycles warm up outside the count (first notes, first parameter changes).
            if cycle < 200 {
                try unit.render(flags: &flags, timeStamp: stamp, frameCount: 64, ioData: list)
            } else {
                tally.count { try? unit.render(flags: &flags, timeStamp: stamp, frameCount: 64, ioData: list) }
            }
        }
        try expectNoAllocations(tally, "the JX10's render")
    }
}

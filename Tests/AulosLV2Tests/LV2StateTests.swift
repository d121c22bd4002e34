import AulosCore
import AulosTestSupport
import Foundation
import Testing

@testable import AulosLV2

/// LV2 presets and state: a preset changes the sound, a program change selects one, a plugin's own state
/// survives save and restore, eg-sampler loads a new sample through the worker while it runs, and a
/// scheduled parameter change lands on its frame.
@Suite struct LV2StateTests {
    static let jx10 = "http://drobilla.net/plugins/mda/JX10"
    static let params = "http://lv2plug.in/plugins/eg-params"
    static let sampler = "http://lv2plug.in/plugins/eg-sampler"

    static func initialized(_ unit: LV2Unit, slice: UInt32 = 512) throws -> LV2Unit {
        try unit.set(.maximumFramesPerSlice, slice)
        try unit.initialize()
        return unit
    }

    /// `slices` slices of `unit`'s left output.
    static func render(_ unit: LV2Unit, slices: Int, slice: UInt32 = 512, from start: Int = 0) throws -> [Float] {
        let buffers = RenderBuffers(
            .canonical(channels: unit.outputFormat(0).channelsPerFrame, sampleRate: 48_000), frames: slice)
        var output: [Float] = []
        for index in start..<(start + slices) {
            output += try renderUnit(unit, frames: slice, at: Int64(index) * Int64(slice), buffers: buffers)
        }
        return output
    }

    @Test func presetsAreFactoryPresetsAndChangeTheSound() throws {
        func note(preset name: String) throws -> [Float] {
            let unit = try LV2Unit(uri: Self.jx10)
            try unit.applyPreset(try unit.preset(named: name))
            _ = try Self.initialized(unit)
            try unit.midiEvent(status: 0x90, data1: 48, data2: 100, offset: 0)
            return try Self.render(unit, slices: 20)
        }
        let unit = try LV2Unit(uri: Self.jx10)
        #expect(unit.factoryPresets.count == 52)
        #expect(unit.factoryPresets.prefix(2).map(\.name) == ["303 Saw Bass", "303 Square Bass"])
        let bass = try note(preset: "303 Saw Bass")
        let pad = try note(preset: "5th Sweep Pad")
        let difference = zip(bass, pad).map { abs($0 - $1) }.max() ?? 0
        #expect(bass.contains { $0 != 0 } && difference > 0.01, "largest difference \(difference)")
        #expect(throws: AudioUnitError.self) { try unit.preset(named: "No Such Preset") }
    }

    /// Sushi's convention: program change n selects preset n, instead of reaching the plugin.
    @Test func aProgramChangeSelectsAPreset() throws {
        let unit = try Self.initialized(try LV2Unit(uri: Self.jx10))
        try unit.midiEvent(status: 0xC0, data1: 3, data2: 0, offset: 10)
        _ = try Self.render(unit, slices: 1)
        unit.applyProgramRequests()
        #expect(unit.currentPreset == Preset(number: 3, name: unit.factoryPresets[3].name))
        let expected = try LV2Unit(uri: Self.jx10)
        try expected.applyPreset(expected.factoryPresets[3])
        for id in try unit.get(.parameterList, scope: .global) {
            #expect(try unit.getParameter(id) == expected.getParameter(id), "parameter \(id)")
        }
    }

    /// eg-params keeps its state inside (set through patch messages, not ports): a changed state put into
    /// one instance comes out of it, through the unit's saved state, into another.
    @Test func aPluginsOwnStateSurvivesSaveAndRestore() throws {
        let fresh = try Self.initialized(try LV2Unit(uri: Self.params))
        let original = try fresh.lv2State()
        #expect(original.contains("eg-params#int> \"0\"^^xsd:int"), "\(original)")
        let changed = original.replacingOccurrences(of: "eg-params#int> \"0\"", with: "eg-params#int> \"7\"")
            .replacingOccurrences(of: "Hello, world", with: "Aulos was here")
        let first = try LV2Unit(uri: Self.params)
        try first.restoreLV2State(changed)
        _ = try Self.initialized(first)
        let saved = try first.saveState()
        #expect(saved.properties["lv2State"]?.contains("eg-params#int> \"7\"^^xsd:int") == true)
        #expect(saved.properties["lv2State"]?.contains("Aulos was here") == true)

        let second = try LV2Unit(uri: Self.params)
        try second.restoreState(saved)
        _ = try Self.initialized(second)
        #expect(try second.lv2State() == first.lv2State())
        // While it runs: LV2 forbids restore() beside run() unless the plugin declares threadSafeRestore,
        // which eg-params does not; a new instance takes the state and takes over at the next slice.
        let again = changed.replacingOccurrences(of: "eg-params#int> \"7\"", with: "eg-params#int> \"9\"")
        try second.restoreLV2State(again)
        #expect(try second.lv2State().contains("eg-params#int> \"9\"^^xsd:int"))
        #expect(second.instances?.count == 2, "the new instance waits for the render thread")
        _ = try Self.render(second, slices: 3)
        second.applyProgramRequests()  // frees the instance let go of
        #expect(second.instances?.count == 1, "the render thread took the new one and let the old one go")
        #expect(try second.lv2State().contains("eg-params#int> \"9\"^^xsd:int"))
    }

    /// eg-sampler, running, told to play another sample (a state naming it): it schedules the load on its
    /// worker, gets the sample back after a run, and the next note plays it.
    @Test func egSamplerLoadsASampleThroughTheWorker() throws {
        let path = TestFiles.scratch("square.wav")
        TestFiles.writeConstantWAV(path, value: 16_384, frames: 4000)
        defer { unlink(path) }
        let unit = try Self.initialized(try LV2Unit(uri: Self.sampler))
        let state = try unit.lv2State()
        #expect(state.contains("click.wav"))
        try unit.restoreLV2State(
            state.replacingOccurrences(of: "file:///usr/lib/lv2/eg-sampler.lv2/click.wav", with: "file://" + path))
        _ = try Self.render(unit, slices: 2)
        try unit.midiEvent(status: 0x90, data1: 60, data2: 127, offset: 0)
        let output = try Self.render(unit, slices: 4, from: 2)
        // The new sample is a constant half scale: the note plays it, where the click it had is a blip.
        #expect(output[100..<2000].allSatisfy { abs($0 - 0.5) < 0.01 }, "\(output[100..<110])")
        #expect(try unit.lv2State().contains(path))
    }

    /// eg-sampler told its sample by message (patch:Set, as its UI would) while it runs: it schedules the
    /// load from run(), its worker thread loads the file, the answer comes back after a later run, and the
    /// next note plays the new sample.
    @Test func aPropertyMessageHasEgSamplerLoadASampleOnItsWorkerThread() throws {
        let path = TestFiles.scratch("half.wav")
        TestFiles.writeConstantWAV(path, value: 16_384, frames: 4000)
        defer { unlink(path) }
        let unit = try Self.initialized(try LV2Unit(uri: Self.sampler))
        #expect(unit.plugin.properties.map(\.label).contains("sample"))
        try unit.setProperty("sample", to: .path(path))
        // The worker thread is the plugin's own pace: slices until the plugin says it holds the new sample.
        var slice = 0
        while slice < 2000, try !unit.lv2State().contains(path) {
            _ = try Self.render(unit, slices: 1, from: slice)
            slice += 1
            usleep(1000)
        }
        #expect(try unit.lv2State().contains(path), "the sample never arrived")
        #expect(unit.workerJobs >= 1, "loaded on the worker's thread")
        try unit.midiEvent(status: 0x90, data1: 60, data2: 127, offset: 0)
        let output = try Self.render(unit, slices: 4, from: slice)
        #expect(output[100..<2000].allSatisfy { abs($0 - 0.5) < 0.01 }, "\(output[100..<110])")
        #expect(throws: AudioUnitError.self) { try unit.setProperty("colour", to: .float(1)) }
    }

    /// eg-amp's gain scheduled 100 frames into a slice changes the output from that frame: the run is
    /// split there.
    @Test func aScheduledParameterChangeLandsOnItsFrame() throws {
        let unit = try LV2Unit(uri: "http://lv2plug.in/plugins/eg-amp")
        let signal = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        signal.initialize(to: 0.5)
        defer { signal.deallocate() }
        try unit.set(.setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: signal), scope: .input)
        _ = try Self.initialized(unit)
        let gain = ParameterID(0)
        try unit.setParameter(gain, value: 0)
        try unit.setParameter(gain, value: -6, bufferOffset: 100)
        let output = try Self.render(unit, slices: 1)
        #expect(output[..<100].allSatisfy { $0 == 0.5 })
        let reduced = 0.5 * Float(pow(10, -6.0 / 20))
        #expect(output[100...].allSatisfy { abs($0 - reduced) < 1e-6 }, "\(output[98..<102])")
    }
}

import AulosCore
import AulosFluid
import AulosMIDI
import AulosRig
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct UnitStateTests {
    /// Changes a unit, saves it to a file, restores it into a fresh unit of the same kind: same state.
    func roundTrip(_ make: @autoclosure () -> AudioUnit, change: (AudioUnit) throws -> Void) throws {
        let original = make()
        try change(original)
        let path = TestFiles.scratch("state.json")
        defer { unlink(path) }
        try UnitStateFile.save(original, to: path)
        let first = TestFiles.bytes(path)
        try UnitStateFile.save(original, to: path)
        #expect(TestFiles.bytes(path) == first, "the same state writes the same bytes")
        let copy = make()
        try UnitStateFile.restore(copy, from: path)
        #expect(try copy.saveState() == original.saveState())
    }

    @Test func synth() throws {
        try roundTrip(OscillatorSynthUnit(presets: SearchPaths.synthPresets)) { unit in
            let synth = unit as! OscillatorSynthUnit
            try synth.selectPreset("Pluck")
            // An edit on top of the preset.
            try synth.setParameter(OscillatorSynthUnit.Parameter.cutoff.id, value: 1234)
            try synth.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(100))
        }
    }

    @Test func sampler() throws {
        try roundTrip(FluidSynthSamplerUnit()) { unit in
            let sampler = unit as! FluidSynthSamplerUnit
            try sampler.loadSoundFont(SearchPaths.soundFont!)
            try sampler.setParameter(FluidSynthSamplerUnit.Parameter.reverbLevel.id, value: 0.3)
        }
    }

    @Test func mixer() throws {
        try roundTrip(MultichannelMixerUnit()) { unit in
            try unit.set(.elementCount, 5, scope: .input)
            try unit.setParameter(MultichannelMixerUnit.Parameter.pan, scope: .input, element: 4, value: -0.7)
            try unit.setParameter(MultichannelMixerUnit.Parameter.volume, scope: .output, element: 0, value: 0.5)
            try unit.set(.meteringMode, 1)
        }
    }

    @Test func equalizers() throws {
        try roundTrip(IPodEQUnit()) { try ($0 as! IPodEQUnit).selectPreset("Jazz") }
        try roundTrip(ParametricEQUnit()) { unit in
            try unit.setProperty(ParametricEQUnit.bandCountProperty, scope: .global, element: 0, value: UInt32(6))
            try unit.setParameter(ParametricEQUnit.parameter(band: 5, .gain), value: -4.5)
            try unit.set(.maximumFramesPerSlice, 4096)
        }
    }

    @Test func restoringTheWrongKindOrAtTheWrongTimeFails() throws {
        let state = try OscillatorSynthUnit().saveState()
        expectError(.invalidPropertyValue) { try MultichannelMixerUnit().restoreState(state) }
        let busy = OscillatorSynthUnit()
        try busy.initialize()
        var different = state
        different.properties["polyphony"] = "8"
        expectError(.initialized) { try busy.restoreState(different) }
        expectError(.invalidFile) { _ = try UnitStateFile.load("/nonexistent/state.json") }
    }
}

@Suite struct FullRigTests {
    /// The factory band rig (4 parts, mixer, per-part and master EQ) renders 5,000 cycles of 64 frames with
    /// notes on every part — from the control thread's scheduler and from a file's timeline read by sample
    /// time — and not one heap allocation on the render thread.
    @Test func theBandRigRendersWithoutAllocating() throws {
        var rig = try Rig.load(TestFiles.presets + "/rigs/band.yaml")
        rig.slice = 64
        let playback = try PlaybackRig(rig)
        defer { playback.close() }
        try playback.graph.start()
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 64)
        let channel = UInt8(rig.parts[0].channels[0] - 1)
        var events: [TimedMIDIEvent] = []
        for beat in 0..<(5000 / 4) {
            let note = UInt8(60 + beat % 12)
            events.append(
                TimedMIDIEvent(
                    sampleTime: Int64(beat * 256 + 3), message: .noteOn(channel: channel, note: note, velocity: 90)))
            events.append(
                TimedMIDIEvent(sampleTime: Int64(beat * 256 + 200), message: .noteOff(channel: channel, note: note)))
        }
        playback.timelinePlayer.play(MIDITimeline(events))
        for cycle in 0..<5000 {
            if cycle % 16 == 0 {
                for destination in 0..<rig.parts.count {
                    let channel = UInt8(rig.parts[destination].channels[0] - 1)
                    let note = UInt8(40 + (cycle / 16) % 30)
                    let at = Int64(cycle * 64 + 9)
                    playback.scheduler.schedule(
                        .noteOn(channel: channel, note: note, velocity: 100), at: at, destination: UInt16(destination))
                    playback.scheduler.schedule(
                        .noteOff(channel: channel, note: note, velocity: 0), at: at + 700,
                        destination: UInt16(destination))
                }
            }
            #expect(harness.renderSlice(64, counting: true) == 0)
        }
        #expect(playback.timelinePlayer.timeline?.count == 2 * (5000 / 4))
        try expectNoAllocations(harness.allocations)
    }

}

import AulosCore
import AulosFluid
import AulosHost
import AulosMIDI
import AulosUnits
import CAllocationCounter
import Testing

#if canImport(Glibc)
import Glibc
import AulosTestSupport
#endif

@Suite struct UnitStateTests {
    /// Changes a unit, saves it to a file, restores it into a fresh unit of the same kind: same state.
    func roundTrip(_ make: () -> AudioUnit, change: (AudioUnit) throws -> Void) throws {
        let original = make()
        try change(original)
        let path = scratchPath("state.json")
        defer { unlink(path) }
        try UnitStateFile.save(original, to: path)
        let first = fileBytes(path)
        try UnitStateFile.save(original, to: path)
        #expect(fileBytes(path) == first, "the same state writes the same bytes")
        let copy = make()
        try UnitStateFile.restore(copy, from: path)
        #expect(try copy.saveState() == original.saveState())
    }

    @Test func synth() throws {
        try roundTrip({ OscillatorSynthUnit() }) { unit in
            let synth = unit as! OscillatorSynthUnit
            try synth.selectPreset("Pluck")
            try synth.setParameter(OscillatorSynthUnit.Parameter.cutoff.id, value: 1234)  // an edit on top of the preset
            try synth.setProperty(OscillatorSynthUnit.polyphonyProperty, scope: .global, element: 0, value: UInt32(100))
        }
    }

    @Test func sampler() throws {
        try roundTrip({ FluidSynthSamplerUnit() }) { unit in
            let sampler = unit as! FluidSynthSamplerUnit
            try sampler.loadSoundFont(SoundFontLocator.defaultPath!)
            try sampler.setParameter(FluidSynthSamplerUnit.Parameter.reverbLevel.id, value: 0.3)
        }
    }

    @Test func mixer() throws {
        try roundTrip({ MultichannelMixerUnit() }) { unit in
            try unit.set(.elementCount, 5, scope: .input)
            try unit.setParameter(MultichannelMixerUnit.Parameter.pan, scope: .input, element: 4, value: -0.7)
            try unit.setParameter(MultichannelMixerUnit.Parameter.volume, scope: .output, element: 0, value: 0.5)
            try unit.set(.meteringMode, 1)
        }
    }

    @Test func equalizers() throws {
        try roundTrip({ IPodEQUnit() }) { try ($0 as! IPodEQUnit).selectPreset("Jazz") }
        try roundTrip({ ParametricEQUnit() }) { unit in
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
    /// notes on every part and not one heap allocation on the render thread.
    @Test func theBandRigRendersWithoutAllocating() throws {
        var rig = try Rig.load(presetsFolder + "/rigs/band.yaml")
        rig.slice = 64
        let playback = try PlaybackRig(rig)
        defer { playback.close() }
        try playback.graph.start()
        let entry = playback.graph.renderEntry!
        let buffers = AudioBufferListStorage(format: playback.fileFormat, maximumFrames: 64)
        var allocations: Int64 = 0
        for cycle in 0..<5000 {
            if cycle % 16 == 0 {
                for destination in 0..<rig.parts.count {
                    let channel = UInt8(rig.parts[destination].channels[0] - 1)
                    let note = UInt8(40 + (cycle / 16) % 30)
                    let at = Int64(cycle * 64 + 9)
                    playback.scheduler.schedule(.noteOn(channel: channel, note: note, velocity: 100), at: at, destination: UInt16(destination))
                    playback.scheduler.schedule(.noteOff(channel: channel, note: note, velocity: 0), at: at + 700, destination: UInt16(destination))
                }
            }
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp(sampleTime: Int64(cycle * 64))
            buffers.list.pointee.setFrameCount(64, bytesPerFrame: playback.fileFormat.bytesPerFrame)
            allocation_counter_begin()
            let status = entry.render(flags: &flags, timeStamp: &stamp, frameCount: 64, ioData: buffers.list)
            allocations += allocation_counter_end().allocations
            #expect(status == 0)
        }
        #expect(allocations == 0)
    }

    /// A rig's output does not depend on the slice size (synth and effects; no sampler, whose placement is
    /// 64-frame-block accurate by nature).
    @Test func synthRigOutputIsIndependentOfSliceSize() throws {
        func render(slice: UInt32) throws -> [UInt8] {
            var rig = try Rig.load(presetsFolder + "/rigs/synth-layers.yaml")
            rig.slice = slice
            let input = scratchPath("s.score")
            writeFile(input, Array("0f note C4 0.3s\n1000f cc 7 80\n7000f note E4 0.2s\n7000f bend 1000\n".utf8))
            let output = scratchPath("s.wav")
            defer { unlink(input); unlink(output) }
            var options = RenderOptions(output: output)
            options.input = input
            options.rig = rig
            options.sample = .float32
            options.tail = 0.2
            _ = try ScriptedRender.run(options)
            return fileBytes(output)
        }
        let reference = try render(slice: 256)
        for slice in [UInt32(16), 100, 1024] { #expect(try render(slice: slice) == reference, "slice \(slice)") }
    }
}


import AulosCore
import AulosDSP
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// MIDI Polyphonic Expression (MPE v1.0) and the modulation matrix: per-note bend, pressure and slide on
/// member channels, zone-wide messages on the manager channel, the configuration message.
@Suite struct SynthMPETests {
    typealias P = OscillatorSynthUnit.Parameter
    let synth = OscillatorSynthUnit.componentDescription

    /// The plain sine patch with the lower zone over all 15 member channels (or none), and `configure`.
    func rig(zones: UInt32 = 15, configure: (AudioUnit) throws -> Void = { _ in }) throws -> InstrumentRig {
        try InstrumentRig(synth) { unit in
            try setSynth(unit, pureSine)
            try unit.setProperty(OscillatorSynthUnit.mpeZonesProperty, scope: .global, element: 0, value: zones)
            try configure(unit)
        }
    }

    /// Bend as a 14-bit value for `semitones` at `range`.
    func bend(_ semitones: Double, range: Double) -> UInt16 { UInt16(8192 + semitones / range * 8192) }

    /// Two notes on two member channels, bent +12 and −6 semitones (±48 range), sound at two pitches; the
    /// manager's bend (+1 semitone of ±2) moves both.
    @Test func memberChannelsBendTheirOwnNotes() throws {
        let rig = try rig()
        rig.scheduler.schedule(.pitchBend(channel: 1, value: bend(12, range: 48)), at: 0)
        rig.scheduler.schedule(.pitchBend(channel: 2, value: bend(-6, range: 48)), at: 0)
        rig.scheduler.schedule(.noteOn(channel: 1, note: 69, velocity: 100), at: 0)
        rig.scheduler.schedule(.noteOn(channel: 2, note: 69, velocity: 100), at: 0)
        rig.scheduler.schedule(.pitchBend(channel: 0, value: bend(1, range: 2)), at: 24_000)
        let (left, _) = rig.render(48_000, slice: 256)
        let before = left[4000..<20_000]
        let after = left[28_000..<44_000]
        #expect(abs(cents(peak(before, in: 860...900), 880)) < 0.1)
        #expect(abs(cents(peak(before, in: 300...320), 440 * pow(2, -0.5))) < 0.1)
        #expect(amplitude(before, at: 440) < 0.001)
        #expect(abs(cents(peak(after, in: 910...950), 880 * pow(2, 1 / 12.0))) < 0.1)
        #expect(abs(cents(peak(after, in: 320...340), 440 * pow(2, -5 / 12.0))) < 0.1)
    }

    /// Pressure on one member channel (routed to amp by the matrix) swells its note only.
    @Test func pressureOnOneNoteLeavesTheOtherAlone() throws {
        let rig = try rig { unit in
            try setSynth(
                unit,
                [
                    .mod1Source: Float(ModulationSource.notePressure.rawValue),
                    .mod1Destination: Float(ModulationDestination.amp.rawValue), .mod1Amount: 1,
                ])
        }
        rig.scheduler.schedule(.noteOn(channel: 3, note: 69, velocity: 100), at: 0)
        rig.scheduler.schedule(.noteOn(channel: 4, note: 76, velocity: 100), at: 0)
        rig.scheduler.schedule(.channelPressure(channel: 3, pressure: 127), at: 24_000)
        let (left, _) = rig.render(48_000, slice: 256)
        let e5 = 440 * pow(2, 7 / 12.0)
        let pressed = amplitude(left[28_000..<44_000], at: 440) / amplitude(left[4000..<20_000], at: 440)
        let other = amplitude(left[28_000..<44_000], at: e5) / amplitude(left[4000..<20_000], at: e5)
        #expect(abs(20 * log10(pressed) - 20 * log10(2)) < 0.05, "pressed note: \(20 * log10(pressed)) dB")
        #expect(abs(20 * log10(other)) < 0.01, "other note: \(20 * log10(other)) dB")
    }

    /// The MPE Configuration Message (RPN 6 on channel 1) makes a zone where there was none, with member
    /// bend ranges of ±48; RPN 0 on one member sets every member's range.
    @Test func theConfigurationMessageMakesAZone() throws {
        let rig = try rig(zones: 0)
        for (controller, value) in [(101, 0), (100, 6), (6, 15)] {
            rig.scheduler.schedule(
                .controlChange(channel: 0, controller: UInt8(controller), value: UInt8(value)), at: 0)
        }
        rig.scheduler.schedule(.pitchBend(channel: 5, value: bend(12, range: 48)), at: 0)
        rig.scheduler.schedule(.noteOn(channel: 5, note: 69, velocity: 100), at: 0)
        // Then RPN 0 on member channel 3: ±24 for all members; channel 6's bend now means +6.
        for (controller, value) in [(101, 0), (100, 0), (6, 24)] {
            rig.scheduler.schedule(
                .controlChange(channel: 2, controller: UInt8(controller), value: UInt8(value)), at: 24_000)
        }
        let (left, _) = rig.render(48_000, slice: 256)
        #expect(abs(cents(peak(left[4000..<20_000], in: 860...900), 880)) < 0.1)
        #expect(abs(cents(peak(left[28_000..<44_000], in: 610...640), 440 * pow(2, 6 / 12.0))) < 0.1)
    }

    /// The manager channel speaks for the zone: its sustain pedal holds member notes, its volume turns
    /// them all down, and its program change is the zone's patch.
    @Test func managerMessagesApplyToTheWholeZone() throws {
        let rig = try rig()
        rig.scheduler.schedule(.controlChange(channel: 0, controller: 64, value: 127), at: 0)
        rig.scheduler.schedule(.noteOn(channel: 7, note: 69, velocity: 100), at: 0)
        rig.scheduler.schedule(.noteOff(channel: 7, note: 69, velocity: 0), at: 1000)
        rig.scheduler.schedule(.controlChange(channel: 0, controller: 7, value: 50), at: 24_000)
        rig.scheduler.schedule(.controlChange(channel: 0, controller: 64, value: 0), at: 40_000)
        let (left, _) = rig.render(60_000, slice: 256)
        let held = amplitude(left[4000..<20_000], at: 440)
        let turnedDown = amplitude(left[26_000..<38_000], at: 440)
        #expect(held > 0.1, "the manager's pedal holds the note")
        #expect(abs(20 * log10(turnedDown / held) - 40 * log10(50 / 100)) < 0.05)
        #expect(left[50_000..<60_000].map(abs).max()! < 1e-3, "lifting the pedal releases it")
    }

    /// The matrix: CC 20 to pitch (0.5 = +12 semitones at 127), scaled by the mod wheel as its via.
    @Test func aControllerMovesPitchThroughTheMatrixScaledByItsVia() throws {
        let rig = try rig(zones: 0) { unit in
            try setSynth(
                unit,
                [
                    .mod2Source: Float(ModulationSource.controller(20)),
                    .mod2Destination: Float(ModulationDestination.pitch.rawValue), .mod2Amount: 0.5,
                    .mod2Via: Float(ModulationSource.modWheel.rawValue),
                ])
        }
        rig.scheduler.schedule(.controlChange(channel: 0, controller: 20, value: 127), at: 0)
        rig.scheduler.schedule(.noteOn(channel: 0, note: 69, velocity: 100), at: 0)
        rig.scheduler.schedule(.controlChange(channel: 0, controller: 1, value: 127), at: 24_000)
        let (left, _) = rig.render(48_000, slice: 256)
        #expect(abs(cents(peak(left[4000..<20_000], in: 430...450), 440)) < 0.1)
        #expect(abs(cents(peak(left[28_000..<44_000], in: 870...890), 880)) < 0.1)
    }

    /// Matrix slots read from a preset file by name.
    @Test func presetFilesNameMatrixSlots() throws {
        let path = TestFiles.scratch("mpe-preset.json")
        TestFiles.write(
            #"{"name": "Expressive", "program": 90, "parameters": {"mod1Source": "mpe pressure", "#
                + #""mod1Destination": "cutoff", "mod1Amount": 0.5, "mod1Via": "cc 74"}}"#,
            to: path)
        defer { unlink(path) }
        let preset = try SynthPreset(file: path)
        #expect(preset.values[P.mod1Source.id] == Float(ModulationSource.notePressure.rawValue))
        #expect(preset.values[P.mod1Destination.id] == Float(ModulationDestination.cutoff.rawValue))
        #expect(preset.values[P.mod1Via.id] == Float(ModulationSource.controller(74)))
    }

    /// Every voice feature at once for 10,000 slices of 64 frames — MPE bends, pressure and slide on the
    /// members, the matrix reading them (and LFO 2, envelope 3), unison stacks with sync, FM, ring,
    /// sub, the ladder, drive and glide, tuning changes, sixteen channels and drums — allocates nothing.
    @Test func expressionAndModulationAllocateNothing() throws {
        let rig = try InstrumentRig(synth, maximumFrames: 64) { unit in
            try unit.setProperty(
                OscillatorSynthUnit.mpeZonesProperty, scope: .global, element: 0, value: UInt32(7 | 7 << 8))
            try setSynth(
                unit,
                [
                    .mod1Source: Float(ModulationSource.notePressure.rawValue), .mod1Destination: 5, .mod1Amount: 0.3,
                    .mod2Source: Float(ModulationSource.slide.rawValue), .mod2Destination: 3, .mod2Amount: 0.5,
                    .mod3Source: Float(ModulationSource.random.rawValue), .mod3Destination: 8, .mod3Amount: 0.2,
                    .mod4Source: Float(ModulationSource.lfo.rawValue), .mod4Destination: 4, .mod4Amount: 0.2,
                    .mod4Via: Float(ModulationSource.controller(2)),
                    .mod5Source: Float(ModulationSource.lfo2.rawValue), .mod5Destination: 14, .mod5Amount: 0.1,
                    .mod6Source: Float(ModulationSource.modEnvelope.rawValue), .mod6Destination: 12, .mod6Amount: 0.1,
                    // The rich voice: unison stacks, sync, FM, ring, sub, both filters, drive, glide.
                    .osc1Unison: 3, .osc2Unison: 2, .oscSync: 1, .fmAmount: 0.2, .ringMod: 0.1, .subLevel: 0.3,
                    .filter2Routing: 1, .drive: 6, .glideTime: 0.05, .glideMode: 2, .lfo2Shape: 4,
                    // Short releases keep a handful of voices sounding: the test is about allocation.
                    .ampRelease: 0.02,
                ])
        }
        let synth = rig.instrument as! OscillatorSynthUnit
        let nineteen = try TuningTable(scale: ScalaScale(text: SynthTuningTests.nineteen))
        for cycle in 0..<10_000 {
            let at = Int64(cycle * 64 + 5)
            let channel = UInt8(cycle % 16)
            if cycle % 3 == 0 {
                let note = UInt8(40 + cycle % 40)
                rig.scheduler.schedule(.noteOn(channel: channel, note: note, velocity: 90), at: at)
                rig.scheduler.schedule(.noteOff(channel: channel, note: note, velocity: 30), at: at + 700)
            }
            rig.scheduler.schedule(.pitchBend(channel: channel, value: UInt16(cycle * 37 % 16_384)), at: at + 1)
            rig.scheduler.schedule(.channelPressure(channel: channel, pressure: UInt8(cycle % 128)), at: at + 2)
            rig.scheduler.schedule(
                .controlChange(channel: channel, controller: 74, value: UInt8(cycle % 128)), at: at + 3)
            if cycle % 500 == 250 { try synth.setTuning(cycle % 1000 == 250 ? nineteen : .equal) }
            rig.harness.renderSlice(64, counting: true)
        }
        #expect(rig.scheduler.lateCount == 0)
        try expectNoAllocations(rig.harness.allocations)
    }
}

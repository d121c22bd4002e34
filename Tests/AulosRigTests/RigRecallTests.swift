import AulosCore
import AulosFluid
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Foundation
import Testing

@testable import AulosRig

#if canImport(Glibc)
import Glibc
#endif

/// Key ranges, transposition, velocity curves, controller mappings, MIDI-learn and rig sets recalled by
/// program change: parsed from rig files, routed by `RigRouter`, heard in offline renders.
@Suite struct RigRecallTests {
    static let split = TestData.splitRig

    @Test func readsKeyRangesCurvesAndControls() throws {
        let rig = try Rig(yaml: Self.split, file: "split.yaml")
        #expect(rig.parts[0].keys == 0...59 && rig.parts[0].transpose == -12 && rig.parts[0].velocity == .hard)
        #expect(
            rig.parts[1].keys == 60...127 && rig.parts[1].velocity == VelocityCurve(exponent: 0.5, low: 40, high: 120))
        #expect(rig.parts[2].velocity.fixed == 90 && rig.parts[2].keys == 0...127)
        #expect(
            rig.controls == [
                ControlMapping(controller: 1, target: "Lead.cutoff", minimum: 300, maximum: 8000),
                ControlMapping(controller: 7, channel: 2, target: "pad.volume"),
                ControlMapping(controller: 20, target: "output.volume"),
            ])
        let again = try Rig(yaml: rig.yaml())
        #expect(again == rig)
    }

    @Test func velocityCurvesShapeAndNeverSilence() {
        #expect(VelocityCurve.linear.map(64) == 64 && VelocityCurve.linear.map(127) == 127)
        #expect(VelocityCurve.soft.map(32) > 32 && VelocityCurve.hard.map(32) < 32)
        #expect(VelocityCurve(fixed: 100).map(3) == 100)
        #expect(VelocityCurve.hard.map(1) >= 1, "a struck key never becomes a note-off")
        let curve = VelocityCurve(exponent: 1, low: 40, high: 120)
        #expect(curve.map(1) >= 40 && curve.map(127) == 120)
    }

    @Test(arguments: [
        ("    keys: B4-C2\n", "parts[0].keys: the low note 71 is above the high note 36"),
        ("    keys: C4\n", "parts[0].keys: 'C4' must be LOW-HIGH notes"),
        ("    velocity: loud\n", "parts[0].velocity: unknown curve 'loud'"),
        ("    velocity: 0\n", "parts[0].velocity: a fixed velocity is 1…127, not 0"),
        ("    velocity: {curve: 1, min: 100, max: 20}\n", "min 100 is above max 20"),
        ("    transpose: 60\n", "parts[0].transpose: 60 is outside -48…48"),
    ])
    func badPartShapingIsOneLine(line: String, expected: String) {
        let text = "parts:\n  - instrument: synth\n" + line
        #expect(throws: RigError.self) { try Rig(yaml: text, file: "bad.yaml") }
        do { _ = try Rig(yaml: text, file: "bad.yaml") } catch {
            #expect(error.message.contains(expected) && error.message.hasPrefix("bad.yaml:"), "\(error.message)")
        }
    }

    @Test func badControlsAreCaughtWhenTheRigIsBuilt() throws {
        var rig = try Rig(yaml: Self.split)
        rig.controls = [ControlMapping(controller: 1, target: "Lead.wobble")]
        do {
            _ = try PlaybackRig(rig)
            Issue.record("a control naming no parameter was accepted")
        } catch let error as RigError {
            #expect(
                error.message.contains("cc 1") && error.message.contains("no parameter 'wobble'")
                    && error.message.contains("cutoff"), "\(error.message)")
        }
        #expect(throws: RigError.self) {
            try Rig(yaml: "parts:\n  - instrument: synth\ncontrols:\n  - cc: 1\n    target: nodot\n")
        }
        #expect(throws: RigError.self) {
            try Rig(yaml: "parts:\n  - name: A\n    instrument: synth\n  - name: a\n    instrument: synth\n")
        }
    }

    // MARK: Routing

    @Test func splitsTransposeAndShapeVelocity() throws {
        let playback = try PlaybackRig(Rig(yaml: Self.split))
        defer { playback.close() }
        var actions: [RigRouter.Action] = []
        var router = RigRouter(rig: playback)
        let low = router.route(.noteOn(channel: 0, note: 59, velocity: 64), actions: &actions)
        #expect(low.count == 1 && low[0].destination == 0)
        #expect(low[0].message == .noteOn(channel: 0, note: 47, velocity: VelocityCurve.hard.map(64)))
        let high = router.route(.noteOn(channel: 0, note: 60, velocity: 64), actions: &actions)
        #expect(
            high.count == 1 && high[0].destination == 1
                && high[0].message
                    == .noteOn(channel: 0, note: 60, velocity: VelocityCurve(exponent: 0.5, low: 40, high: 120).map(64))
        )
        let pad = router.route(.noteOn(channel: 1, note: 10, velocity: 5), actions: &actions)
        #expect(pad.map(\.destination) == [2] && pad[0].message == .noteOn(channel: 1, note: 10, velocity: 90))
        // Note-offs follow their note-ons (transposed the same way), and velocity-0 note-ons count as off.
        #expect(
            router.route(.noteOn(channel: 0, note: 59, velocity: 0), actions: &actions).map(\.message) == [
                .noteOff(channel: 0, note: 47, velocity: 64)
            ])
        #expect(
            router.route(.noteOff(channel: 0, note: 59, velocity: 0), actions: &actions).isEmpty, "released already")
        #expect(actions.isEmpty)
    }

    @Test func mappedControllersMoveParametersInsteadOfPlaying() throws {
        let playback = try PlaybackRig(Rig(yaml: Self.split))
        defer { playback.close() }
        var actions: [RigRouter.Action] = []
        var router = RigRouter(rig: playback)
        #expect(router.route(.controlChange(channel: 0, controller: 1, value: 127), actions: &actions).isEmpty)
        #expect(
            router.route(.controlChange(channel: 0, controller: 7, value: 64), actions: &actions).count == 2,
            "CC 7 on channel 1 is not mapped (the mapping is for channel 2): it plays")
        #expect(router.route(.controlChange(channel: 1, controller: 7, value: 0), actions: &actions).isEmpty)
        #expect(actions.count == 2)
        for action in actions { playback.apply(action) }
        let lead = playback.instruments[1] as! OscillatorSynthUnit
        #expect(try lead.getParameter(OscillatorSynthUnit.Parameter.cutoff.id) == 8000)
        #expect(try playback.mixer.getParameter(MultichannelMixerUnit.Parameter.volume, scope: .input, element: 2) == 0)
    }

    @Test func midiLearnMapsTheNextController() throws {
        let playback = try PlaybackRig(Rig(yaml: Self.split))
        defer { playback.close() }
        var router = RigRouter(rig: playback)
        router.learn(try playback.target("lead.resonance"))
        var actions: [RigRouter.Action] = []
        #expect(
            router.route(.noteOn(channel: 0, note: 60, velocity: 100), actions: &actions).count == 1,
            "notes still play while learning")
        #expect(router.learnedMapping == nil)
        #expect(router.route(.controlChange(channel: 4, controller: 71, value: 127), actions: &actions).isEmpty)
        #expect(router.learnedMapping == ControlMapping(controller: 71, channel: 5, target: "Lead.resonance"))
        #expect(router.mappings.last == router.learnedMapping)
        actions.removeAll()
        _ = router.route(.controlChange(channel: 4, controller: 71, value: 0), actions: &actions)
        guard case .control(let target, let value)? = actions.first else {
            Issue.record("no action")
            return
        }
        #expect(target.name == "Lead.resonance" && value == 0)
    }

    @Test func targetsResolveByNameWithHelpfulErrors() throws {
        let playback = try PlaybackRig(Rig(yaml: Self.split))
        defer { playback.close() }
        #expect(try playback.target("LEAD.Amp-Attack").name == "Lead.ampattack")
        #expect(try playback.target("output.volume").range == 0...2)
        #expect(try playback.target("Pad.pan").range == -1...1)
        for (bad, expected) in [
            ("lead", "is not UNIT.PARAMETER"),
            ("drums.volume", "no part 'drums' (this rig has Bass, Lead, Pad, output)"),
            ("output.eq", "has no master EQ"), ("lead.eq", "has no EQ"),
        ] {
            do {
                _ = try playback.target(bad)
                Issue.record("\(bad) resolved")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }

    // MARK: Rig sets

    func writeSet(_ folder: String) throws -> String { TestData.writeRigSet(in: folder) }

    @Test func factorySetLoads() throws {
        let set = try RigSet.load(TestFiles.presets + "/rigs/stage.yaml")
        #expect(set.controlChannel == 16 && set.entries.count == 4)
        #expect(set.entries.map(\.rig.name) == ["Band", "Split Keys", "Synth Layers", "GM Player"])
        let playback = try PlaybackRig(set: set)
        defer { playback.close() }
        #expect(playback.parts.count == 9 && playback.masterEQ != nil)
        // A plain rig file is a set of one.
        #expect(try RigSet.load(TestFiles.presets + "/rigs/band.yaml").entries.count == 1)
    }

    @Test func badSetsAreOneLine() throws {
        let folder = "/tmp/aulos-badset-\(getpid())"
        let path = try writeSet(folder)
        defer { TestFiles.remove(folder) }
        let cases = [
            (
                "name: S\nrigs:\n  - program: 0\n    rig: one.yaml\n  - program: 0\n    rig: two.yaml\n",
                "rigs[1].program: bank 0 program 0 is already taken"
            ),
            ("rigs:\n  - program: 0\n    rig: missing.yaml\n", "missing.yaml: cannot read the rig file"),
            ("rigs:\n  - program: 0\n    rig: set.yaml\n", "is itself a set"),
            (
                "control-channel: 17\nrigs:\n  - program: 0\n    rig: one.yaml\n",
                "control-channel: 17 is outside 1…16"
            ),
            ("rigs:\n  - rig: one.yaml\n", "missing 'program'"),
        ]
        _ = path
        for (text, expected) in cases {
            TestFiles.write(text, to: folder + "/bad.yaml")
            do {
                _ = try RigSet.load(folder + "/bad.yaml")
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }

    /// A set that lists itself (by any name), or sets that list each other in a cycle of any length, is a
    /// one-line error naming both files — it used to recurse until the stack overflowed (SIGSEGV).
    @Test func setCyclesOfAnyLengthAreOneLineErrors() throws {
        let folder = TestFiles.scratch("cycles")
        _ = TestData.writeRigSet(in: folder)
        defer { TestFiles.remove(folder) }
        let set = { (rig: String) in
            "control-channel: 16\nrigs:\n  - program: 0\n    rig: one.yaml\n"
                + "  - program: 1\n    rig: \(rig)\n"
        }
        symlink(folder + "/self.yaml", folder + "/alias.yaml")
        let cycles: [(files: [String: String], load: String, expected: String)] = [
            (["self.yaml": set("self.yaml")], "self.yaml", "self.yaml:6: rigs[1].rig: 'self.yaml' is this set itself"),
            (["self.yaml": set("./alias.yaml")], "self.yaml", "'./alias.yaml' is this set itself"),
            (
                ["a.yaml": set("b.yaml"), "b.yaml": set("a.yaml")], "a.yaml",
                "a.yaml:6: rigs[1].rig: 'b.yaml' is itself a set"
            ),
            (
                ["a.yaml": set("b.yaml"), "b.yaml": set("c.yaml"), "c.yaml": set("a.yaml")], "c.yaml",
                "c.yaml:6: rigs[1].rig: 'a.yaml' is itself a set"
            ),
        ]
        for cycle in cycles {
            for (name, text) in cycle.files { TestFiles.write(text, to: folder + "/" + name) }
            do {
                _ = try RigSet.load(folder + "/" + cycle.load)
                Issue.record("accepted a cycle through \(cycle.load)")
            } catch {
                #expect(error.message.contains(cycle.expected), "\(error.message)")
                #expect(!error.message.contains("\n"))
            }
        }
    }

    /// Program change on the control channel (bank 1 via CC 0, program 5) switches to rig Two: new notes
    /// go to its part, a key held across the switch is released on rig One, the pedal held on One is
    /// lifted there, and the new rig's output volume and master EQ apply.
    @Test func programChangeSwitchesRigsWithoutHangingNotes() throws {
        let folder = "/tmp/aulos-set-\(getpid())"
        let path = try writeSet(folder)
        defer { TestFiles.remove(folder) }
        let playback = try PlaybackRig(set: try RigSet.load(path))
        defer { playback.close() }
        var router = RigRouter(rig: playback)
        var actions: [RigRouter.Action] = []
        #expect(router.route(.noteOn(channel: 0, note: 60, velocity: 100), actions: &actions).map(\.destination) == [0])
        #expect(
            router.route(.controlChange(channel: 0, controller: 64, value: 127), actions: &actions).map(\.destination)
                == [0])
        #expect(
            router.route(.programChange(channel: 15, program: 5), actions: &actions).isEmpty,
            "bank 0 program 5 recalls nothing")
        #expect(router.route(.controlChange(channel: 15, controller: 0, value: 0), actions: &actions).isEmpty)
        #expect(router.route(.controlChange(channel: 15, controller: 32, value: 1), actions: &actions).isEmpty)
        let switched = router.route(.programChange(channel: 15, program: 5), actions: &actions)
        #expect(
            switched.map(\.destination) == [0]
                && switched[0].message == .controlChange(channel: 0, controller: 64, value: 0))
        #expect(router.activeRig == 1 && router.switchCount == 1)
        guard case .rigSwitched(1)? = actions.last else {
            Issue.record("no switch action: \(actions)")
            return
        }
        #expect(router.route(.noteOn(channel: 0, note: 64, velocity: 100), actions: &actions).map(\.destination) == [1])
        #expect(
            router.route(.noteOff(channel: 0, note: 60, velocity: 0), actions: &actions).map(\.destination) == [0],
            "released where it started")
        #expect(router.route(.noteOff(channel: 0, note: 64, velocity: 0), actions: &actions).map(\.destination) == [1])
        // All notes off reaches every rig; ordinary controllers only the one playing.
        #expect(
            router.route(.controlChange(channel: 0, controller: 123, value: 0), actions: &actions).map(\.destination)
                == [0, 1])
        #expect(
            router.route(.controlChange(channel: 0, controller: 74, value: 0), actions: &actions).map(\.destination)
                == [1])
        try playback.applyOutputSettings(ofRig: 1)
        #expect(
            try playback.mixer.getParameter(MultichannelMixerUnit.Parameter.volume, scope: .output, element: 0) == 0.5)
        #expect(playback.masterEQ?.currentPreset?.name == "Rock")
        try playback.applyOutputSettings(ofRig: 0)
        #expect(playback.masterEQ?.currentPreset?.name == "Flat", "a rig without an EQ gets the transparent curve")
    }

    // MARK: Graph change and overload

    /// The master EQ taken out of and put back into a rendering graph: each a new render plan; out, the
    /// output equals the mixer's; back in, the EQ shapes it again.
    @Test func masterEQComesAndGoesWhileRendering() throws {
        var rig = try Rig(yaml: Self.split)
        rig.eq = "Bass Booster"
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        playback.scheduler.schedule(.noteOn(channel: 0, note: 40, velocity: 100), at: 0, destination: 0)
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        func peak(_ frames: Int) throws -> Float {
            var peak: Float = 0
            for _ in 0..<(frames / 256) {
                #expect(harness.renderSlice(256) == 0)
                peak = max(peak, harness.interleaved(frames: 256).map(abs).max()!)
            }
            return peak
        }
        let boosted = try peak(24_000)
        try playback.setMasterEQ(nil)
        #expect(!playback.masterEQInFlow)
        _ = try peak(2_400)
        let flat = try peak(24_000)
        try playback.setMasterEQ("Bass Booster")
        _ = try peak(2_400)
        let again = try peak(24_000)
        #expect(boosted > flat * 1.2 && again > flat * 1.2, "\(boosted) \(flat) \(again)")
        #expect(throws: RigError.self) { try playback.setMasterEQ("Kazoo") }
    }

    @Test func governorShedsUnderLoadAndRestoresAfter() throws {
        let playback = try PlaybackRig(Rig(yaml: Self.split))
        defer { playback.close() }
        let synth = playback.instruments[2]
        for note in 0..<40 {
            playback.scheduler.schedule(
                .noteOn(channel: 1, note: UInt8(20 + note), velocity: 100), at: 0, destination: 2)
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        for _ in 0..<2 { harness.renderSlice(256) }
        #expect(synth.voiceBudget.active == 40)
        var governor = OverloadGovernor()
        governor.update(load: 0.95, instruments: playback.instruments)
        #expect(synth.voiceBudget.limit == 30)
        for _ in 0..<2 { harness.renderSlice(256) }
        #expect(synth.voiceBudget.active == 30 && playback.voicesShed == 10)
        for _ in 0..<40 { governor.update(load: 0.2, instruments: playback.instruments) }
        #expect(synth.voiceBudget.limit == Int.max, "back to the instrument's own polyphony")
    }
}

extension Rig {
    func withName(_ name: String) -> Rig {
        var copy = self
        copy.name = name
        return copy
    }
}

extension RigRouter {
    /// Routes a message as the MIDI file reader gives it (these tests were written with the enum), collecting
    /// the actions: what each part hears, as messages.
    mutating func route(_ message: MIDIMessage, actions: inout [Action]) -> [(
        destination: UInt16, message: MIDIMessage
    )] {
        let routed = route(ChannelMessage(message)!, from: .file)
        actions += routed.actions
        return routed.deliveries.map { ($0.destination, $0.message.message) }
    }
}

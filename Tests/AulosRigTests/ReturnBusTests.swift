import AulosCore
import AulosRig
import AulosTestSupport
import AulosUnits
import Testing

/// Rigs with send and return buses: parts send to named returns that carry effects into the master, and a
/// master effect chain follows the master EQ — read, written back, checked, built.
@Suite struct ReturnBusTests {
    let sample = """
        name: Room
        output:
          volume: 0.9
          effects:
            - unit: delay
              preset: Slapback
              parameters: {mix: 20}
        returns:
          - name: reverb
            effects:
              - unit: reverb
                preset: Hall
                parameters: {decay-time: 2.5, "Dry/Wet Mix": 100}
          - name: chorus
            effects:
              - unit: chorus
                preset: Ensemble
                parameters: {mix: 100}
        parts:
          - name: Piano
            instrument: synth
            channels: [1]
            sends: {reverb: 0.3, chorus: 0.1}
          - name: Pad
            instrument: synth
            channels: [2]
            sends: {reverb: 0.5}

        """

    @Test func readsReturnsSendsAndTheMasterChainAndWritesThemBack() throws {
        let rig = try Rig(yaml: sample)
        #expect(rig.returns.map(\.name) == ["reverb", "chorus"])
        #expect(rig.returns[0].effects[0].kind == .reverb && rig.returns[0].effects[0].preset == "Hall")
        #expect(rig.returns[0].effects[0].parameters.map(\.name) == ["decay-time", "Dry/Wet Mix"])
        #expect(rig.masterEffects.map(\.kind) == [.delay])
        #expect(rig.parts[0].sends == ["reverb": 0.3, "chorus": 0.1])
        let again = try Rig(yaml: rig.yaml())
        #expect(again == rig, "\(rig.yaml())")
        #expect(again.yaml() == rig.yaml())
    }

    @Test func returnsFollowingControllersAndDryRigsAreReadAndWrittenBack() throws {
        let rig = try Rig(
            yaml: "dry: true\nreturns:\n  - name: verb\n    cc: 91\n    level: 0.25\n    effects:\n"
                + "      - unit: reverb\n        preset: FluidSynth\n  - name: cho\n    cc: 93\n"
                + "parts:\n  - instrument: sampler\n    sends: {verb: 0.5}\n")
        #expect(rig.dry && rig.returns.map(\.controller) == [91, 93] && rig.returns[0].level == 0.25)
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        // Played dry: no returns, sends or master effects.
        #expect(rig.playedDry.returns.isEmpty && rig.playedDry.parts[0].sends.isEmpty)
        #expect(ReturnBus.generalMIDI.map(\.controller) == [91, 93])
    }

    @Test(arguments: [
        (
            "returns:\n  - name: r\n    effects:\n      - unit: flanger\nparts:\n  - instrument: synth\n",
            "test.yaml:4: returns[0].effects[0].unit: unknown effect 'flanger' (reverb, chorus, delay, or lv2:URI "
                + "as aulos units --lv2 lists)"
        ),
        (
            "returns:\n  - name: r\n    effects:\n      - unit: reverb\n        preset: Bathroom\nparts:\n"
                + "  - instrument: synth\n",
            "test.yaml:4: returns[0].effects[0]: reverb has no preset 'Bathroom' (it has Room, Hall, Plate"
        ),
        (
            "returns:\n  - name: r\n    effects:\n      - unit: reverb\n        parameters: {colour: 1}\nparts:\n"
                + "  - instrument: synth\n",
            "test.yaml:4: returns[0].effects[0]: Aulos: Reverb has no parameter 'colour' (it has decay-time,"
        ),
        (
            "returns:\n  - name: r\n    effects:\n      - unit: delay\n        parameters: {feedback: 120}\nparts:\n"
                + "  - instrument: synth\n",
            "test.yaml:4: returns[0].effects[0]: delay feedback must be 0…98, not 120"
        ),
        (
            "returns:\n  - name: r\nparts:\n  - instrument: synth\n    sends: {hall: 0.2}\n",
            "test.yaml:4: parts[0].sends: no return 'hall' (this rig has r)"
        ),
        (
            "parts:\n  - instrument: synth\n    sends: {r: 1.5}\n",
            "test.yaml:3: parts[0].sends.r: 1.5 is outside 0…1"
        ),
        (
            "returns:\n  - name: r\n  - name: r\nparts:\n  - instrument: synth\n",
            "test.yaml:3: returns[1].name: 'r' is used twice"
        ),
        (
            "returns:\n  - name: r\n    cc: 92\nparts:\n  - instrument: synth\n",
            "test.yaml:3: returns[0].cc: must be 91 (reverb send) or 93 (chorus send), not 92"
        ),
        (
            "returns:\n  - name: r\n    cc: 91\n  - name: s\n    cc: 91\nparts:\n  - instrument: synth\n",
            "test.yaml:5: returns[1].cc: return 'r' already follows CC 91"
        ),
        (
            "returns:\n  - name: r\n    level: 3\nparts:\n  - instrument: synth\n",
            "test.yaml:3: returns[0].level: 3 is outside 0…2"
        ),
        ("dry: maybe\nparts:\n  - instrument: synth\n", "test.yaml:1: dry: must be true or false"),
    ])
    func brokenEffectsNameFileLineAndWhat(text: String, expected: String) {
        do {
            _ = try Rig(yaml: text, file: "test.yaml")
            Issue.record("read: \(text)")
        } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
    }

    @Test func theGraphHasASendPerReturnAndAMasterMixer() throws {
        let playback = try PlaybackRig(set: RigSet(try Rig(yaml: sample)))
        defer { playback.close() }
        #expect(playback.mixer.sendCount == 2)
        #expect(playback.outputMixer !== playback.mixer)
        #expect(playback.returns.map { $0.units.map(\.name) } == [["Aulos: Reverb"], ["Aulos: Chorus"]])
        #expect(playback.masterEffects.map(\.name) == ["Aulos: Delay"])
        let dump = playback.graph.dump()
        for name in ["Aulos: Reverb", "Aulos: Chorus", "Aulos: Delay"] { #expect(dump.contains(name), "\(dump)") }
        // Sends are controls like any other; output.volume is the master mixer's.
        let send = try playback.target("Piano.send-reverb")
        #expect(send.name == "Piano.send-reverb")
        let level = try playback.mixer.getParameter(
            MultichannelMixerUnit.Parameter.sendLevel(0), scope: .input, element: 0)
        #expect(abs(level - 0.3) < 1e-6)
        #expect(
            try playback.outputMixer.getParameter(MultichannelMixerUnit.Parameter.volume, scope: .output) == 0.9)
    }

    /// A return's level and its effects' parameters are controls: `reverb.decay`, `chorus.rate`, `reverb.level`.
    @Test func returnsLevelsAndEffectParametersAreControls() throws {
        let playback = try PlaybackRig(set: RigSet(try Rig(yaml: sample)))
        defer { playback.close() }
        let decay = try playback.target("reverb.decay")
        #expect(decay.name == "reverb.decay-time" && decay.range == 0.1...30)
        try decay.apply(4)
        #expect(try playback.returns[0].units[0].getParameter(ReverbUnit.Parameter.decay.id) == 4)
        let level = try playback.target("chorus.level")
        try level.apply(0.5)
        #expect(
            try playback.outputMixer.getParameter(MultichannelMixerUnit.Parameter.volume, scope: .input, element: 2)
                == 0.5)
        #expect(try playback.target("Chorus.Rate").name == "chorus.rate")
        do {
            _ = try playback.target("reverb.colour")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.hasPrefix("return 'reverb' has no parameter 'colour' (it has level, decay-time,"))
        }
    }
}

/// LV2 parts in rig files: `instrument: lv2:URI`, written back the same; a malformed one is one line.

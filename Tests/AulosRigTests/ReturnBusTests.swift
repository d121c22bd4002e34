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

    @Test(arguments: [
        (
            "returns:\n  - name: r\n    effects:\n      - unit: flanger\nparts:\n  - instrument: synth\n",
            "test.yaml:4: returns[0].effects[0].unit: unknown effect 'flanger' (reverb, chorus, delay)"
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
}

import AulosCore
import AulosRig
import Testing

/// What a saved rig holds beyond what a hand-written one usually does — per-channel programs, the tempo, a
/// synth's or sampler's parameters — read, written and checked like every key; and a reload's rule: the
/// file's new values win, the rest stays as it played.
@Suite struct LiveRigStateTests {
    @Test func programsTempoAndParametersAreReadWrittenAndChecked() throws {
        let yaml =
            "tempo: 96.5\nparts:\n  - name: GM\n    instrument: sampler\n    channels: [1, 2, 10]\n"
            + "    programs: {2: 25, 10: [128, 8]}\n    parameters: {gain: 0.3}\n"
            + "  - name: Lead\n    instrument: synth\n    channels: [3, 4]\n    programs: {4: 5}\n"
            + "    parameters: {cutoff: 900}\n"
        let rig = try Rig(yaml: yaml)
        #expect(rig.tempo == 96.5)
        #expect(
            rig.parts[0].programs == [2: Rig.Program(bank: 0, program: 25), 10: Rig.Program(bank: 128, program: 8)])
        #expect(rig.parts[1].parameters == ["cutoff": 900])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        for (yaml, expected) in [
            ("parts:\n  - instrument: sampler\n    channels: [1]\n    programs: {2: 5}\n", "channel 2 is not one"),
            (
                "parts:\n  - instrument: synth\n    channels: [3, 4]\n    programs: {3: 5}\n",
                "is the synth part's first"
            ),
            ("parts:\n  - instrument: sampler\n    programs: {1: [1, 2, 3]}\n", "must be PROGRAM or [BANK, PROGRAM]"),
            ("parts:\n  - instrument: sampler\n    programs: {1: 200}\n", "200 is outside 0…127"),
            ("parts:\n  - instrument: lv2:urn:x:y\n    programs: {1: 2}\n", "an LV2 part chooses with preset:"),
            ("tempo: 4\nparts:\n  - instrument: synth\n", "tempo: 4 is outside 20…400"),
            ("parts:\n  - instrument: synth\n    properties: {a: b}\n", "goes with an LV2 part"),
        ] {
            do {
                _ = try Rig(yaml: yaml, file: "test.yaml")
                Issue.record("expected an error for \(yaml)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }

    /// The rule field by field: a value the file changed since it was read is the file's; any other is as
    /// it played (kept also where the file is silent and the player set it).
    @Test func aReloadTakesTheFilesChangesAndKeepsTheRest() throws {
        let was = try RigSet(
            Rig(
                yaml: "output:\n  volume: 1\nparts:\n  - name: A\n    instrument: synth\n    volume: 1\n    pan: 0\n"
                    + "    effects:\n      - unit: delay\n        parameters: {mix: 20}\n"))
        var played = was
        played.entries[0].rig.volume = 0.5
        played.entries[0].rig.parts[0].volume = 0.3
        played.entries[0].rig.parts[0].pan = 0.4
        played.entries[0].rig.parts[0].parameters = ["cutoff": 900]
        played.entries[0].rig.parts[0].effects[0].parameters = [("mix", 35)]
        var now = was
        now.entries[0].rig.parts[0].volume = 0.8  // the file changed this
        now.entries[0].rig.parts[0].effects[0].parameters = [("mix", 20), ("feedback", 10)]
        let kept = now.keepingLiveState(played, was: was).entries[0].rig
        #expect(kept.volume == 0.5)
        #expect(kept.parts[0].volume == 0.8, "the file's change wins")
        #expect(kept.parts[0].pan == 0.4)
        #expect(kept.parts[0].parameters == ["cutoff": 900])
        let mix = kept.parts[0].effects[0].parameters.map { "\($0.name)=\($0.value)" }
        #expect(mix.sorted() == ["feedback=10.0", "mix=35.0"], "\(mix)")
    }
}

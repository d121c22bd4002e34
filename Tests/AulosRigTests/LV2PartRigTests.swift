import AulosCore
import AulosLV2
import AulosRig
import AulosTestSupport
import Testing

/// LV2 parts in rig files: the plugin, its preset, parameters and state read and written back; a playing
/// rig saved to a file and loaded again plays the same plugin state.
@Suite struct LV2PartRigTests {
    static let jx10 = "http://drobilla.net/plugins/mda/JX10"
    static let params = "http://lv2plug.in/plugins/eg-params"

    @Test func lv2PartsAreReadAndWrittenBack() throws {
        let rig = try Rig(
            yaml: "parts:\n  - instrument: lv2:\(Self.jx10)\n    channels: [2]\n    preset: Analog Bass\n"
                + "    parameters: {vcf-freq: 0.25, \"VCF Reso\": 0.5}\n")
        #expect(rig.parts[0].instrument == .lv2 && rig.parts[0].plugin == Self.jx10)
        #expect(rig.parts[0].name == "lv2 1" && rig.parts[0].preset == "Analog Bass")
        #expect(rig.parts[0].parameters == ["vcf-freq": 0.25, "VCF Reso": 0.5])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        do {
            _ = try Rig(yaml: "parts:\n  - instrument: lv2\n")
            Issue.record("expected an error")
        } catch {
            #expect(
                error.message.contains(
                    "unknown instrument 'lv2' (synth, sampler, sfz:PATH to an .sfz file, or lv2:URI"),
                "\(error.message)")
        }
    }

    /// A rig plays eg-params with a changed state; saved (`savedRig`), written as YAML and read back, the
    /// new rig's plugin has the same state — and a JX10 part keeps its preset and a changed parameter.
    @Test func aPlayingPluginsStateSurvivesARigFile() throws {
        var rig = Rig(
            name: "state",
            parts: [
                Rig.Part(name: "params", instrument: .lv2, channels: [1]),
                Rig.Part(name: "jx", instrument: .lv2, channels: [2]),
            ])
        rig.parts[0].plugin = Self.params
        rig.parts[1].plugin = Self.jx10
        rig.parts[1].preset = "Analog Bass"
        let probe = try LV2Unit(uri: Self.params)
        try probe.set(.maximumFramesPerSlice, UInt32(256))
        try probe.initialize()
        rig.parts[0].state = try probe.lv2State().replacingOccurrences(
            of: "eg-params#int> \"0\"", with: "eg-params#int> \"42\"")
        let first = try PlaybackRig(rig, fileSample: .float32)
        defer { first.close() }
        let jx = first.instruments[1] as! LV2Unit
        let cutoff = try EffectSpec.parameter(named: "vcf-freq", in: jx)
        try jx.setParameter(cutoff.id, value: 0.125)

        let saved = try first.savedRig()
        let text = saved.yaml()
        #expect(text.contains("state: |") && text.contains("\"42\"^^xsd:int"), "\(text)")
        let read = try Rig(yaml: text)
        #expect(read == saved, "\(text)")
        let second = try PlaybackRig(read, fileSample: .float32)
        defer { second.close() }
        let params = second.instruments[0] as! LV2Unit
        #expect(try params.lv2State() == (first.instruments[0] as! LV2Unit).lv2State())
        let jxAgain = second.instruments[1] as! LV2Unit
        #expect(jxAgain.currentPreset?.name == "Analog Bass")
        #expect(try jxAgain.getParameter(cutoff.id) == 0.125)
    }

    /// An LV2 part's parameters and its insert effects' parameters are controls (`aulos set`, MIDI learn):
    /// the instrument's first, then the first effect that has the name.
    @Test func anLV2PartsParametersAndItsEffectsAreControls() throws {
        let rig = try Rig(
            yaml: "parts:\n  - name: jx\n    instrument: lv2:\(Self.jx10)\n    effects:\n"
                + "      - unit: lv2:http://lv2plug.in/plugins/eg-amp\n")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        let cutoff = try playback.target("jx.vcf-freq")
        try cutoff.apply(0.3)
        let jx = playback.instruments[0] as! LV2Unit
        #expect(try jx.getParameter(EffectSpec.parameter(named: "vcf-freq", in: jx).id) == 0.3)
        let gain = try playback.target("jx.gain")
        #expect(gain.name == "jx.gain" && gain.range == -90...24)
        try gain.apply(-12)
        #expect(try playback.parts[0].effects[0].getParameter(ParameterID(0)) == -12)
    }

    /// Any state text survives a rig file: a literal block where YAML keeps it exactly, a quoted line where
    /// it would not (no final newline, leading spaces, carriage returns, blank lines at the end).
    @Test(arguments: [
        "<urn:a>\n\tstate:state [ <urn:b> \"x\" ] .\n", "no final newline", "  leading spaces\nthen\n",
        "windows\r\nline ends\r\n", "blank lines\n\n\n", "a\n  indented\n\t\ttabs \n", "", "\u{2028}odd\n",
    ])
    func anyStateTextSurvivesARigFile(_ state: String) throws {
        var rig = Rig(name: "s", parts: [Rig.Part(name: "p", instrument: .lv2, channels: [1])])
        rig.parts[0].plugin = Self.params
        rig.parts[0].state = state
        #expect(try Rig(yaml: rig.yaml()).parts[0].state == state, "\(rig.yaml())")
    }

    @Test(arguments: [
        ("parts:\n  - instrument: synth\n    properties: {a: b}\n", "properties: goes with an LV2 part"),
        (
            "parts:\n  - instrument: synth\n    parameters: {nope: 1}\n",
            "part 'synth 1': Aulos: Oscillator Synth has no parameter 'nope'"
        ),
        (
            "parts:\n  - instrument: lv2:\(jx10)\n    preset: Nope\n",
            "part 'lv2 1': MDA JX10 has no preset 'Nope' (it has 303 Saw Bass"
        ),
        (
            "parts:\n  - instrument: lv2:\(jx10)\n    parameters: {vcf-freq: 7}\n",
            "part 'lv2 1': MDA JX10 vcf-freq must be 0…1, not 7"
        ),
        (
            "parts:\n  - instrument: lv2:\(jx10)\n    program: 3\n",
            "part 'lv2 1': an LV2 part takes preset: (one of its presets by name), not program:"
        ),
        ("parts:\n  - instrument: lv2:\(params)\n    state: nonsense\n", "part 'lv2 1': not an LV2 state"),
    ])
    func badLV2PartsAreOneLineErrors(_ yaml: String, _ expected: String) throws {
        do {
            let rig = try Rig(yaml: yaml, file: "test.yaml")
            let playback = try PlaybackRig(rig, fileSample: .float32)
            playback.close()
            Issue.record("expected an error")
        } catch let error as RigError {
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(!error.message.contains("\n"), "\(error.message)")
        }
    }
}

import AulosCore
import AulosMIDI
import AulosRig
import AulosTestSupport
import AulosUnits
import Testing

/// Rig files name a Scala scale and keyboard mapping for the rig or a part; the synth parts play them.
@Suite struct TuningRigTests {
    @Test func tuningsAreReadWrittenBackAndPlayed() throws {
        let folder = TestFiles.scratch("tuning")
        TestFiles.write(
            "19-EDO\n19\n" + (1...18).map { "\(Double($0) * 1200 / 19)\n" }.joined() + "2/1\n", to: folder + ".scl")
        TestFiles.write("0\n0\n127\n60\n60\n261.6256\n19\n", to: folder + ".kbm")
        defer {
            TestFiles.remove(folder + ".scl")
            TestFiles.remove(folder + ".kbm")
        }
        let rig = try Rig(
            yaml: "tuning: \(folder).scl\nkeymap: \(folder).kbm\nparts:\n  - name: a\n    instrument: synth\n"
                + "    channels: [1]\n  - name: b\n    instrument: synth\n    channels: [2]\n"
                + "    tuning: \(folder).scl\n")
        #expect(
            rig.tuning == folder + ".scl" && rig.keymap == folder + ".kbm" && rig.parts[1].tuning == folder + ".scl")
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        let a = playback.instruments[0] as! OscillatorSynthUnit
        let b = playback.instruments[1] as! OscillatorSynthUnit
        // Part a: the rig's scale with its mapping (middle C at 261.6256 Hz); part b: its own scale, A = 440.
        #expect(abs(a.tuning.frequency(of: 60)! - 261.6256) < 1e-6)
        #expect(abs(b.tuning.frequency(of: 69)! - 440) < 1e-9)
        #expect(abs(b.tuning.pitches[70]! - (69 + 12.0 / 19)) < 1e-9)
    }

    @Test(arguments: [
        (
            "parts:\n  - instrument: lv2:http://drobilla.net/plugins/mda/JX10\n    tuning: x.scl\n",
            "test.yaml:3: parts[0].tuning: goes with the synth or the sampler"
        ),
        ("keymap: x.kbm\nparts:\n  - instrument: synth\n", "test.yaml:1: keymap: goes with a tuning: (a .scl file)"),
        ("parts:\n  - instrument: synth\n    keymap: x.kbm\n", "test.yaml:3: parts[0].keymap: goes with a tuning:"),
    ])
    func misplacedTuningsAreOneLine(_ yaml: String, _ expected: String) {
        do {
            _ = try Rig(yaml: yaml, file: "test.yaml")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
        }
    }

    /// A bundled tuning by name (presets/tunings), wherever aulos runs; an unknown name lists them.
    @Test func bundledTuningsGoByName() throws {
        let playback = try PlaybackRig(
            try Rig(yaml: "tuning: 19-edo\nparts:\n  - instrument: synth\n"), fileSample: .float32)
        defer { playback.close() }
        let synth = playback.instruments[0] as! OscillatorSynthUnit
        #expect(abs(synth.tuning.pitches[70]! - (69 + 12.0 / 19)) < 1e-6)
        do {
            let other = try PlaybackRig(try Rig(yaml: "tuning: 17-edo\nparts:\n  - instrument: synth\n"))
            other.close()
            Issue.record("expected an error")
        } catch let error as RigError {
            #expect(
                error.message.contains("no tuning '17-edo': give a .scl file or one of 12-edo, 19-edo"),
                "\(error.message)")
        }
    }

    @Test func aMissingScaleFileNamesThePart() throws {
        let rig = try Rig(
            yaml: "parts:\n  - name: lead\n    instrument: synth\n    tuning: /no/such.scl\n", file: "r.yaml")
        do {
            let playback = try PlaybackRig(rig, fileSample: .float32)
            playback.close()
            Issue.record("expected an error")
        } catch let error as RigError {
            #expect(error.message.hasPrefix("r.yaml:2: part 'lead': /no/such.scl"), "\(error.message)")
        }
    }
}

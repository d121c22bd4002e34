import AulosCore
import AulosRig
import AulosTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

let presetsFolder = TestFiles.presets

@Suite struct RigTests {
    let sample = """
        name: Test Rig
        sample-rate: 44100
        slice: 128
        output:
          volume: 0.8
          eq: Rock
        parts:
          - name: Keys
            instrument: sampler
            channels: [1, 2]
            program: 4
            volume: 0.7
            pan: -0.5
          - instrument: synth
            preset: Pluck
            channels: [1]
            enabled: false
            eq: Treble Reducer
        """

    @Test func readsEveryField() throws {
        let rig = try Rig(yaml: sample, file: "test.yaml")
        #expect(
            rig.name == "Test Rig" && rig.sampleRate == 44_100 && rig.slice == 128 && rig.volume == 0.8
                && rig.eq == "Rock")
        #expect(rig.parts.count == 2)
        #expect(rig.parts[0].channels == [1, 2] && rig.parts[0].program == 4 && rig.parts[0].pan == -0.5)
        #expect(
            rig.parts[1].name == "synth 2" && rig.parts[1].preset == "Pluck" && !rig.parts[1].enabled
                && rig.parts[1].eq == "Treble Reducer")
    }

    /// Found by `make fuzz` (rig): a controls target holding quotes and U+FFFD was written unescaped and
    /// read back as something else. Targets, names and presets with quotes, backslashes, control
    /// characters and YAML's other line breaks all round-trip now.
    @Test func oddTextRoundTrips() throws {
        let path = "/tmp/aulos-fuzz-rig-\(getpid()).yaml"
        defer { unlink(path) }
        let crash = try #require(
            FileManager.default.contents(
                atPath: presetsFolder + "/../Tests/AulosRigTests/Fixtures/fuzz-rig-target-quotes.yaml"))
        let rig = try Rig(yaml: String(decoding: crash, as: UTF8.self))
        #expect(try Rig(yaml: rig.yaml()) == rig)
        var odd = Rig(
            name: "a\"b\\c\u{7}d\u{2028}e\te", parts: [Rig.Part(name: "x\ny\u{85}", instrument: .synth, channels: [1])])
        odd.controls = [ControlMapping(controller: 1, target: "x\ny\u{85}.\"cut\u{FFFD}off\"")]
        #expect(try Rig(yaml: odd.yaml()) == odd, "\(odd.yaml())")
    }

    @Test func roundTripsThroughYAML() throws {
        let rig = try Rig(yaml: sample)
        let again = try Rig(yaml: rig.yaml())
        #expect(again == rig)
        #expect(try Rig(yaml: again.yaml()).yaml() == rig.yaml())
        var jack = rig
        jack.driver = "jack"  // the JACK driver is kept in a saved rig
        #expect(try Rig(yaml: jack.yaml()) == jack)
        var served = rig
        served.servers = LiveServers(web: "0.0.0.0:8080", webPassword: "/etc/aulos/web-password", osc: "9000")
        #expect(try Rig(yaml: served.yaml()) == served, "the panel's and OSC's keys are kept in a saved rig")
    }

    @Test func setsAndRigsNameTheirServers() throws {
        let folder = NSTemporaryDirectory() + "aulos-servers-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        TestFiles.write("name: One\nosc: 127.0.0.1:9000\nparts:\n  - instrument: synth\n", to: folder + "/one.yaml")
        TestFiles.write(
            "web: \"0.0.0.0:8080\"\nweb-password: /etc/aulos/pw\nrigs:\n  - program: 0\n    rig: one.yaml\n",
            to: folder + "/set.yaml")
        #expect(try RigSet.load(folder + "/one.yaml").servers == LiveServers(osc: "127.0.0.1:9000"))
        #expect(
            try RigSet.load(folder + "/set.yaml").servers
                == LiveServers(web: "0.0.0.0:8080", webPassword: "/etc/aulos/pw"),
            "a set's own keys, not its first rig's")
    }

    @Test(arguments: [
        ("parts:\n  - instrument: piano\n", "test.yaml:2: parts[0].instrument: unknown instrument 'piano'"),
        ("name: x\nparts:\n  - instrument: synth\n    colour: red\n", "test.yaml:4: parts[0].colour: unknown key"),
        (
            "parts:\n  - instrument: synth\n    channels: [1, 17]\n",
            "test.yaml:3: parts[0].channels: 17 is outside 1…16"
        ),
        ("slice: 9000\nparts:\n  - instrument: synth\n", "test.yaml:1: slice: 9000 is outside 1…4096"),
        ("driver: pulse\nparts:\n  - instrument: synth\n", "test.yaml:1: driver: must be alsa or jack, not 'pulse'"),
        ("web: 80800\nparts:\n  - instrument: synth\n", "test.yaml:1: web: must be PORT or ADDRESS:PORT"),
        ("web: pi.local:80\nparts:\n  - instrument: synth\n", "test.yaml:1: web: must be PORT or ADDRESS:PORT"),
        ("web: [80]\nparts:\n  - instrument: synth\n", "test.yaml:1: web: must be text"),
        ("osc: 0.0.0.0:9000\nparts:\n  - instrument: synth\n", "test.yaml:1: osc: must be PORT or 127.0.0.1:PORT"),
        ("web-password: pw\nparts:\n  - instrument: synth\n", "test.yaml:1: web-password: must be an absolute"),
        (
            "driver: \(String(repeating: "x", count: 5000))\nparts:\n  - instrument: synth\n",
            "test.yaml:1: driver: must be alsa or jack, not '\(String(repeating: "x", count: 40))…'"
        ),
        // Whole numbers are whole: these were read as 44100, channel 1 and program 0.
        ("sample-rate: 44100.5\nparts:\n  - instrument: synth\n", "test.yaml:1: sample-rate: 44100.5 is not a whole"),
        ("parts:\n  - instrument: synth\n    channels: [1.5]\n", "test.yaml:3: parts[0].channels: 1.5 is not a whole"),
        ("parts:\n  - instrument: sampler\n    program: 0.5\n", "test.yaml:3: parts[0].program: 0.5 is not a whole"),
        ("output:\n  eq: Kazoo\nparts:\n  - instrument: synth\n", "test.yaml:2: output.eq: unknown EQ preset 'Kazoo'"),
        ("name: x\n", "missing 'parts'"),
        ("parts: []\n", "test.yaml:1: parts: must be a list of at least one part"),
        (
            "parts:\n  - instrument: synth\n    soundfont: x.sf2\n",
            "test.yaml:3: parts[0].soundfont: goes with the sampler"
        ),
        ("parts:\n  - instrument: sampler\n    volume: loud\n", "test.yaml:3: parts[0].volume: must be a number"),
        ("parts:\n  - instrument: synth\n  volume: [\n", "test.yaml:"),
        ("parts:\n  - instrument: synth\nparts: []\n", "test.yaml:1: 'parts' appears twice"),
    ])
    func brokenRigsNameFileLineAndKey(text: String, expected: String) {
        do {
            _ = try Rig(yaml: text, file: "test.yaml")
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.message.hasPrefix("test.yaml"), "\(error.message)")
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
    }

    /// A rig saved with a byte-order mark or CRLF line ends reads like any other.
    @Test func byteOrderMarksAndWindowsLineEndsRead() throws {
        let text = "name: x\nparts:\n  - instrument: synth\n    channels: [1, 2]\n"
        let plain = try Rig(yaml: text)
        #expect(try Rig(yaml: "\u{FEFF}" + text) == plain)
        #expect(try Rig(yaml: text.replacingOccurrences(of: "\n", with: "\r\n")) == plain)
    }

    /// Errors found only when the rig is built — a SoundFont that is not there, a preset that does not
    /// exist, a control aimed at no part — name the file and line to edit, like the reader's own.
    /// A chain holds at most 16 effects and a set 128 (an 18 KB rig of 1,000 delays took 2.1 GB to build);
    /// a delay and a reverb take memory for the rate in use, not for 192 kHz.
    @Test func effectChainsAreBounded() throws {
        let delays = String(repeating: "      - unit: delay\n", count: 17)
        #expect(throws: RigError.self) {
            try Rig(yaml: "name: x\nparts:\n  - name: Lead\n    instrument: synth\n    effects:\n" + delays)
        }
        do {
            _ = try Rig(yaml: "name: x\nparts:\n  - name: Lead\n    instrument: synth\n    effects:\n" + delays)
        } catch {
            #expect(error.message.contains("17 effects; a chain holds at most 16"), "\(error.message)")
        }
        var rig = Rig(name: "many", parts: [])
        for index in 0..<9 {
            var part = Rig.Part(name: "P\(index)", instrument: .synth, channels: [1])
            part.effects = try Rig(
                yaml: "name: x\nparts:\n  - name: L\n    instrument: synth\n    effects:\n"
                    + String(repeating: "      - unit: delay\n", count: 15)
            ).parts[0].effects
            rig.parts.append(part)
        }
        #expect(throws: RigError.self) { try PlaybackRig(rig) }
    }

    @Test func errorsFoundWhileBuildingNameTheFileAndLine() throws {
        let cases = [
            (
                "name: x\nparts:\n  - name: Piano\n    instrument: sampler\n    soundfont: /nonexistent.sf2\n",
                "test.yaml:3: part 'Piano': SoundFont /nonexistent.sf2: No such file or directory"
            ),
            (
                "name: x\nparts:\n  - name: Lead\n    instrument: synth\n    preset: Kazoo\n",
                "test.yaml:3: part 'Lead': no synth preset 'Kazoo'"
            ),
            (
                "name: x\nparts:\n  - name: Lead\n    instrument: synth\n"
                    + "controls:\n  - cc: 1\n    target: Leed.cutoff\n",
                "test.yaml:6: controls: cc 1: no part 'Leed' (this rig has Lead, output)"
            ),
        ]
        for (text, expected) in cases {
            do {
                let rig = try PlaybackRig(set: RigSet(try Rig(yaml: text, file: "test.yaml")))
                rig.close()
                Issue.record("built: \(text)")
            } catch let error as RigError {
                #expect(error.message.hasPrefix(expected), "\(error.message)")
            }
        }
    }

    @Test func factoryRigsLoad() throws {
        for name in ["band", "gm-player", "synth-layers"] {
            let rig = try Rig.load(presetsFolder + "/rigs/\(name).yaml")
            #expect(!rig.parts.isEmpty, "\(name)")
        }
        #expect(RigLibrary.factory.count >= 3)
    }

}

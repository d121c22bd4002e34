import AulosCore
import AulosRig
import AulosTestSupport
import AulosUnits
import Foundation
import Testing

/// A synth part's `wavetable:` loads a WAV of single cycles (or a bundled table by name).
@Suite struct PartWavetableTests {
    @Test func aBundledTableLoadsByName() throws {
        let rig = try Rig(yaml: "parts:\n  - instrument: synth\n    wavetable: analog-morph\n")
        #expect(rig.parts[0].wavetable == "analog-morph")
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        #expect((playback.instruments[0] as! OscillatorSynthUnit).wavetable?.frameCount == 8)
    }

    /// A WAV of 4 cycles of 256 samples, with its cycle length given.
    @Test func aFileWithItsCycleLength() throws {
        let path = TestFiles.scratch("table.wav")
        TestFiles.writeConstantWAV(path, value: 1000, frames: 1024)
        defer { unlink(path) }
        let rig = try Rig(yaml: "parts:\n  - instrument: synth\n    wavetable: \(path)\n    wavetable-cycle: 256\n")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        #expect((playback.instruments[0] as! OscillatorSynthUnit).wavetable?.frameCount == 4)
    }

    @Test func problemsAreOneLine() throws {
        let path = TestFiles.scratch("odd.wav")
        TestFiles.writeConstantWAV(path, value: 1000, frames: 3000)
        defer { unlink(path) }
        for (yaml, expected) in [
            ("    wavetable: nosuch\n", "wavetable 'nosuch': no such file (bundled: analog-morph, harmonic-sweep)"),
            ("    wavetable: \(path)\n", "3000 samples are not whole cycles of 2048"),
            ("    wavetable: analog-morph\n    wavetable-cycle: 1000\n", "wavetable-cycle: 1000 is not a power of two"),
        ] {
            do {
                let rig = try Rig(yaml: "parts:\n  - instrument: synth\n" + yaml, file: "test.yaml")
                let playback = try PlaybackRig(rig, fileSample: .float32)
                playback.close()
                Issue.record("expected an error for \(yaml)")
            } catch {
                let message = String(describing: (error as? RigError)?.message ?? "\(error)")
                #expect(message.contains(expected), "\(message)")
                #expect(!message.contains("\n"))
            }
        }
        do {
            _ = try Rig(yaml: "parts:\n  - instrument: sampler\n    wavetable: analog-morph\n", file: "test.yaml")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.hasPrefix("test.yaml:3: parts[0].wavetable: goes with a synth part"))
        }
    }
}

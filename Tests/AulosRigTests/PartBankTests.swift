import AulosCore
import AulosMIDI
import AulosRig
import AulosTestSupport
import Foundation
import Testing

/// A sampler part's `bank:` starts it on a bank's preset (FluidR3's variations are bank 8): the part sounds
/// as if its channel had been sent bank select and the program, and not like bank 0's program.
@Suite struct PartBankTests {
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    /// Half a second of a note on a sampler part, with `bank`/`program` in the rig and `prelude` scheduled
    /// before the note.
    func render(bank: Int?, program: Int?, prelude: [MIDIMessage] = []) throws -> [Float] {
        var part = Rig.Part(name: "Guitar", instrument: .sampler, channels: [1])
        part.soundFont = Self.fluidR3
        part.program = program
        part.bank = bank
        let playback = try PlaybackRig(Rig(name: "bank", parts: [part]), fileSample: .float32)
        defer { playback.close() }
        // What a session plays first: the rig's own prelude (its parts' banks and programs), then `prelude`.
        playback.timelinePlayer.play(MIDITimeline(playback.prelude))
        for message in prelude { playback.scheduler.schedule(message, at: 0) }
        playback.scheduler.schedule(.noteOn(channel: 0, note: 52, velocity: 100), at: 64)
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        var samples: [Float] = []
        for _ in 0..<94 {
            harness.renderSlice(256)
            samples += harness.interleaved(frames: 256)
        }
        return samples
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: fluidR3)))
    func aBankStartsThePartOnThatBanksPreset() throws {
        let banked = try render(bank: 8, program: 28)
        let selected = try render(
            bank: nil, program: nil,
            prelude: [.controlChange(channel: 0, controller: 0, value: 8), .programChange(channel: 0, program: 28)])
        let plain = try render(bank: nil, program: 28)
        #expect(banked.map(abs).max()! > 0.01)
        // (Compared first: a failed expectation on the arrays themselves would print them whole.)
        let likeSelected = banked == selected
        let likeBankZero = banked == plain
        #expect(likeSelected, "bank: 8 program: 28 is not what selecting bank 8's 28 plays")
        #expect(!likeBankZero, "bank: 8 played bank 0's program 28")
    }

    @Test func theBankIsReadWrittenAndCheckedInOneLine() throws {
        let rig = try Rig(yaml: "parts:\n  - instrument: sampler\n    program: 28\n    bank: 8\n")
        #expect(rig.parts[0].bank == 8)
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        for (yaml, expected) in [
            ("parts:\n  - instrument: sampler\n    bank: 8\n", "test.yaml:3: parts[0].bank: needs a program:"),
            (
                "parts:\n  - instrument: synth\n    program: 1\n    bank: 8\n",
                "parts[0].bank: goes with a sampler part"
            ),
            (
                "parts:\n  - instrument: sampler\n    program: 1\n    bank: 128\n",
                "parts[0].bank: 128 is outside 0…127"
            ),
        ] {
            do {
                _ = try Rig(yaml: yaml, file: "test.yaml")
                Issue.record("expected an error for \(yaml)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }
}

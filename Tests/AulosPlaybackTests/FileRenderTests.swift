import AulosAudioFile
import AulosCore
import AulosMIDI
import AulosRig
import AulosTestSupport
import Foundation
import Testing

@testable import AulosPlayback

#if canImport(Glibc)
import Glibc
#endif

/// A file's bytes (empty when unreadable).
func fileBytes(_ path: String) -> [UInt8] { TestFiles.bytes(path) }

func writeFile(_ path: String, _ bytes: [UInt8]) { TestFiles.write(bytes, to: path) }

/// A unique scratch path under /tmp, removed by the caller.
func scratchPath(_ name: String) -> String { TestFiles.scratch(name) }

/// `aulos render`: a MIDI file or score through a rig into a WAV or FLAC file, deterministic.
@Suite struct FileRenderTests {
    let score = """
        0b tempo 120
        0b note C4 1b vel=100
        0.5b note E4 1b
        1b cc 64 127
        1b note G4 0.25b
        2b cc 64 0
        2b program 24 ch=2
        2b note E3 1b ch=2
        2.5b note C2 0.25b ch=10
        3b end
        """

    @Test(arguments: [InstrumentChoice.synth, .sampler])
    func theSameInputGivesTheSameBytes(instrument: InstrumentChoice) throws {
        let input = scratchPath("song.score")
        writeFile(input, Array(score.utf8))
        defer { unlink(input) }
        var paths: [String] = []
        for format in [SampleFormat.float32, .int16] {
            for run in 0..<2 {
                var options = PlaybackOptions()
                let output = RenderOutput(path: scratchPath("out-\(run).wav"), sample: format)
                options.input = input
                options.instrument = instrument
                options.tail = 0.5
                let summary = try FileRender.run(options, to: output)
                #expect(summary.frames == 96_000)
                paths.append(output.path)
            }
        }
        defer { for path in paths { unlink(path) } }
        #expect(fileBytes(paths[0]) == fileBytes(paths[1]))
        #expect(fileBytes(paths[2]) == fileBytes(paths[3]))
        let audio = try AudioFileContents(path: paths[0])
        #expect(audio.samples.contains { $0 != 0 })
    }

    /// A sampler sent notes that made no sound at all (its font's samples for them are broken) is reported
    /// after the render, not written as silence without a word; a font partly broken is a warning before.
    @Test func aSamplerThatMadeNoSoundIsReported() throws {
        let font = scratchPath("broken.sf2")
        let input = scratchPath("one.score")
        let output = RenderOutput(path: scratchPath("silent.wav"))
        defer { for path in [font, input, output.path] { unlink(path) } }
        // Only the last sample (the sound effects' noise loop) is whole: no piano uses it.
        TestFiles.write(TestData.soundFont { $0 != 328 }, to: font)
        writeFile(input, Array("0b note C4 1b\n".utf8))
        var options = PlaybackOptions()
        options.input = input
        options.instrument = .sampler
        options.soundFont = font
        let summary = try FileRender.run(options, to: output)
        #expect(summary.warnings.count == 2, "\(summary.warnings)")
        #expect(
            summary.warnings.first?.hasSuffix(
                "328 of 329 samples point outside its sample data; notes that use them "
                    + "will be silent") == true)
        #expect(
            summary.warnings.last == "part 'sampler' played 1 note on \(font.split(separator: "/").last!) and made "
                + "no sound: the font has no sample that sounds for them")
        #expect(try AudioFileContents(path: output.path).samples.allSatisfy { $0 == 0 })
        options.soundFont = nil
        #expect(try FileRender.run(options, to: output).warnings.isEmpty)
    }

    @Test func midiFilesRender() throws {
        typealias E = StandardMIDIFile.Event
        let input = scratchPath("song.mid")
        writeFile(
            input,
            StandardMIDIFile.encode(
                tracks: [
                    [(0, E.tempo(microsecondsPerQuarter: 600_000))],
                    [
                        (0, E.midi(.noteOn(channel: 0, note: 60, velocity: 100))),
                        (480, E.midi(.noteOff(channel: 0, note: 60, velocity: 0))),
                        // A GM reset is played (controllers back to their defaults); a GS reverb setting is not.
                        (0, E.midi(.systemExclusive([0x7E, 0x7F, 0x09, 0x01]))),
                        (480, E.midi(.systemExclusive([0x41, 0x10, 0x42, 0x12, 0x40, 0x01, 0x30, 0x04, 0x0B]))),
                    ],
                ], ticksPerQuarterNote: 480))
        let output = scratchPath("song.flac")
        defer {
            unlink(input)
            unlink(output)
        }
        var options = PlaybackOptions()
        options.input = input
        options.instrument = .sampler
        options.tail = 0.25
        let summary = try FileRender.run(options, to: RenderOutput(path: output, sample: .int24))
        #expect(summary.frames == 28_800 + 12_000)
        #expect(summary.notes.contains { $0.contains("1 system messages") })
        let audio = try AudioFileContents(path: output)
        #expect(audio.frameCount == 40_800)
        #expect(audio.samples[..<28_800].contains { $0 != 0 })
    }

    /// The synth plays a General MIDI file whole: channel 10 on its drum kit, program changes per channel;
    /// nothing is reported skipped.
    @Test func theSynthPlaysDrumsAndProgramChanges() throws {
        let input = scratchPath("song.score")
        writeFile(input, Array(score.utf8))
        let output = scratchPath("song.wav")
        defer {
            unlink(input)
            unlink(output)
        }
        var options = PlaybackOptions()
        options.input = input
        options.preset = "Pluck"
        options.dry = true
        let summary = try FileRender.run(options, to: RenderOutput(path: output))
        #expect(summary.instrumentDescription == "synth (Pluck)")
        #expect(!summary.notes.contains { $0.contains("channel") || $0.contains("program") }, "\(summary.notes)")
        // The kick (C2 on channel 10 at beat 2.5, 1.25 s in) is there: the file without it differs there.
        let withoutKick = scratchPath("no-kick.score")
        writeFile(withoutKick, Array(score.replacingOccurrences(of: "2.5b note C2 0.25b ch=10\n", with: "").utf8))
        defer { unlink(withoutKick) }
        let withKick = try AudioFileContents(path: output)
        options.input = withoutKick
        _ = try FileRender.run(options, to: RenderOutput(path: output))
        let plain = try AudioFileContents(path: output)
        let window = (2 * 60_000)..<(2 * 64_800)
        let kick = window.map { abs(withKick.samples[$0] - plain.samples[$0]) }.max()!
        // (The kit plays at FluidR3's level on FluidSynth's gain 0.2: this kick peaks near 0.049.)
        #expect(kick > 0.02, "kick peak \(kick)")
        #expect(withKick.samples[..<window.lowerBound] == plain.samples[..<window.lowerBound])
    }

    @Test func badInputIsOneLineNamingFileAndLine() throws {
        let input = scratchPath("bad.score")
        writeFile(input, Array("0b note C4 1b\n1b note C4 1b vel=200\n".utf8))
        let midi = scratchPath("bad.mid")
        writeFile(midi, Array("MThd\u{0}\u{0}\u{0}\u{6}\u{0}\u{0}\u{0}\u{1}\u{0}\u{0}".utf8))
        let formatTwo = scratchPath("two.mid")
        writeFile(formatTwo, Array("MThd\u{0}\u{0}\u{0}\u{6}\u{0}\u{2}\u{0}\u{1}\u{0}\u{60}".utf8))
        let notMIDI = scratchPath("text.mid")
        writeFile(notMIDI, Array("just text".utf8))
        let output = scratchPath("never.wav")
        defer { for path in [input, midi, formatTwo, notMIDI] { unlink(path) } }
        let cases: [(String, MIDIFileReading, String)] = [
            (input, .forgiving, "bad.score:2: velocity '200'"),
            (midi, .forgiving, "bad.mid: division of 0 ticks per quarter note"),
            (formatTwo, .strict, "two.mid: MIDI file format 2 is not supported"),
            (notMIDI, .forgiving, "not a Standard MIDI File"),
            ("/nonexistent/x.score", .forgiving, "No such file"),
        ]
        for (path, reading, expected) in cases {
            var options = PlaybackOptions()
            options.input = path
            options.midiReading = reading
            do {
                _ = try FileRender.run(options, to: RenderOutput(path: output))
                Issue.record("expected an error for \(path)")
            } catch let error as InputFileError {
                #expect(error.message.contains(expected), "\(error.message)")
                #expect(!error.message.contains("\n"))
            }
            #expect(access(output, F_OK) != 0, "no output file is left behind")
        }
    }

    @Test func theDemoPieceIsAValidScore() throws {
        let path = try #require(SearchPaths.demoScore)
        #expect(path.hasSuffix("/presets/scores/demo.score"))
        let (messages, end) = try Score(text: try FileContents.text(path, limit: 1 << 20), name: "demo")
            .scheduledMessages(sampleRate: 48_000)
        #expect(messages.count > 500)
        #expect(end == 32 * 28_800)
        #expect(Set(messages.compactMap(\.message.channel)) == [0, 1, 2, 9])
    }

    @Test func renderingThroughARigRoutesChannelsAndLayers() throws {
        let input = scratchPath("layers.score")
        writeFile(input, Array("0f note C4 0.05s ch=1\n48000f note E4 0.2s ch=2\n50000f note G2 0.1s ch=10\n".utf8))
        let rigPath = scratchPath("rig.yaml")
        writeFile(
            rigPath,
            Array(
                """
                slice: 64
                output:
                  eq: Bass Booster
                parts:
                  - instrument: synth
                    preset: Pluck
                    channels: [1, 2]
                    pan: -1
                  - instrument: sampler
                    channels: [1]
                    pan: 1
                """.utf8))
        let output = scratchPath("layers.wav")
        defer { for path in [input, rigPath, output] { unlink(path) } }
        var options = PlaybackOptions()
        options.input = input
        options.rig = try Rig.load(rigPath)
        options.tail = 0.3
        let summary = try FileRender.run(options, to: RenderOutput(path: output, sample: .float32))
        #expect(summary.slice == 64)
        // The part names no font: the summary says which one played and why (AULOS_SOUNDFONT in make test).
        #expect(summary.instrumentDescription.hasPrefix("synth (Pluck) + sampler (AulosGM.sf2"))
        #expect(summary.instrumentDescription.hasSuffix("), EQ Bass Booster"), "\(summary.instrumentDescription)")
        #expect(summary.notes.contains { $0.contains("channel 10") })
        let audio = try AudioFileContents(path: output)
        let left = stride(from: 0, to: audio.samples.count, by: 2).map { audio.samples[$0] }
        let right = stride(from: 1, to: audio.samples.count, by: 2).map { audio.samples[$0] }
        // Channel 1 plays both layers; channel 2 only the synth (hard left): the right side is quiet then.
        #expect(left[..<4800].contains { abs($0) > 0.01 } && right[..<4800].contains { abs($0) > 0.01 })
        #expect(right[50_000..<55_000].map(abs).max()! < left[50_000..<55_000].map(abs).max()! * 0.1)
    }

    /// Heard: a score that switches rigs halfway renders rig One's sound, then rig Two's, and is the same
    /// at every slice size (the switch and the controller sweep land on their frames).
    @Test func aRigSwitchInAScoreIsHeardAndSliceIndependent() throws {
        let folder = TestFiles.scratch("setrender")
        defer { TestFiles.remove(folder) }
        let path = TestData.writeRigSet(in: folder)
        let score =
            "0s note C4 0.4s\n0.5s cc 0 0 ch=16\n0.5s cc 32 1 ch=16\n0.5s program 5 ch=16\n0.6s note C4 0.4s\n1.2s "
            + "end\n"
        TestFiles.write(score, to: folder + "/score.txt")
        var outputs: [[UInt8]] = []
        for slice in [64, 256, 1000] {
            var options = PlaybackOptions()
            options.input = folder + "/score.txt"
            var set = try RigSet.load(path)
            for index in set.entries.indices { set.entries[index].rig.slice = UInt32(slice) }
            options.rigSet = set
            options.tail = 0.2
            let summary = try FileRender.run(
                options, to: RenderOutput(path: folder + "/out\(slice).wav", sample: .float32))
            #expect(summary.notes.contains("1 rig switch by program change"), "\(summary.notes)")
            outputs.append(TestFiles.bytes(folder + "/out\(slice).wav"))
        }
        #expect(outputs[0] == outputs[1] && outputs[1] == outputs[2])
        // The two notes differ: Glass Bell then Bright Lead (at half the output volume, through Rock).
        let samples = outputs[0].dropFirst(outputs[0].count - 2 * 4 * Int(1.4 * 48_000)).withUnsafeBytes {
            Array($0.bindMemory(to: Float.self))
        }
        let first = samples[0..<(2 * 19_000)].map(abs).max()!
        let second = samples[(2 * 29_000)..<(2 * 48_000)].map(abs).max()!
        #expect(first > 0.01 && second > 0.01 && abs(first - second) > 0.001, "\(first) \(second)")
    }

    /// A score's program change on the rig's snapshot channel recalls the snapshot where it stands: the render
    /// equals the same state written into the rig, sample for sample, at every slice size.
    @Test func aSnapshotRecalledByProgramChangeSoundsAsTheStateBuiltFromAFile() throws {
        let folder = TestFiles.scratch("snapshotrender")
        mkdir(folder, 0o755)
        defer { TestFiles.remove(folder) }
        let lead = "parts:\n  - name: Lead\n    instrument: synth\n    preset: Warm Pad\n    channels: [1, 2]\n"
        let recalling =
            "output:\n  eq: Flat\n" + lead + "    eq: Flat\nsnapshot-channel: 15\nsnapshots:\n  - name: Quiet\n"
            + "    values: {Lead.volume: 0.2}\n  - name: Verse\n    program: 4\n"
            + "    values: {Lead.volume: 0.5, Lead.cutoff: 900, Lead.eq: Rock, output.volume: 0.8}\n"
            + "    programs: {Lead: {2: 5}}\n"
        let built =
            "output:\n  volume: 0.8\n  eq: Flat\n" + lead
            + "    eq: Rock\n    volume: 0.5\n    parameters: {cutoff: 900}\n    programs: {2: 5}\n"
        // Half a second for the values to glide there, then a chord on both channels.
        let chord = "0.5s note C4 1s\n0.5s note E4 1s\n0.5s note G3 1s ch=2\n2s end\n"
        TestFiles.write("0s program 4 ch=15\n0s program 9 ch=15\n" + chord, to: folder + "/recall.txt")
        TestFiles.write(chord, to: folder + "/plain.txt")
        func render(_ yaml: String, _ score: String, slice: UInt32) throws -> ([Float], [String]) {
            var rig = try Rig(yaml: yaml)
            rig.slice = slice
            var options = PlaybackOptions()
            options.input = folder + "/" + score
            options.rig = rig
            options.tail = 0
            let output = folder + "/out.wav"
            let summary = try FileRender.run(options, to: RenderOutput(path: output, sample: .float32))
            return (try AudioFileContents(path: output).samples, summary.notes)
        }
        let (reference, _) = try render(built, "plain.txt", slice: 256)
        #expect(reference.map(abs).max()! > 0.01)
        for slice: UInt32 in [64, 256, 1000] {
            let (recalled, notes) = try render(recalling, "recall.txt", slice: slice)
            #expect(notes.contains("1 snapshot recalled by program change"), "\(notes)")
            let first = zip(recalled, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(recalled.count == reference.count && first == nil, "slice \(slice): frame \((first ?? 0) / 2)")
        }
        let (unrecalled, _) = try render(recalling, "plain.txt", slice: 256)
        #expect(unrecalled != reference, "without the program change the rig sounds as written")
    }

    /// A rig's output does not depend on the slice size (synth and effects; no sampler, whose placement is
    /// 64-frame-block accurate by nature).
    @Test func synthRigOutputIsIndependentOfSliceSize() throws {
        func render(slice: UInt32) throws -> [UInt8] {
            var rig = try Rig.load(TestFiles.presets + "/rigs/synth-layers.yaml")
            rig.slice = slice
            let input = scratchPath("s.score")
            writeFile(input, Array("0f note C4 0.3s\n1000f cc 7 80\n7000f note E4 0.2s\n7000f bend 1000\n".utf8))
            let output = scratchPath("s.wav")
            defer {
                unlink(input)
                unlink(output)
            }
            var options = PlaybackOptions()
            options.input = input
            options.rig = rig
            options.tail = 0.2
            _ = try FileRender.run(options, to: RenderOutput(path: output, sample: .float32))
            return fileBytes(output)
        }
        let reference = try render(slice: 256)
        for slice in [UInt32(16), 100, 1024] { #expect(try render(slice: slice) == reference, "slice \(slice)") }
    }
}

/// A zero-length note in a MIDI file (note-on and note-off at one tick) ends; a note released and struck
/// again at one tick sounds on.
@Suite struct ZeroLengthNoteTests {
    @Test func zeroLengthNotesEndAndRepeatedNotesSound() throws {
        let folder = TestFiles.scratch("zero")
        mkdir(folder, 0o755)
        defer { TestFiles.remove(folder) }
        // Format 0, 480 ticks a beat: C4 on+off at tick 0 (zero length); E4 0..480, then off+on at 480, off at 960.
        let events: [UInt8] = [
            0x00, 0x90, 60, 100, 0x00, 0x80, 60, 0, 0x00, 0x90, 64, 100,
            0x83, 0x60, 0x80, 64, 0, 0x00, 0x90, 64, 100, 0x83, 0x60, 0x80, 64, 0, 0x00, 0xFF, 0x2F, 0x00,
        ]
        let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
        let track: [UInt8] = Array("MTrk".utf8) + [0, 0, 0, UInt8(events.count)] + events
        TestFiles.write(header + track, to: folder + "/zero.mid")
        var rig = Rig(name: "one", parts: [Rig.Part(name: "Organ", instrument: .synth, channels: [1])])
        rig.parts[0].preset = "Drawbar Organ"
        let playback = try PlaybackRig(rig)
        defer { playback.close() }
        let loaded = try InputFile.load(folder + "/zero.mid", sampleRate: 48_000)
        playback.timelinePlayer.play(try RoutedInput(loaded, through: playback).timeline)
        let renderer = try OfflineRenderer(graph: playback.graph, sliceFrames: 256)
        var voicesMidway = -1
        try renderer.render(
            frameCount: 48_000,
            beforeSlice: { start, _ in
                if start == 36_096 { voicesMidway = playback.activeVoices }
            }, sink: { _, _ in })
        #expect(voicesMidway == 1, "E4 re-struck at 0.5 s sounds; the zero-length C4 has ended")
    }
}

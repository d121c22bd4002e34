import AulosAudioFile
import AulosCore
@testable import AulosHost
import AulosMIDI
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A file's bytes, through the reader the host itself uses (empty when unreadable).
func fileBytes(_ path: String) -> [UInt8] { ScriptedRender.readFile(path) ?? [] }

func writeFile(_ path: String, _ bytes: [UInt8]) {
    let file = fopen(path, "wb")!
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

@Suite struct ScriptedRenderTests {
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
                var options = RenderOptions(output: scratchPath("out-\(run).wav"))
                options.input = input
                options.instrument = instrument
                options.sample = format
                options.tail = 0.5
                let summary = try ScriptedRender.run(options)
                #expect(summary.frames == 96_000)
                paths.append(options.output)
            }
        }
        defer { for path in paths { unlink(path) } }
        #expect(fileBytes(paths[0]) == fileBytes(paths[1]))
        #expect(fileBytes(paths[2]) == fileBytes(paths[3]))
        let audio = try AudioFileContents(path: paths[0])
        #expect(audio.samples.contains { $0 != 0 })
    }

    @Test func midiFilesRender() throws {
        typealias E = StandardMIDIFile.Event
        let input = scratchPath("song.mid")
        writeFile(input, StandardMIDIFile.encode(tracks: [
            [(0, E.tempo(microsecondsPerQuarter: 600_000))],
            [(0, E.midi(.noteOn(channel: 0, note: 60, velocity: 100))), (480, E.midi(.noteOff(channel: 0, note: 60, velocity: 0))),
             (480, E.midi(.systemExclusive([0x7E, 0x7F, 0x09, 0x01])))],
        ], ticksPerQuarterNote: 480))
        let output = scratchPath("song.flac")
        defer { unlink(input); unlink(output) }
        var options = RenderOptions(output: output)
        options.input = input
        options.instrument = .sampler
        options.sample = .int24
        options.tail = 0.25
        let summary = try ScriptedRender.run(options)
        #expect(summary.frames == 28_800 + 12_000)
        #expect(summary.notes.contains { $0.contains("1 system messages") })
        let audio = try AudioFileContents(path: output)
        #expect(audio.frameCount == 40_800)
        #expect(audio.samples[..<28_800].contains { $0 != 0 })
    }

    @Test func theSynthSkipsDrumsAndProgramChangesAndSaysSo() throws {
        let input = scratchPath("song.score")
        writeFile(input, Array(score.utf8))
        let output = scratchPath("song.wav")
        defer { unlink(input); unlink(output) }
        var options = RenderOptions(output: output)
        options.input = input
        options.preset = "Pluck"
        let summary = try ScriptedRender.run(options)
        #expect(summary.instrumentDescription == "synth (Pluck)")
        #expect(summary.notes.contains { $0.contains("channel 10") })
        #expect(summary.notes.contains { $0.contains("program changes") })
    }

    @Test func badInputIsOneLineNamingFileAndLine() throws {
        let input = scratchPath("bad.score")
        writeFile(input, Array("0b note C4 1b\n1b note C4 1b vel=200\n".utf8))
        let midi = scratchPath("bad.mid")
        writeFile(midi, Array("MThd\u{0}\u{0}\u{0}\u{6}\u{0}\u{2}\u{0}\u{1}\u{0}\u{60}".utf8))
        let notMIDI = scratchPath("text.mid")
        writeFile(notMIDI, Array("just text".utf8))
        let output = scratchPath("never.wav")
        defer { for path in [input, midi, notMIDI] { unlink(path) } }
        let cases = [
            (input, "bad.score:2: velocity '200'"),
            (midi, "format 2 is not supported"),
            (notMIDI, "not a Standard MIDI File"),
            ("/nonexistent/x.score", "No such file"),
        ]
        for (path, expected) in cases {
            var options = RenderOptions(output: output)
            options.input = path
            do {
                _ = try ScriptedRender.run(options)
                Issue.record("expected an error for \(path)")
            } catch let error as AudioUnitError {
                #expect(error.detail.contains(expected), "\(error.detail)")
                #expect(!error.detail.contains("\n"))
            }
            #expect(access(output, F_OK) != 0, "no output file is left behind")
        }
    }

    @Test func theDemoPieceIsAValidScore() throws {
        let (messages, end) = try Score(text: DemoPiece.score, name: "demo").scheduledMessages(sampleRate: 48_000)
        #expect(messages.count > 500)
        #expect(end == 32 * 28_800)
        #expect(Set(messages.compactMap(\.message.channel)) == [0, 1, 2, 9])
    }
}

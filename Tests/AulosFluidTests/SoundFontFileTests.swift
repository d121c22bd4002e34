import AulosCore
import AulosTestSupport
import Foundation
import Testing

@testable import AulosFluid

#if canImport(Glibc)
import Glibc
#endif

/// A SoundFont is looked at before FluidSynth loads it: what cannot sound is an error, what is partly
/// broken a warning, and FluidSynth's (libinstpatch's) GLib CRITICAL lines never reach the terminal.
@Suite struct SoundFontFileTests {
    @Test func theBundledFontIsWhole() throws {
        let font = try SoundFontFile.inspect(TestFiles.bundledFont)
        #expect(font.sampleCount == 329 && font.playableSampleCount == 329)
        #expect(font.presetCount > 100)
        #expect(font.warnings.isEmpty)
        // The preset headers, as a panel lists them: every one, each GM program once in bank 0, drums in 128.
        #expect(font.presets.count == font.presetCount)
        #expect(Set(font.presets.filter { $0.bank == 0 }.map(\.program)) == Set(0..<128))
        #expect(font.presets.contains { $0.bank == 128 })
        #expect(font.presets.allSatisfy { !$0.name.isEmpty && $0.name.utf8.count <= 20 })
    }

    /// Every sample header outside the sample data: FluidSynth loads it and renders exact zeros with exit 0.
    /// Now an error saying why. Half of them: it plays, with a warning.
    @Test func brokenSamplesAreAnErrorOrAWarning() throws {
        let folder = TestFiles.scratch("fonts")
        mkdir(folder, 0o755)
        defer { TestFiles.remove(folder) }
        TestFiles.write(TestData.soundFont { _ in true }, to: folder + "/none.sf2")
        TestFiles.write(TestData.soundFont { $0 % 2 == 0 }, to: folder + "/half.sf2")
        do {
            _ = try SoundFontFile.inspect(folder + "/none.sf2")
            Issue.record("a font with no playable sample was accepted")
        } catch {
            #expect(
                error.detail.hasSuffix(
                    "none.sf2: no sample can sound: all 329 sample headers point outside its "
                        + "5605518 sample frames (a corrupt or truncated font)"), "\(error.detail)")
        }
        let half = try SoundFontFile.inspect(folder + "/half.sf2")
        #expect(half.playableSampleCount == 164)
        #expect(
            half.warnings == [
                "SoundFont \(folder)/half.sf2: 165 of 329 samples point outside its sample data; notes that use them "
                    + "will be silent"
            ])
        let sampler = FluidSynthSamplerUnit()
        try sampler.loadSoundFont(folder + "/half.sf2")
        #expect(sampler.soundFontWarnings == half.warnings)
    }

    /// FluidSynth holds every sample in memory: a font bigger than the memory available is refused up front
    /// rather than ending with the process killed. (The bundled font's 11.2 MB against an imagined 500 kB.)
    @Test func aFontLargerThanMemoryIsRefused() throws {
        #expect(try SoundFontFile.inspect(TestFiles.bundledFont).sampleBytes == 11_211_036)
        do {
            _ = try SoundFontFile.inspect(TestFiles.bundledFont, availableMemory: 500_000)
            Issue.record("a font larger than memory was accepted")
        } catch {
            #expect(
                error.detail.hasSuffix(
                    "its samples need 11.2 MB of memory and this machine has 500.0 kB available; use a smaller font"),
                "\(error.detail)")
        }
        #expect(systemAvailableMemory().map { $0 > 0 } == true)
    }

    @Test func whatIsNotASoundFontSaysWhat() throws {
        let folder = TestFiles.scratch("notfonts")
        mkdir(folder, 0o755)
        defer { TestFiles.remove(folder) }
        TestFiles.write(Array(TestFiles.bytes(TestFiles.bundledFont).prefix(500_000)), to: folder + "/cut.sf2")
        let cases = [
            (folder, "is a directory, not a SoundFont file"),  // it said "no RIFF 'sfbk' header"
            ("/dev/zero", "is not a regular file"),
            (folder + "/cut.sf2", "has no preset data (no 'pdta' list)"),
            ("/nonexistent.sf2", "No such file or directory"),
            (TestFiles.presets + "/scores/demo.score", "is not a SoundFont (no RIFF 'sfbk' header)"),
        ]
        for (path, expected) in cases {
            do {
                _ = try SoundFontFile.inspect(path)
                Issue.record("accepted \(path)")
            } catch {
                #expect(error.detail.contains(expected), "\(error.detail)")
            }
        }
    }

    /// Found by `make fuzz`: one byte of a whole font changed (an instrument zone's sampleID generator
    /// became sampleModes, so the zone has no sample). FluidSynth refuses it (and leaks 48 bytes doing so,
    /// its bug); Aulos says so in one line.
    @Test func aZoneWithoutASampleIsRefusedInOneLine() throws {
        let path = TestFiles.repositoryRoot + "/Tests/AulosFluidTests/Fixtures/zone-without-sample.sf2"
        #expect(try SoundFontFile.inspect(path).playableSampleCount == 1)
        let sampler = FluidSynthSamplerUnit(soundFont: path)
        try sampler.set(.streamFormat, .canonical(channels: 2, sampleRate: 48_000), scope: .output)
        do {
            try sampler.initialize()
            Issue.record("FluidSynth loaded a font with a zone that has no sample")
        } catch {
            #expect(error.detail == "SoundFont \(path): FluidSynth could not load it (corrupt or unsupported)")
        }
    }

    /// Random bytes in the preset data that FluidSynth refuses: libinstpatch says so in a GLib CRITICAL on
    /// stderr; the sampler turns it into its own one-line error and the GLib message goes to its counter.
    @Test func aFontFluidSynthRefusesIsOneLine() throws {
        var bytes = TestFiles.bytes(TestFiles.bundledFont)
        var x: UInt64 = 1  // the same 64-bit LCG the reproducer used, so the same bytes are hit
        for _ in 0..<50 {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let at = bytes.count - 20_000 + Int((x >> 33) % 20_000)
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[at] = UInt8(truncatingIfNeeded: x >> 33)
        }
        let path = TestFiles.scratch("corrupt.sf2")
        TestFiles.write(bytes, to: path)
        defer { unlink(path) }
        let before = FluidInstance.glibMessages.load(ordering: .relaxed)
        let sampler = FluidSynthSamplerUnit(soundFont: path)
        try sampler.set(.streamFormat, .canonical(channels: 2, sampleRate: 48_000), scope: .output)
        do {
            try sampler.initialize()
            Issue.record("FluidSynth loaded a corrupt font")
        } catch {
            #expect(error.detail == "SoundFont \(path): FluidSynth could not load it (corrupt or unsupported)")
        }
        #expect(FluidInstance.glibMessages.load(ordering: .relaxed) > before, "libinstpatch's CRITICAL was caught")
    }
}

import AulosSFZ
import AulosTestSupport
import Testing

/// The project's own library (sfz/aulos-test, written by scripts/make-sfz-library.py) as the unit will load it.
@Suite struct ModelLibraryTests {
    static var path: String { TestFiles.repositoryRoot + "/sfz/aulos-test/aulos-test.sfz" }

    @Test func theProjectsLibraryLoadsWithEveryOpcodeSupported() throws {
        let lib = try SFZLibrary.load(path: Self.path)
        #expect(lib.warnings.isEmpty, "\(lib.warnings)")
        #expect(lib.regions.count == 22 && lib.samples.count == 12)
        #expect(
            lib.files.map { $0.split(separator: "/").suffix(2).joined(separator: "/") } == [
                "aulos-test/aulos-test.sfz", "inc/control.sfzh", "inc/drums.sfzh",
            ])
        for path in lib.samples {
            #expect(path.hasPrefix(lib.root + "/samples/"))
            #expect(SFZDiskFiles().fileExists(path), "\(path)")
        }
        #expect(lib.controllerDefaults[7] == 127 && lib.controllerLabels[74] == "Brightness")
        #expect(lib.keyswitches == [.init(key: 24, label: "Sustain"), .init(key: 26, label: "Staccato")])
        #expect(lib.playedKeyRanges == [0...127])
        #expect(lib.curves[17]?[64] == 0.8)
        let summary = lib.summary()
        #expect(summary.contains("keyswitches: c1 (24) Sustain, d1 (26) Staccato"), "\(summary)")
        #expect(summary.contains("every opcode is supported"))
    }

    @Test func theProjectsLibraryPlaysItsFamiliesOnItsChannels() throws {
        let lib = try SFZLibrary.load(path: Self.path)
        let selector = SFZSelector(library: lib, sampleRate: 48_000, seed: 3)
        let probe = try SelectorProbe(library: lib, selector: selector)
        func names(_ regions: [Int]) -> [String] {
            regions.map { lib.regions[$0].samplePath!.split(separator: "/").last.map(String.init)! }
        }
        // Piano, sustain articulation by default: the soft layer, the crossfade band, the loud layer.
        #expect(names(probe.tap(60, 40)) == ["piano_p_c4.wav"])
        #expect(names(probe.tap(60, 70)) == ["piano_p_c4.wav", "piano_f_c4.wav"])
        #expect(names(probe.tap(60, 100)) == ["piano_f_c4.wav"])
        // The staccato keyswitch.
        #expect(probe.tap(26).isEmpty)
        #expect(names(probe.tap(60, 100)) == ["stac_c4.wav"])
        // Kick round robin.
        #expect(
            (0..<4).flatMap { _ in names(probe.tap(36)) } == ["kick_1.wav", "kick_2.wav", "kick_3.wav", "kick_1.wav"])
        // The closed hat chokes the open one.
        let open = Int32(lib.regions.firstIndex { $0.samplePath?.hasSuffix("hat_open.wav") == true }!)
        let closed = Int32(lib.regions.firstIndex { $0.samplePath?.hasSuffix("hat_closed.wav") == true }!)
        let chokes = probe.selector.chokes(started: closed, playing: open)
        #expect(chokes)
        // Release trigger on channel 1's piano keys.
        probe.on(62)
        #expect(names(probe.off(62).map { Int($0.region) }) == ["release.wav"])
        // Channel 6 chooses by CC 80.
        #expect(names(probe.on(60, channel: 5)) == ["sine_a4.wav"])
        probe.cc(80, 100, channel: 5)
        #expect(names(probe.on(61, channel: 5)) == ["saw_c3.wav"])
    }
}

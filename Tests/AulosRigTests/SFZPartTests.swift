import AulosCore
import AulosMIDI
import AulosRig
import AulosSFZ
import AulosTestSupport
import Foundation
import Testing

/// The project's own SFZ library (sfz/aulos-test, samples written by scripts/make-sfz-library.py) played by an
/// `sfz:` part through a whole rig offline: pitch, velocity layers, keyswitches, round robin, release
/// triggers, chokes at their frame, slice independence, and a render path that allocates nothing.
@Suite(.serialized) struct SFZPartTests {
    static var library: String { TestFiles.repositoryRoot + "/sfz/aulos-test/aulos-test.sfz" }

    /// A dry rig of one `sfz:` part, no limiter (it delays the output), slices up to 1,024 frames.
    static func playback(polyphony: Int? = nil) throws -> PlaybackRig {
        var rig = try Rig(yaml: "parts:\n  - instrument: \"sfz:\(library)\"\n", file: "")
        rig.parts[0].polyphony = polyphony
        rig.slice = 1024
        rig.dry = true
        rig.limiter = false
        return try PlaybackRig(rig, fileSample: .float32)
    }

    /// The left channel of `frames` frames rendered in slices of `slice` with `events` (frame, message).
    static func render(_ events: [(Int64, MIDIMessage)], frames: Int, slice: Int = 256) throws -> [Float] {
        let playback = try playback()
        defer { playback.close() }
        try playback.graph.start()
        for (frame, message) in events { #expect(playback.scheduler.schedule(message, at: frame)) }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 1024)
        var left: [Float] = []
        left.reserveCapacity(frames)
        var done = 0
        while done < frames {
            let count = min(slice, frames - done)
            harness.renderSlice(UInt32(count))
            let interleaved = harness.interleaved(frames: count)
            for index in 0..<count { left.append(interleaved[2 * index]) }
            done += count
        }
        return left
    }

    /// Frequency from the rising zero crossings of `samples` (interpolated within a frame), at 48 kHz.
    static func frequency(_ samples: ArraySlice<Float>) -> Double {
        var crossings: [Double] = []
        var previous = samples.first ?? 0
        for (index, value) in zip(samples.indices.dropFirst(), samples.dropFirst()) {
            if previous < 0 && value >= 0 {
                crossings.append(Double(index - 1) + Double(-previous / (value - previous)))
            }
            previous = value
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 2 else { return 0 }
        return 48_000 * Double(crossings.count - 1) / (last - first)
    }

    static func peak(_ samples: ArraySlice<Float>) -> Float { samples.reduce(0) { max($0, abs($1)) } }

    static func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        var (ab, aa, bb) = (0.0, 0.0, 0.0)
        for (x, y) in zip(a, b) {
            ab += Double(x) * Double(y)
            aa += Double(x) * Double(x)
            bb += Double(y) * Double(y)
        }
        return ab / max(1e-30, (aa * bb).squareRoot())
    }

    /// Channel 2 plays the 440 Hz sine with pitch_keycenter=sample (its file's `smpl` root key is a4, 69):
    /// a4 sounds at 440 Hz, a5 at 880, e4 a fifth
    /// down (329.63 Hz), within 0.1 cent (the zero crossings of a steady second).
    @Test(arguments: [(69, 440.0), (81, 880.0), (64, 329.627_556_9)])
    func aNoteSoundsAtTheSamplesPitch(key: Int, expected: Double) throws {
        let left = try Self.render(
            [(0, .noteOn(channel: 1, note: UInt8(key), velocity: 100))], frames: 24_000 + 48_000)
        let measured = Self.frequency(left[24_000...])
        let cents = 1200 * log2(measured / expected)
        #expect(abs(cents) < 0.1, "key \(key): \(measured) Hz, \(cents) cents from \(expected)")
    }

    /// Channel 1's piano: the soft layer up to velocity 79 (fading out over 64…79), the loud one from 64 (fading
    /// in over 64…79). 63 plays the soft sample alone and 80 the loud alone: their shapes differ, while a
    /// velocity step within a layer (62 and 63, 80 and 81: the filter's and envelopes' velocity tracking
    /// barely move) keeps the shape.
    @Test func velocityLayersSwitchAtTheirBoundary() throws {
        func note(_ velocity: UInt8) throws -> [Float] {
            try Self.render([(0, .noteOn(channel: 0, note: 60, velocity: velocity))], frames: 9600)
        }
        let window = 480..<4800
        let (soft, softer, loud, louder) = (try note(63), try note(62), try note(80), try note(81))
        let withinSoft = Self.correlation(soft[window], softer[window])
        let withinLoud = Self.correlation(loud[window], louder[window])
        let across = Self.correlation(soft[window], loud[window])
        #expect(withinSoft > 0.9999, "62 against 63: \(withinSoft)")
        #expect(withinLoud > 0.9999, "80 against 81: \(withinLoud)")
        #expect(across < 0.99, "63 against 80: \(across)")
    }

    /// d1 switches the piano to its staccato articulation (stac_c4.wav, one_shot, end=9599): the note is
    /// silent after its 9,600th frame. c1 (the default) plays the sustained piano, still sounding there.
    @Test func aKeyswitchChangesTheRegion() throws {
        func play(switchKey: UInt8) throws -> [Float] {
            try Self.render(
                [
                    (0, .noteOn(channel: 0, note: switchKey, velocity: 100)),
                    (10, .noteOff(channel: 0, note: switchKey, velocity: 0)),
                    (1000, .noteOn(channel: 0, note: 60, velocity: 100)),
                ], frames: 24_000)
        }
        let staccato = try play(switchKey: 26)
        let sustained = try play(switchKey: 24)
        #expect(Self.peak(staccato[1000..<2000]) > 0.01)
        #expect(Self.peak(staccato[(1000 + 9600)...]) == 0, "the staccato sample is over")
        #expect(Self.peak(sustained[(1000 + 9600)...]) > 0.01, "the sustained piano still sounds")
    }

    /// c2 is a round robin of three kicks: hits 1 and 4 are the same sample, 1, 2 and 3 are not; a second run
    /// is the same to the bit (d2's random choice too, seeded).
    @Test func roundRobinCyclesAndRepeats() throws {
        let spacing: Int64 = 14_400  // 0.3 s, longer than a kick
        var events: [(Int64, MIDIMessage)] = []
        for hit in 0..<4 { events.append((Int64(hit) * spacing, .noteOn(channel: 0, note: 36, velocity: 100))) }
        for hit in 4..<10 { events.append((Int64(hit) * spacing, .noteOn(channel: 0, note: 38, velocity: 100))) }
        let first = try Self.render(events, frames: 10 * Int(spacing))
        let second = try Self.render(events, frames: 10 * Int(spacing))
        // (Booleans, not arrays, in the expectations: a failing array comparison prints a diff that takes
        // minutes to compute.)
        let repeated = first == second
        #expect(repeated, "a second run differs")
        func hit(_ index: Int) -> ArraySlice<Float> { first[(index * Int(spacing))..<(index * Int(spacing) + 9600)] }
        let cycles = hit(0) == hit(3)
        let differ = hit(0) != hit(1) && hit(1) != hit(2) && hit(0) != hit(2)
        #expect(cycles, "hit 4 plays hit 1's sample")
        #expect(differ, "hits 1, 2 and 3 play three samples")
        #expect(Self.peak(hit(0)) > 0.05)
    }

    /// The piano's release region (release.wav, rt_decay=6) starts at the note-off's frame: with the staccato
    /// articulation over, nothing sounds before it and something from it. Held a second longer, it is 6 dB
    /// quieter.
    @Test func aReleaseTriggerFiresOnNoteOff() throws {
        func play(offAt: Int64) throws -> [Float] {
            try Self.render(
                [
                    (0, .noteOn(channel: 0, note: 26, velocity: 100)),
                    (0, .noteOn(channel: 0, note: 60, velocity: 100)),
                    (offAt, .noteOff(channel: 0, note: 60, velocity: 0)),
                ], frames: Int(offAt) + 9600)
        }
        let early = try play(offAt: 12_000)
        #expect(Self.peak(early[9700..<12_000]) == 0)
        let first = early[12_000...].firstIndex { $0 != 0 } ?? -1
        #expect(first >= 12_000 && first < 12_004, "the release region starts at \(first)")
        let late = try play(offAt: 60_000)
        let ratio = Self.peak(late[60_000...]) / Self.peak(early[12_000...])
        #expect(abs(20 * log10(Double(ratio)) + 6) < 0.1, "\(20 * log10(Double(ratio))) dB after a second more")
    }

    /// The closed hi-hat (f#2, group 1) chokes the open one (a#2, off_by=1) at the closed hat's frame: until
    /// then the open hat alone, after a short fade nothing of it.
    @Test func offByChokesAtTheEventsFrame() throws {
        let open: (Int64, MIDIMessage) = (0, .noteOn(channel: 0, note: 46, velocity: 100))
        let closed: (Int64, MIDIMessage) = (6000, .noteOn(channel: 0, note: 42, velocity: 100))
        let openAlone = try Self.render([open], frames: 12_000)
        let both = try Self.render([open, closed], frames: 12_000)
        let closedAlone = try Self.render([closed], frames: 12_000)
        let unchanged = both[..<6000] == openAlone[..<6000]
        #expect(unchanged, "nothing changes before the choke")
        #expect(both[6000] != openAlone[6000] + closedAlone[6000] || both[6001] != openAlone[6001] + closedAlone[6001])
        let fade = 6000 + 200  // the 3 ms fade
        let residue = zip(both[fade...], closedAlone[fade...]).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
        #expect(residue == 0, "the open hat still sounds after its choke: \(residue)")
        #expect(Self.peak(openAlone[fade...]) > 0.01, "unchoked, it would")
    }

    /// Everything at once (keyswitch, layers, drums, a choke, pedals, bends and controllers moving the pad)
    /// renders the same to the bit in slices of 64 and 1000 frames.
    @Test func slicesOf64And1000AreBitIdentical() throws {
        let events = Self.busyScore(notes: 40)
        let small = try Self.render(events, frames: 150_000, slice: 64)
        let large = try Self.render(events, frames: 150_000, slice: 1000)
        #expect(Self.peak(small[...]) > 0.05)
        let identical = small == large
        #expect(identical, "first difference at \(small.indices.first { small[$0] != large[$0] } ?? -1)")
    }

    static func busyScore(notes: Int) -> [(Int64, MIDIMessage)] {
        var events: [(Int64, MIDIMessage)] = [(0, .controlChange(channel: 0, controller: 1, value: 40))]
        for index in 0..<notes {
            let time = Int64(index) * 3001
            let key = UInt8([36, 38, 42, 46, 60, 64, 67, 84, 88, 91][index % 10])
            let velocity = UInt8(30 + index * 37 % 97)
            events.append((time, .noteOn(channel: 0, note: key, velocity: velocity)))
            events.append((time + 7003, .noteOff(channel: 0, note: key, velocity: 0)))
            events.append((time + 501, .controlChange(channel: 0, controller: 74, value: UInt8(index * 13 % 128))))
            events.append((time + 777, .pitchBend(channel: 0, value: UInt16(8192 + (index % 5 - 2) * 1500))))
            events.append((time + 1234, .noteOn(channel: 1, note: UInt8(57 + index % 24), velocity: 90)))
            events.append((time + 2900, .noteOff(channel: 1, note: UInt8(57 + index % 24), velocity: 0)))
            if index % 8 == 3 { events.append((time + 100, .controlChange(channel: 0, controller: 64, value: 127))) }
            if index % 8 == 6 { events.append((time + 100, .controlChange(channel: 0, controller: 64, value: 0))) }
            if index % 13 == 5 { events.append((time, .noteOn(channel: 0, note: 26, velocity: 100))) }
            if index % 13 == 9 { events.append((time, .noteOn(channel: 0, note: 24, velocity: 100))) }
        }
        return events
    }

    /// Notes starting and stopping, pedals, bends and controllers, through the whole rig: the render thread
    /// allocates nothing (after a warm-up).
    @Test func renderingAllocatesNothing() throws {
        let playback = try Self.playback(polyphony: 16)
        defer { playback.close() }
        try playback.graph.start()
        for (frame, message) in Self.busyScore(notes: 200) { playback.scheduler.schedule(message, at: frame) }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 1024)
        for _ in 0..<50 { harness.renderSlice(64) }
        for _ in 0..<9000 { harness.renderSlice(64, counting: true) }
        let player = playback.instruments[0] as! SFZInstrumentUnit
        #expect(player.playedNotes > 100)
        #expect(playback.scheduler.droppedCount == 0)
        try expectNoAllocations(harness.allocations)
    }

    /// The rig reports each SFZ part's streaming for the status and the play report: a 1.5 s piano note
    /// (72,000 frames, longer than the 16,384 frames kept whole) streams its tail; offline nothing is late.
    @Test func theStatusShowsWhatStreamed() throws {
        let playback = try Self.playback()
        defer { playback.close() }
        #expect(playback.sampleStreaming.map(\.streamedBytes) == [0])
        try playback.graph.start()
        playback.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: 0)
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 1024)
        for _ in 0..<70 { harness.renderSlice(1024) }
        let streaming = try #require(playback.sampleStreaming.first)
        #expect(streaming.part == playback.parts[0].part.name)
        #expect(streaming.streamedBytes > 0, "\(streaming)")
        #expect(streaming.preloadedBytes > 0)
        #expect(streaming.underruns == 0 && streaming.lateFrames == 0)
        #expect(SampleStreamingStatus.total([streaming, streaming])?.streamedBytes == 2 * streaming.streamedBytes)
    }

    /// A live reload preloads the new rig's libraries while the old one plays: the build then takes the
    /// library loaded (the same object), so the silence between the rigs is not a library's load.
    @Test func aReloadFindsItsLibraryPreloaded() throws {
        var rig = try Rig(yaml: "parts:\n  - instrument: \"sfz:\(Self.library)\"\n", file: "")
        rig.dry = true
        let set = RigSet(rig)
        PlaybackRig.preloadSampleLibraries(of: set)
        defer { PlaybackRig.releasePreloadedSampleLibraries() }
        // Held by the preload alone (a weak reference here): nothing else in this test keeps it.
        weak var preloaded = try SFZLibraryCache.shared.library(at: Self.library, limits: SFZSampleStore.Limits())
        #expect(preloaded != nil)
        let playback = try PlaybackRig(set: set, fileSample: .float32)
        defer { playback.close() }
        #expect(preloaded != nil && (playback.instruments[0] as? SFZInstrumentUnit)?.loaded === preloaded)
    }

    /// Channel 4 crossfades sine into saw on the modulation wheel (`xfout_locc1`/`xfin_locc1`): a held note
    /// follows the wheel. Moved from 0 to 127 at 0.1 s, the note then sounds as it does with the wheel at 127
    /// from the start (once the glide has settled: it moves in decibels with a 10 ms time constant, so a layer
    /// coming in from silence, −144 dB, takes about 70 ms to reach its level), and before the move as with the
    /// wheel at 0. (C3 is the saw's own key, so both layers sound through the frames compared.)
    @Test func aControllerCrossfadeFollowsTheWheelWhileTheNoteSounds() throws {
        func play(wheel: UInt8, movedTo moved: UInt8?) throws -> [Float] {
            var events: [(Int64, MIDIMessage)] = [
                (0, .controlChange(channel: 3, controller: 1, value: wheel)),
                (0, .noteOn(channel: 3, note: 48, velocity: 100)),
            ]
            if let moved { events.append((4800, .controlChange(channel: 3, controller: 1, value: moved))) }
            return try Self.render(events, frames: 21_000)
        }
        func difference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
            let error = zip(a, b).reduce(0.0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
            return (error / max(1e-12, b.reduce(0.0) { $0 + Double($1) * Double($1) })).squareRoot()
        }
        let moving = try play(wheel: 0, movedTo: 127)
        let sine = try play(wheel: 0, movedTo: nil)
        let saw = try play(wheel: 127, movedTo: nil)
        #expect(Self.peak(saw[6000..<20_000]) > 0.05 && Self.peak(sine[6000..<20_000]) > 0.05)
        #expect(difference(sine[6000..<20_000], saw[6000..<20_000]) > 0.5, "the two layers differ")
        #expect(difference(moving[500..<4800], sine[500..<4800]) < 1e-6)
        let after = difference(moving[9600..<20_000], saw[9600..<20_000])
        #expect(after < 0.01, "after the wheel moved: \(after) of the saw's level away from it")
    }

    /// A region asked to loop with no loop points, in a file that states none (as jRhodes3c's looped FLACs
    /// are), loops the whole sample: offline, a 40,000-frame sample (longer than a stream's ring) sounds on
    /// past its end. (It used to wait for the loader without end: the loop ran past what the ring can hold.)
    @Test func aWholeSampleLoopWithoutLoopPointsKeepsSounding() throws {
        let folder = TestFiles.scratch("sfz-whole-loop")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { TestFiles.remove(folder) }
        TestFiles.writeConstantWAV(folder + "/long.wav", value: 8000, frames: 40_000)
        try "<region> sample=long.wav loop_mode=loop_continuous ampeg_release=0.01\n".write(
            toFile: folder + "/loop.sfz", atomically: true, encoding: .utf8)
        var rig = try Rig(yaml: "parts:\n  - instrument: sfz:loop.sfz\n", file: folder + "/rig.yaml")
        rig.slice = 1024
        rig.dry = true
        rig.limiter = false
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        try playback.graph.start()
        playback.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 127), at: 0)
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 1024)
        var left: [Float] = []
        for _ in 0..<100 {
            harness.renderSlice(1000)
            let interleaved = harness.interleaved(frames: 1000)
            for index in 0..<1000 { left.append(interleaved[2 * index]) }
        }
        let quietest = left[1000..<100_000].map(abs).min() ?? 0
        #expect(quietest > 0.05, "the loop fell silent (quietest \(quietest))")
        #expect(playback.sampleStreaming.first?.underruns == 0)
    }

    /// A malformed library is one line naming its file and line, never a crash.
    /// A library's path is relative to the rig file's folder, and a rig written back reads back the same: the
    /// fuzzer found `sfz:h` in a file named without a folder read as `./h`, then `././h` (make fuzz, target rig).
    @Test func aLibraryPathReadsBackAsWritten() throws {
        for (file, expected) in [("rig.yaml", "h"), ("", "h"), ("stage/rig.yaml", "stage/h"), ("/rig.yaml", "/h")] {
            let rig = try Rig(yaml: "parts:\n  - instrument: sfz:h\n", file: file)
            #expect(rig.parts.first?.library == expected, "\(file)")
            #expect(try Rig(yaml: rig.yaml(), file: "again.yaml") == rig, "\(file): \(rig.yaml())")
        }
        #expect(
            try Rig(yaml: "parts:\n  - instrument: sfz:/abs/h.sfz\n", file: "x/rig.yaml").parts[0].library
                == "/abs/h.sfz")
    }

    @Test func aMalformedLibraryIsOneLineWithFileAndLine() throws {
        let folder = TestFiles.scratch("sfz-bad")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { TestFiles.remove(folder) }
        try "<region> sample=a.wav\n<region lokey=60\n".write(
            toFile: folder + "/bad.sfz", atomically: true, encoding: .utf8)
        do {
            _ = try PlaybackRig(try Rig(yaml: "parts:\n  - instrument: sfz:bad.sfz\n", file: folder + "/rig.yaml"))
            Issue.record("a malformed library loaded")
        } catch {
            let message = (error as? RigError)?.message ?? "\(error)"
            #expect(!message.contains("\n"), "\(message)")
            #expect(message.contains("bad.sfz:"), "\(message)")
        }
    }
}

import AulosALSA
import AulosAudioFile
import AulosCore
import AulosIO
import AulosMIDI
import AulosRig
import AulosTestSupport
import AulosUnits
import Foundation
import Glibc
import Testing

@testable import AulosPlayback

#if canImport(Glibc)
#endif

/// Each part recorded on its own (`aulos play --record-parts`, `aulos render --parts`): the part's own
/// output through a tap after its effects and EQ, beside the master's file.
@Suite(.serialized) struct PartRecordingTests {
    /// Three parts: Lead on channel 1, Pad on 2, and Idle on 5, which the score never plays.
    static let rig = """
        name: Three
        slice: 64
        returns:
          - name: hall
            cc: 91
            effects:
              - unit: reverb
                preset: Hall
        parts:
          - name: Lead
            instrument: synth
            channels: [1]
            eq: Bass Booster
            pan: -0.5
          - name: Pad
            instrument: synth
            channels: [2]
            preset: Warm Pad
            volume: 0.5
          - name: Idle
            instrument: synth
            channels: [5]
        """

    static let score = """
        0b tempo 120
        0b note C4 1b vel=100
        0.5b note E4 1b vel=90
        1b note G4 2b vel=80 ch=2
        0b cc 91 90
        3b end
        """

    @Test func partFilesAreNamedBesideTheMastersAndTellPartsApart() {
        #expect(
            PartFileNames.paths(beside: "out/take.wav", parts: ["Piano", "Band Bass", "Piano", "", "../x", "ä"])
                == [
                    "out/take.Piano.wav", "out/take.Band-Bass.wav", "out/take.Piano-2.wav", "out/take.part.wav",
                    "out/take...-x.wav", "out/take.-.wav",
                ])
        #expect(PartFileNames.paths(beside: "a.b/take", parts: ["P"]) == ["a.b/take.P"])
        #expect(PartFileNames.paths(beside: "x.flac", parts: [".."]) == ["x.part.flac"])
    }

    /// Played live on the null PCM, the master and each part's recording are the offline render's (the same
    /// files, rendered with `parts`), sample for sample; the part that plays nothing is silent, the others
    /// are not, and no two parts are the same.
    @Test func eachPartRecordedLiveIsItsOfflineRender() throws {
        let folder = TestFiles.scratch("parts-\(getpid())")
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        TestFiles.write(Self.score, to: folder + "/song.score")
        var options = PlaybackOptions()
        options.input = folder + "/song.score"
        options.rig = try Rig(yaml: Self.rig)
        options.tail = 0.5
        options.shedsVoicesUnderOverload = false
        let summary = try FileRender.run(
            options, to: RenderOutput(path: folder + "/offline.wav", sample: .float32, parts: true))
        #expect(summary.partFiles == ["Lead", "Pad", "Idle"].map { folder + "/offline.\($0).wav" })

        options.record = folder + "/live.wav"
        options.recordParts = true
        let session = AudioSession(driver: .alsa, device: "null")
        session.pacesUnpacedDevices = false
        let status = try FilePlayback.run(options, session: session, duration: nil)
        #expect(status.recording?.dropped == 0)

        var parts: [[Float]] = []
        for name in ["", ".Lead", ".Pad", ".Idle"] {
            let live = try AudioFileContents(path: folder + "/live\(name).wav")
            let reference = try AudioFileContents(path: folder + "/offline\(name).wav")
            // The run ends on a whole period, after the output stage's look-ahead has let the master's tail out:
            // the parts, tapped before that stage, hold that much more of their (silent) tail.
            let extra = name.isEmpty ? 0 : PeakLimiterUnit.latencyFrames(sampleRate: 48_000)
            #expect(
                live.frameCount >= reference.frameCount && live.frameCount < reference.frameCount + 64 + extra,
                "\(name)")
            #expect(Array(live.samples[..<reference.samples.count]) == reference.samples, "live\(name).wav")
            if !name.isEmpty { parts.append(reference.samples) }
        }
        #expect(parts[0].contains { $0 != 0 } && parts[1].contains { $0 != 0 })
        #expect(!parts[2].contains { $0 != 0 }, "a part that plays nothing records silence")
        #expect(parts[0] != parts[1])
    }

    /// With the taps attached to recorders, 10,000 slices of the rig (notes, reverb send) allocate nothing.
    @Test func recordingEveryPartAllocatesNothing() throws {
        var rig = try Rig(yaml: Self.rig)
        rig.slice = 64
        let playback = try PlaybackRig(set: RigSet(rig), fileSample: .float32, tappingParts: true)
        defer { playback.close() }
        let taps = try #require(playback.partTaps)
        let recorders = try (0..<taps.count).map { index in
            try Recorder(path: TestFiles.scratch("tap-\(index).wav"), sampleRate: 48_000, ringSeconds: 1, stall: nil)
        }
        for (index, recorder) in recorders.enumerated() { taps.attach(recorder.sliceSink, toPart: index) }
        try playback.graph.start()
        for step in 0..<400 {
            let time = Int64(step) * 1600
            playback.scheduler.schedule(
                .noteOn(channel: UInt8(step % 2), note: UInt8(48 + step % 24), velocity: 100), at: time)
            playback.scheduler.schedule(
                .noteOff(channel: UInt8(step % 2), note: UInt8(48 + step % 24), velocity: 0), at: time + 4000)
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat, maximumFrames: 64)
        for _ in 0..<100 { harness.renderSlice(64) }
        for _ in 0..<10_000 { harness.renderSlice(64, counting: true) }
        for index in recorders.indices { taps.attach(nil, toPart: index) }
        for (index, recorder) in recorders.enumerated() {
            let frames = try recorder.finish().frames
            #expect(frames + Int64(recorder.droppedFrames) == 10_100 * 64, "part \(index)")
            unlink(recorder.path)
        }
        try expectNoAllocations(harness.allocations, "recording every part")
        // With every unit timed (per-part CPU): the rig's parts and their taps were measured as they rendered.
        #expect(UnitTiming.isEnabled)
        #expect(playback.parts.allSatisfy { part in part.units.contains { $0.renderNanos > 0 } })
        #expect(playback.parts.allSatisfy { !$0.sideOutputs.isEmpty && $0.sideOutputs[0].renderNanos > 0 })
        #expect(playback.graph.notifyNanos > 0)
    }
}

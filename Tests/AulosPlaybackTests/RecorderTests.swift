import AulosALSA
import AulosAudioFile
import AulosCore
import AulosIO
import AulosTestSupport
import Foundation
import Glibc
import Testing

@testable import AulosPlayback

#if canImport(Glibc)
#endif

/// `aulos play --record`: the master output through a lock-free ring to a disk thread into a file that is
/// whole when the run ends; a stalled disk costs no xrun, and past the ring's capacity whole cycles are
/// dropped and counted.
@Suite(.serialized) struct RecorderTests {
    static let score = """
        0b tempo 120
        0b note C4 1b vel=100
        0.5b note E4 1b vel=90
        1b note G4 2b vel=80 ch=2
        1.5b note C2 0.25b ch=10
        3b end
        """

    /// Plays `score` on alsa-lib's null PCM (paced by the clock unless `unpaced`) recording to `record`.
    static func play(record: String, unpaced: Bool, tail: Double = 0.5) throws -> LiveStatus {
        let scorePath = TestFiles.scratch("record.score")
        TestFiles.write(score, to: scorePath)
        defer { unlink(scorePath) }
        var options = PlaybackOptions()
        options.input = scorePath
        options.slice = 64
        options.tail = tail
        options.record = record
        options.shedsVoicesUnderOverload = false
        let session = AudioSession(driver: .alsa, device: "null")
        session.pacesUnpacedDevices = !unpaced
        return try FilePlayback.run(options, session: session, duration: nil)
    }

    /// What is recorded is the offline render of the same file, sample for sample (the live run ends on a
    /// whole period, so the recording may run a few frames longer, all of them the tail's silence).
    @Test func aRecordingIsTheOfflineRender() throws {
        let recorded = TestFiles.scratch("recorded.wav")
        let offline = TestFiles.scratch("offline.wav")
        let scorePath = TestFiles.scratch("offline.score")
        TestFiles.write(Self.score, to: scorePath)
        defer { for path in [recorded, offline, scorePath] { unlink(path) } }
        let status = try Self.play(record: recorded, unpaced: true)
        var options = PlaybackOptions()
        options.input = scorePath
        options.slice = 64
        options.tail = 0.5
        _ = try FileRender.run(options, to: RenderOutput(path: offline, sample: .float32))
        let live = try AudioFileContents(path: recorded)
        let reference = try AudioFileContents(path: offline)
        #expect(status.recording?.dropped == 0)
        #expect(Int64(live.frameCount) == status.recording?.frames)
        #expect(live.frameCount >= reference.frameCount && live.frameCount < reference.frameCount + 64)
        #expect(Array(live.samples[..<reference.samples.count]) == reference.samples)
        #expect(reference.samples.contains { $0 != 0 })
    }

    /// A disk that stalls for three seconds (from 1 s in) of a 4.5-second real-time run: no xrun, no frame
    /// lost, the file whole.
    @Test func aStalledDiskCostsNoXrun() throws {
        let recorded = TestFiles.scratch("stalled.wav")
        defer { unlink(recorded) }
        setenv("AULOS_RECORD_STALL_SECONDS", "3", 1)
        defer { unsetenv("AULOS_RECORD_STALL_SECONDS") }
        let status = try Self.play(record: recorded, unpaced: false, tail: 3)
        #expect(status.statistics.xruns == 0)
        #expect(status.recording?.dropped == 0)
        let file = try AudioFileContents(path: recorded)
        #expect(Int64(file.frameCount) == status.recording?.frames)
        #expect(Double(file.frameCount) / 48_000 >= 4.5)
    }

    /// Past the ring's capacity the render side drops whole cycles and counts them; what fitted is written.
    @Test func pastTheRingWholeCyclesAreDroppedAndCounted() throws {
        let path = TestFiles.scratch("dropped.flac")
        defer { unlink(path) }
        let recorder = try Recorder(path: path, sampleRate: 48_000, ringSeconds: 0.1, stall: (after: 0, seconds: 0.5))
        let list = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: 64)
        list.list.pointee.setFrameCount(64, bytesPerFrame: 4)
        list.list.pointee.floatChannel(0).update(repeating: 0.25, count: 64)
        list.list.pointee.floatChannel(1).update(repeating: -0.25, count: 64)
        // 0.4 s of cycles while the disk thread sleeps: 0.1 s fits.
        for _ in 0..<300 { _ = recorder.tap.pointee.take(frameCount: 64, at: 0, list.list) }
        let frames = try recorder.finish().frames
        #expect(recorder.droppedFrames > 0 && recorder.droppedFrames % 64 == 0)
        #expect(frames + Int64(recorder.droppedFrames) == 300 * 64)
        let file = try AudioFileContents(path: path)
        #expect(Int64(file.frameCount) == frames)
        #expect(abs(file.samples[0] - 0.25) < 1e-6 && abs(file.samples[1] + 0.25) < 1e-6)
    }

    /// The render side of a recording — 10,000 cycles of 64 frames into the ring while the disk thread
    /// drains it, some of them dropped — allocates nothing.
    @Test func feedingTheRingAllocatesNothing() throws {
        let path = TestFiles.scratch("counted.wav")
        defer { unlink(path) }
        let recorder = try Recorder(path: path, sampleRate: 48_000, ringSeconds: 1, stall: nil)
        let list = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: 64)
        list.list.pointee.setFrameCount(64, bytesPerFrame: 4)
        var tally = AllocationTally()
        for cycle in 0..<10_000 {
            list.list.pointee.floatChannel(0)[cycle % 64] = Float(cycle % 100) / 100
            _ = tally.count { recorder.tap.pointee.take(frameCount: 64, at: 0, list.list) }
        }
        let frames = try recorder.finish().frames
        #expect(frames + Int64(recorder.droppedFrames) == 10_000 * 64)
        try expectNoAllocations(tally, "feeding the recorder")
    }

    /// A recording never finished (a run that failed to start) stops its disk thread and leaves nothing:
    /// no file, no temporary beside it, and a file already there as it was.
    @Test func aRecordingNeverFinishedLeavesTheTargetAlone() throws {
        let path = TestFiles.scratch("unfinished.wav")
        TestFiles.write("an older take", to: path)
        defer { unlink(path) }
        do {
            let recorder = try Recorder(path: path, sampleRate: 48_000, stall: nil)
            let list = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: 64)
            list.list.pointee.setFrameCount(64, bytesPerFrame: 4)
            for _ in 0..<100 { _ = recorder.tap.pointee.take(frameCount: 64, at: 0, list.list) }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "an older take")
        let folder = (path as NSString).deletingLastPathComponent
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            $0.hasPrefix((path as NSString).lastPathComponent + ".partial")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// A recorder's window: of slices at graph frames 0, 64, 128 and 192, only frames 100 to 150 reach the
    /// file, whatever slice they fall in (a recording's master and parts share one window, so they start
    /// and end on one frame).
    @Test func onlyTheWindowsFramesAreRecorded() throws {
        let path = TestFiles.scratch("window.wav")
        defer { unlink(path) }
        let recorder = try Recorder(path: path, sampleRate: 48_000, stall: nil)
        recorder.window(from: 100, to: 150)
        let list = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: 64)
        list.list.pointee.setFrameCount(64, bytesPerFrame: 4)
        for start in stride(from: Int64(0), to: 256, by: 64) {
            for frame in 0..<64 {
                list.list.pointee.floatChannel(0)[frame] = Float(start + Int64(frame)) / 1000
                list.list.pointee.floatChannel(1)[frame] = -Float(start + Int64(frame)) / 1000
            }
            _ = recorder.tap.pointee.take(frameCount: 64, at: start, list.list)
        }
        #expect(try recorder.finish().frames == 50)
        let file = try AudioFileContents(path: path)
        #expect(file.samples.first == 0.1 && file.samples[1] == -0.1 && file.samples.last == -0.149, "\(file.samples)")
    }

    /// A FLAC take is converted by the project's own conversion: a NaN from a misbehaving unit becomes
    /// silence (the recorder's first packer made it a full-scale sample), and over full scale clips.
    @Test func aFLACTakeSurvivesNaNAndClips() throws {
        let path = TestFiles.scratch("odd.flac")
        defer { unlink(path) }
        let recorder = try Recorder(path: path, sampleRate: 48_000, stall: nil)
        let list = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: 64)
        list.list.pointee.setFrameCount(64, bytesPerFrame: 4)
        list.list.pointee.floatChannel(0).update(repeating: .nan, count: 64)
        list.list.pointee.floatChannel(1).update(repeating: 4, count: 64)
        _ = recorder.tap.pointee.take(frameCount: 64, at: 0, list.list)
        #expect(try recorder.finish().frames == 64)
        let file = try AudioFileContents(path: path)
        #expect(file.samples[0] == 0)
        #expect(file.samples[1] > 0.999)
    }

    /// A disk that fills mid-take (a 1 MiB tmpfs: 2.7 s of float stereo): the recorder finishes the file with
    /// what fitted and puts it in place as it happens, says so through `failure`, and stops writing; the
    /// file is a valid WAV whose header describes every whole frame in it. (It was deleted at the end.)
    @Test(.enabled(if: SmallDisk.canMount, SmallDisk.skipReason))
    func aFullDiskKeepsWhatFitAndSaysSo() throws {
        let disk = try SmallDisk(size: "1m")
        let path = disk.folder + "/take.wav"
        let recorder = try Recorder(path: path, sampleRate: 48_000, stall: nil)
        let list = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: 64)
        list.list.pointee.setFrameCount(64, bytesPerFrame: 4)
        list.list.pointee.floatChannel(0).update(repeating: 0.25, count: 64)
        list.list.pointee.floatChannel(1).update(repeating: -0.25, count: 64)
        // 5 s of cycles (the ring holds 10): more than the disk holds.
        for _ in 0..<(5 * 750) { _ = recorder.tap.pointee.take(frameCount: 64, at: 0, list.list) }
        Wait.until(seconds: 5) { recorder.failure != nil }
        let failure = try #require(recorder.failure, "the full disk was not reported")
        #expect(failure.contains("No space left on device") && failure.contains("are kept in it"), "\(failure)")
        // In place and whole already, before the recording is stopped (the process may yet be killed).
        let sizes = try #require(WAVHeaderRepair.sizes(of: path))
        #expect(sizes.described == sizes.present)
        #expect(Double(sizes.present) / 48_000 > 2.5, "\(sizes.present) frames kept")
        let outcome = try recorder.finish()
        #expect(outcome.failure == failure)
        #expect(outcome.frames == sizes.present)
        #expect(recorder.droppedFrames == 0)
        let file = try AudioFileContents(path: path)
        #expect(Int64(file.frameCount) == outcome.frames)
        #expect(file.samples.last == -0.25)
        let names = try FileManager.default.contentsOfDirectory(atPath: disk.folder)
        #expect(names == ["take.wav"], "no temporary file left")
    }

    /// A FLAC take on a full disk is kept too: libFLAC's blocks that reached the disk read back.
    @Test(.enabled(if: SmallDisk.canMount, SmallDisk.skipReason))
    func aFullDiskKeepsAFLACTake() throws {
        let disk = try SmallDisk(size: "1m")
        let path = disk.folder + "/take.flac"
        let recorder = try Recorder(path: path, sampleRate: 48_000, stall: nil)
        let list = AudioBufferListStorage(format: .canonical(channels: 2, sampleRate: 48_000), maximumFrames: 64)
        list.list.pointee.setFrameCount(64, bytesPerFrame: 4)
        var random = SeededRandom(seed: 7)
        // Noise, so FLAC cannot make it small: 5 s fill the disk.
        for _ in 0..<(5 * 750) {
            for channel in 0..<2 {
                for frame in 0..<64 {
                    list.list.pointee.floatChannel(channel)[frame] = Float(random.next() % 1000) / 1000 - 0.5
                }
            }
            _ = recorder.tap.pointee.take(frameCount: 64, at: 0, list.list)
        }
        let outcome = try recorder.finish()
        let failure = try #require(outcome.failure)
        #expect(failure.contains("No space left on device"), "\(failure)")
        let file = try AudioFileContents(path: path)
        print("a full disk's FLAC: \(file.frameCount) frames read back, \(outcome.frames) handed to the encoder")
        #expect(Double(file.frameCount) / 48_000 > 2, "\(file.frameCount) frames read back")
    }
}

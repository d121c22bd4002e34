import AulosALSA
import AulosAudioFile
import AulosCore
import AulosIO
import AulosTestSupport
import AulosUnits
import Foundation
import Glibc
import Testing

@testable import AulosPlayback

#if canImport(Glibc)
#endif

/// `aulos play FILE` through alsa-lib's real code paths with no sound card: a `file` PCM (writes a WAV of
/// exactly what was played) over a `null` PCM (accepts everything, unpaced — like a device that takes audio
/// faster than real time). The render thread reads the file's events by sample time, so what is played is
/// the offline render, sample for sample, with the default settings, however long the file and however late
/// the control thread.
@Suite(.serialized) struct FilePlaybackTests {
    static func fileSession(_ path: String) -> AudioSession {
        let session = AudioSession(
            driver: .alsa, device: TestData.fileDevice, configuration: TestData.fileDeviceConfiguration(path))
        session.preferredFormat = .int16
        session.pacesUnpacedDevices = false  // as fast as the device takes it: what is compared is the audio
        return session
    }

    /// Renders `score` offline and plays it on the file device with the same options (slice 64, the
    /// defaults otherwise); `stall` runs on the control thread's first tick. Returns (played, offline).
    static func playAndRender(_ score: String, duration: Double? = nil, stall: @escaping () -> Void = {}) throws -> (
        AudioFileContents, AudioFileContents
    ) {
        let scorePath = TestFiles.scratch("play.score")
        TestFiles.write(score, to: scorePath)
        let played = TestFiles.scratch("played.wav")
        let offline = TestFiles.scratch("offline.wav")
        defer { for path in [scorePath, played, offline] { unlink(path) } }
        var options = PlaybackOptions()
        options.input = scorePath
        options.preset = "Warm Pad"
        options.slice = 64
        options.tail = 1
        // The device is unpaced, so the I/O thread renders back to back and its DSP load is how fast this
        // machine renders: under a sanitizer or on a busy CI machine it reads above 80 %, and the overload
        // governor would (rightly) end voices the offline render keeps.
        options.shedsVoicesUnderOverload = false
        _ = try FileRender.run(options, to: RenderOutput(path: offline, sample: .int16))
        var observer = PlaybackObserver()
        var stalled = false
        observer.status = { _ in
            if !stalled { stall() }
            stalled = true
        }
        let final = try FilePlayback.run(options, session: fileSession(played), duration: duration, observer: observer)
        #expect(final.grant.format == .int16)
        #expect(final.grant.period == 64)
        #expect(final.statistics.xruns == 0)
        return (try AudioFileContents(path: played), try AudioFileContents(path: offline))
    }

    /// The first frame where the two differ, comparing as much as both hold (nil: none). What goes out
    /// live is the offline render behind the output stage's look-ahead (an offline render leaves it out):
    /// silence for those frames, then the render sample for sample.
    static func firstDifference(_ live: AudioFileContents, _ reference: AudioFileContents) -> Int? {
        let latency = PeakLimiterUnit.latencyFrames(sampleRate: 48_000)
        for index in 0..<(2 * latency) where live.samples[index] != 0 { return index / 2 }
        let frames = min(live.frameCount - latency, reference.frameCount)
        for index in 0..<(frames * 2) where live.samples[2 * latency + index] != reference.samples[index] {
            return latency + index / 2
        }
        return nil
    }

    static let chord = """
        0b tempo 120
        0b note C4 1b vel=100
        0.5b note E4 1b vel=90
        1b note G4 2b vel=80
        """

    /// What goes out through ALSA is sample for sample what the offline render of the same input gives.
    @Test func playedAudioEqualsTheOfflineRender() throws {
        let (live, reference) = try Self.playAndRender(Self.chord, duration: 2.5)
        #expect(live.channels == 2 && live.sampleRate == 48_000)
        #expect(min(live.frameCount, reference.frameCount) >= 48_000 * 2)  // at least two seconds to compare
        #expect(reference.samples.contains { $0 != 0 })
        let difference = Self.firstDifference(live, reference)
        #expect(difference == nil, "first differing frame: \(difference ?? -1)")
    }

    /// A file longer and denser than any queue: 12 s with 24,000 controller moves (more than the MIDI
    /// scheduler holds) under sustained notes. Played to its end by default; equal to the offline render
    /// for its whole length.
    @Test func aLongDenseFilePlaysExactlyAsItRenders() throws {
        var lines = ["0s note C3 12s vel=100", "0s note G3 12s vel=90"]
        for index in 0..<24_000 { lines.append("\(index * 24)f cc 1 \(index % 128)") }
        for beat in 0..<24 {
            lines.append("\(Double(beat) * 0.5)s note \(["E4", "G4", "B4", "D5"][beat % 4]) 0.4s vel=80")
        }
        let (live, reference) = try Self.playAndRender(lines.joined(separator: "\n"))
        #expect(reference.frameCount == 48_000 * 13)
        #expect(live.frameCount >= reference.frameCount, "played to the end and its tail")
        let difference = Self.firstDifference(live, reference)
        #expect(difference == nil, "first differing frame: \(difference ?? -1)")
    }

    /// The control thread held up for two seconds as playback starts (a loaded Pi, a slow disk): not a
    /// sample changes, because no event waits for it.
    @Test func aStalledControlThreadChangesNothing() throws {
        var lines = ["0b tempo 100"]
        for beat in 0..<8 {
            lines.append("\(beat)b note \(["C4", "E4", "G4", "A4"][beat % 4]) 0.75b vel=\(70 + beat * 5)")
        }
        let (live, reference) = try Self.playAndRender(lines.joined(separator: "\n")) { usleep(2_000_000) }
        #expect(reference.frameCount > 48_000 * 5)  // 7.75 beats at 100 BPM and 1 s of tail
        #expect(live.frameCount >= reference.frameCount)
        let difference = Self.firstDifference(live, reference)
        #expect(difference == nil, "first differing frame: \(difference ?? -1)")
    }
}

import AulosAudioFile
import AulosCore
import AulosGraph
import AulosIO
import AulosRealtime
import AulosTestSupport
import AulosUnits
import Foundation
import Testing

@testable import AulosALSA

/// The ALSA I/O unit through alsa-lib's real code paths, with no sound card: a `file` PCM (writes a WAV of
/// exactly what was played) over a `null` PCM (accepts everything, unpaced). The configuration is loaded
/// in-process, so no files or environment variables are involved.
@Suite(.serialized) struct ALSAOutputTests {
    static func fileDeviceConfiguration(_ path: String) -> String { TestData.fileDeviceConfiguration(path) }

    /// Unpaced on purpose: these tests want the file written as fast as the device takes it.
    static func fileDevice(_ path: String) -> PCMRequest {
        var request = PCMRequest(device: "aulostest", configuration: fileDeviceConfiguration(path), format: .int16)
        request.pacesUnpacedDevices = false
        return request
    }

    static func fileSession(_ path: String, profile: AudioSession.Profile? = nil) -> AudioSession {
        let session = AudioSession(
            driver: .alsa, device: "aulostest", configuration: fileDeviceConfiguration(path), profile: profile)
        session.preferredFormat = .int16
        session.pacesUnpacedDevices = false
        return session
    }

    static func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "aulos-\(name)-\(UUID().uuidString).wav"
    }

    static let score = """
        0b tempo 120
        0b note C4 1b vel=100
        0.5b note E4 1b vel=90
        1b note G4 2b vel=80
        """

    /// A device that takes audio faster than real time (null) is paced by the clock: it gets about a
    /// second of audio a second, not a core's worth (`aulos play --device null` used to spin at 96 % CPU
    /// and report 54 minutes played after one). Asked not to pace it, it gets audio as fast as it takes it.
    @Test func unpacedDevicesArePacedByTheClockUnlessAskedNot() throws {
        for paced in [true, false] {
            let session = AudioSession(driver: .alsa, device: "nullpcm", configuration: "pcm.nullpcm { type null }")
            session.pacesUnpacedDevices = paced
            let playback = try ToneOnDevice(session)
            defer { playback.close() }
            let started = monotonicNanoseconds()
            try playback.graph.start()
            usleep(500_000)
            let frames = playback.io.statistics.framesPlayed
            let elapsed = Double(monotonicNanoseconds() - started) / 1e9
            try playback.graph.stop()
            let realTime = elapsed * 48_000
            if paced {
                #expect(playback.io.statistics.isPacedByClock)
                // Real time, plus the buffer and the quarter second it took to tell the device was unpaced.
                #expect(Double(frames) <= realTime + 48_000 * 0.3, "\(frames) frames in \(elapsed) s")
            } else {
                #expect(!playback.io.statistics.isPacedByClock)
                #expect(Double(frames) > 4 * realTime, "\(frames) frames in \(elapsed) s")
            }
        }
    }

    /// Underrun and suspend are recovered and counted; a lost device is an interruption that ends when it
    /// can be reopened, and the audio resumes.
    @Test func faultsAreRecoveredWithOnePolicy() throws {
        let folder = NSTemporaryDirectory() + "aulos-alsa-dev-\(UUID().uuidString)"
        mkdir(folder, 0o755)
        defer { _ = try? FileManager.default.removeItem(atPath: folder) }
        let session = Self.fileSession(folder + "/out.wav")
        try session.setPreferredIOBufferFrames(256)
        var interruptions: [AudioSession.Interruption] = []
        var routes: [AudioSession.RouteChangeReason] = []
        session.addInterruptionListener { interruptions.append($0) }
        session.addRouteChangeListener { routes.append($0) }
        let playback = try ToneOnDevice(session)
        defer { playback.close() }
        let io = playback.io
        var events: [IOEvent] = []
        io.addListener { events.append($0) }
        try playback.graph.start()
        func waitFor(_ description: String, _ condition: () -> Bool) {
            for _ in 0..<500 where !condition() {
                usleep(10_000)
                io.dispatchEvents()
            }
            #expect(condition(), "\(description)")
        }
        func framesAdvance() {
            let before = io.statistics.framesPlayed
            waitFor("audio flows") { io.statistics.framesPlayed > before + 48_000 }
        }
        framesAdvance()

        io.injectDeviceError(-EPIPE)
        waitFor("underrun counted") { io.statistics.xruns == 1 }
        framesAdvance()
        #expect(events.contains(.underrun))

        io.injectDeviceError(-ESTRPIPE)
        waitFor("resumed") { events.contains(.suspendedAndResumed) }
        framesAdvance()

        // The device goes away and cannot be reopened while its folder is missing.
        try FileManager.default.removeItem(atPath: folder)
        io.injectDeviceError(-ENODEV)
        waitFor("interruption began") { events.contains(.interruptionBegan(errno: -ENODEV)) }
        #expect(io.statistics.isInterrupted)
        usleep(600_000)  // several reopen attempts, all failing
        io.dispatchEvents()
        #expect(io.statistics.isInterrupted)
        #expect(!events.contains(.interruptionEnded))
        mkdir(folder, 0o755)
        waitFor("interruption ended") { events.contains(.interruptionEnded) }
        #expect(!io.statistics.isInterrupted)
        framesAdvance()
        #expect(interruptions == [.began, .ended])
        #expect(routes == [.deviceLost(errno: -ENODEV), .deviceBack])
        try playback.graph.stop()
        #expect(FileManager.default.fileExists(atPath: folder + "/out.wav"))
        // Stopped and started again: it reopens the device it ended with.
        try playback.graph.start()
        framesAdvance()
    }

    @Test func unknownDeviceIsOneClearError() {
        var request = Self.fileDevice("/tmp/unused.wav")
        request.device = "nosuchpcm"
        #expect {
            _ = try PCMDevice.open(request)
        } throws: { error in
            (error as? DeviceError)?.message.contains("cannot open ALSA device 'nosuchpcm'") == true
        }
    }

    /// The device grants what it can; every unit then runs at the granted period.
    @Test func grantsAreReportedAndUsedAsTheSlice() throws {
        var request = Self.fileDevice(Self.temporaryPath("grant"))
        request.period = 100
        request.periods = 4
        request.format = .float32
        let device = try PCMDevice.open(request)
        #expect(device.grant.period >= 1 && device.grant.periods >= 2)
        #expect(device.grant.bufferFrames == device.grant.period * device.grant.periods)
        #expect(device.grant.outputLatency == Double(device.grant.bufferFrames) / 48_000)
        let session = Self.fileSession(Self.temporaryPath("grant"))
        try session.setPreferredIOBufferFrames(1024)
        let playback = try ToneOnDevice(session)
        defer { playback.close() }
        let grant = playback.io.grant!
        #expect(session.ioBufferFrames == grant.period)
        #expect(session.ioBufferDuration == Double(grant.period) / grant.sampleRate)
        #expect(try playback.tone.get(.maximumFramesPerSlice) == grant.period)
    }

    /// The seeds' rule: slice sizes go up before initialize. A power-saving session raises every unit's
    /// MaximumFramesPerSlice, including the default 1024 a unit starts with.
    @Test func sessionProfilesAndPreferences() throws {
        let session = Self.fileSession(Self.temporaryPath("session"), profile: .powersave)
        #expect(session.preferredIOBufferFrames == 2048 && session.preferredPeriods == 2)
        let graph = AudioGraph(registry: ToneOnDevice.registry())
        let output = try graph.addNode(ALSAOutputUnit.componentDescription)
        let tone = try graph.addNode(ToneGeneratorUnit.componentDescription)
        try graph.connectNodeInput(tone, sourceOutput: 0, output, destinationInput: 0)
        graph.open()
        try session.activate(for: graph.outputUnit as! ALSAOutputUnit, sizing: graph.units)
        #expect(session.isActive && session.ioBufferFrames == 2048)
        #expect(try graph.unit(for: tone).get(.maximumFramesPerSlice) == 2048)
        #expect(throws: AudioUnitError.self) { try session.setPreferredIOBufferFrames(64) }  // not while active
        try graph.initialize()
        try graph.start()
        #expect(Wait.until(seconds: 5) { (graph.outputUnit as! ALSAOutputUnit).statistics.framesPlayed > 0 })
        #expect(throws: AudioUnitError.self) { try session.deactivate() }  // still running
        try graph.stop()
        try graph.uninitialize()
        try session.deactivate()
        #expect(!session.isActive && session.grant == nil)

        let live = AudioSession(driver: .alsa, profile: .live)
        #expect(live.preferredIOBufferFrames == 64 && live.preferredPeriods == 3)
        try live.setPreferredSampleRate(44_100)
        try live.setPreferredIOBufferDuration(0.005)
        #expect(live.preferredIOBufferFrames == 221)  // 5 ms at 44.1 kHz
        #expect(throws: AudioUnitError.self) { try live.setPreferredIOBufferFrames(8) }
        #expect(throws: AudioUnitError.self) { try live.setPreferredSampleRate(1_000_000) }
        // The file PCM over null has no capture side worth the name; null itself does.
        let null = AudioSession(driver: .alsa, device: "nullpcm", configuration: "pcm.nullpcm { type null }")
        #expect(null.isInputAvailable)
        let nothing = AudioSession(driver: .alsa, device: "nosuchpcm", configuration: "pcm.nullpcm { type null }")
        #expect(!nothing.isInputAvailable)
    }

    /// Capture follows playback's xrun policy: a suspend (ESTRPIPE) is resumed or re-prepared and an overrun
    /// (EPIPE) counted and re-prepared, and the input goes on. (A suspend used to turn the input silent.)
    @Test func captureFaultsAreRecoveredLikePlayback() throws {
        let input = NSTemporaryDirectory() + "aulos-in-\(UUID().uuidString).raw"
        let output = Self.temporaryPath("capture-faults")
        defer {
            unlink(input)
            unlink(output)
        }
        let samples = (0..<192_000).map { Int16(8_000 * sin(2 * Double.pi * 440 * Double($0 / 2) / 48_000)) }
        try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: input))
        let session = AudioSession(
            driver: .alsa, device: "aulostest",
            configuration: Self.fileDeviceConfiguration(output)
                + #" pcm.aulosin { type file slave.pcm { type null } file "/dev/null" infile "\#(input)" format raw }"#)
        session.preferredFormat = .int16
        session.inputDevice = "aulosin"
        try session.setPreferredIOBufferFrames(128)
        let graph = AudioGraph(registry: ToneOnDevice.registry())
        let node = try graph.addNode(ALSAOutputUnit.componentDescription)
        graph.open()
        let io = graph.outputUnit as! ALSAOutputUnit
        try io.set(.enableIO, UInt32(1), scope: .input, element: 1)
        try graph.setNodeInputCallback(node, destinationInput: 0, io.inputCallback)
        try session.activate(for: io, sizing: graph.units)
        try graph.initialize()
        var events: [IOEvent] = []
        io.addListener { events.append($0) }
        try graph.start()
        func waitFor(_ description: String, _ condition: () -> Bool) {
            for _ in 0..<500 where !condition() {
                usleep(10_000)
                io.dispatchEvents()
            }
            #expect(condition(), "\(description)")
        }
        waitFor("audio flows") { io.statistics.framesPlayed > 12_000 }
        io.injectCaptureError(-ESTRPIPE)
        waitFor("capture resumed") { events.contains(.suspendedAndResumed) }
        io.injectCaptureError(-EPIPE)
        waitFor("overrun counted") { events.contains(.overrun) }
        let recovered = io.statistics.framesPlayed
        waitFor("audio flows on") { io.statistics.framesPlayed > recovered + 24_000 }
        try graph.stop()
        #expect(io.statistics.xruns == 1)
        try graph.uninitialize()
        try session.deactivate()

        // The input still plays after both faults: the output's last periods are the captured tone.
        let written = try AudioFileContents(path: output)
        let end = written.frameCount * 2
        let tail = written.samples[(end - 2 * 12_000)..<end]
        #expect(tail.contains { abs($0) > 0.1 }, "the input went silent after the capture faults")
    }

    /// Core Audio's I/O pass-through: the input element's capture, through the input callback installed on
    /// the output element's own input, comes out of the output sample for sample. Capture comes from the
    /// file PCM's `infile` (raw S16 stereo) over null; playback goes to a file PCM writing a WAV.
    @Test func inputPassesThroughToTheOutput() throws {
        let input = NSTemporaryDirectory() + "aulos-in-\(UUID().uuidString).raw"
        let output = Self.temporaryPath("passthrough")
        defer {
            unlink(input)
            unlink(output)
        }
        var samples: [Int16] = []
        for frame in 0..<96_000 {
            samples.append(Int16(8_000 * sin(2 * Double.pi * 440 * Double(frame) / 48_000)))
            samples.append(Int16(frame % 2000) - 1000)  // a different right channel: a ramp
        }
        try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: input))
        let session = AudioSession(
            driver: .alsa, device: "aulostest",
            configuration: Self.fileDeviceConfiguration(output)
                + #" pcm.aulosin { type file slave.pcm { type null } file "/dev/null" infile "\#(input)" format raw }"#)
        session.preferredFormat = .int16
        session.inputDevice = "aulosin"
        try session.setPreferredIOBufferFrames(128)
        let graph = AudioGraph(registry: ToneOnDevice.registry())
        let node = try graph.addNode(ALSAOutputUnit.componentDescription)
        graph.open()
        let io = graph.outputUnit as! ALSAOutputUnit
        try io.set(.enableIO, UInt32(1), scope: .input, element: 1)
        try graph.setNodeInputCallback(node, destinationInput: 0, io.inputCallback)
        try session.activate(for: graph.outputUnit as! ALSAOutputUnit, sizing: graph.units)
        try graph.initialize()
        try graph.start()
        for _ in 0..<500 where io.statistics.framesPlayed < 60_000 { usleep(10_000) }
        try graph.stop()
        #expect(io.statistics.xruns == 0)
        try graph.uninitialize()
        try session.deactivate()

        let written = try AudioFileContents(path: output)
        #expect(written.frameCount >= 48_000)
        var firstDifference: Int?
        for index in 0..<(48_000 * 2) where written.samples[index] != Float(samples[index]) / 32_768 {
            firstDifference = index / 2
            break
        }
        #expect(firstDifference == nil, "first differing frame: \(firstDifference ?? -1)")
    }
}

/// ALSA I/O ← tone generator on a session: the smallest live graph, activated, initialized, not started.
final class ToneOnDevice {
    let graph: AudioGraph
    let io: ALSAOutputUnit
    let tone: ToneGeneratorUnit
    let session: AudioSession

    static func registry() -> ComponentRegistry {
        let registry = BuiltInUnits.registry()
        registry.register(ALSAOutputUnit.component)
        return registry
    }

    init(_ session: AudioSession) throws {
        self.session = session
        graph = AudioGraph(registry: Self.registry())
        let output = try graph.addNode(ALSAOutputUnit.componentDescription)
        let node = try graph.addNode(ToneGeneratorUnit.componentDescription)
        graph.open()
        io = try graph.unit(for: output) as! ALSAOutputUnit
        tone = try graph.unit(for: node) as! ToneGeneratorUnit
        try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
        try session.activate(for: io, sizing: graph.units)
        try graph.initialize()
    }

    func close() {
        try? graph.stop()
        try? graph.uninitialize()
        try? session.deactivate()
    }
}

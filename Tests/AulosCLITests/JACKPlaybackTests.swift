import AulosTestSupport
import Foundation
import Testing

/// `aulos play --driver jack` against a real JACK server (`jackd -d dummy`, started by each test), with a
/// C JACK client on the other end: the audio captured from aulos's ports is the offline render bit for bit,
/// JACK MIDI lands on its frame, a buffer-size change keeps it playing, a server that dies ends the run (or
/// is waited for by the service), and the transport is followed or published.
@Suite(.serialized, .enabled(if: JACKServer.isAvailable, "needs jackd (jackd2) and cc: scripts/setup.sh --tests"))
struct JACKPlaybackTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "aulos-jack-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// A file played through JACK and captured by another client is what `aulos render` writes, sample for
    /// sample, from the first sound on (the slice is JACK's buffer: 256 frames).
    @Test func fileThroughJACKIsTheOfflineRender() throws {
        let jack = try JACKServer(named: "file", in: folder)
        let lost = jack.lostCycles
        let piece = try latePiece(in: folder)
        let capture = try jack.startProbe(["capture", "capture", "8", folder + "/capture.raw"])
        usleep(300_000)
        let played = try runAulos(
            [
                "play", "--driver", "jack", piece, "--duration", "3.5", "--connect-outputs",
                "capture:in_1,capture:in_2",
            ], in: repositoryRoot, environment: jack.environment)
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stdout.contains("on jack:default: 48000 Hz"), "\(played.stdout)")
        let captured = capture.finish()
        #expect(captured.status == 0, "\(captured.output)")
        let rendered = try runAulos(
            [
                "render", piece, "--slice", "256", "--format", "float", "-o",
                folder + "/offline.wav",
            ],
            in: repositoryRoot)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        // 3.5 s played, the first sound at 1.2 s: the 2 s after it (the offline render goes on longer).
        let difference = captureDifference(
            capturedChannels(folder + "/capture.raw"), FloatWAV.read(folder + "/offline.wav") ?? [], frames: 96_000)
        jack.timingChecks(lostSince: lost) {
            #expect(difference == nil, "the captured audio is not the offline render: \(difference ?? "")")
        }
    }

    /// A plain live `aulos play` (through JACK: no sequencer needed) serves the control socket at the default
    /// path, so `aulos status` with no `--socket` finds it; a second plain one finds the path taken and plays
    /// on without a socket, saying so in one line, where before neither served one ("no aulos is running").
    @Test func aPlainPlayIsFoundByStatus() throws {
        let jack = try JACKServer(named: "default-socket", in: folder)
        let environment = jack.environment.merging(["AULOS_CONTROL_SOCKET": folder + "/run/control"]) { $1 }
        let first = Process()
        first.executableURL = URL(fileURLWithPath: aulosBinary)
        first.arguments = ["play", "--driver", "jack", "--dry", "--connect-outputs", "none", "--duration", "20"]
        first.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        first.standardInput = FileHandle.nullDevice
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle.nullDevice
        try first.run()
        defer {
            first.terminate()
            first.waitUntilExit()
        }
        var status = try runAulos(["status"], environment: environment)
        for _ in 0..<100 where status.status != 0 {
            usleep(100_000)
            status = try runAulos(["status"], environment: environment)
        }
        #expect(status.status == 0 && status.stdout.contains("jack"), "\(status.stdout)\(status.stderr)")
        let second = try runAulos(
            ["play", "--driver", "jack", "--dry", "--connect-outputs", "none", "--duration", "1"],
            environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(
            second.stderr.contains("warning: no control socket (another aulos is already listening on "),
            "\(second.stderr)")
        #expect(try runAulos(["status"], environment: environment).status == 0, "the first one lost its socket")
    }

    /// Note-ons and note-offs sent into midi_in at frames 37, 200, 5 and 250 of their cycles play at those
    /// frames of the same cycles: the capture, from the cycle before the first note, is the offline render
    /// of the same events on the same frames, and the first note is heard at the server frame it was sent
    /// at (plus the output stage's look-ahead) — routed and played inside the cycle it arrived in.
    @Test func jackMIDILandsOnItsFrame() throws {
        let jack = try JACKServer(named: "midi", in: folder)
        let lost = jack.lostCycles
        let aulos = try BackgroundAulos(
            ["play", "--driver", "jack", "--dry", "--connect-outputs", "none"], in: folder,
            environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.2 }, "\(aulos.stderr)")
        let capture = try jack.startProbe([
            "capture", "capture", "5", folder + "/capture.raw", "default:out_1", "default:out_2",
        ])
        usleep(200_000)
        let sent = try jack.probe(
            [
                "send", "sender", "2", "default:midi_in", "20:37:144:60:100", "22:200:128:60:0", "220:5:144:67:100",
                "222:250:128:67:0",
            ])
        #expect(sent.output.contains("sent 4"), "\(sent.output)")
        let captured = capture.finish()
        #expect(captured.status == 0)
        // Cycle 20 frame 37 is frame 37 of the slice that plays it; everything after is relative to it.
        try "37f on 60 vel=100\n712f off 60 vel=0\n51205f on 67 vel=100\n51962f off 67 vel=0\n60000f end\n".write(
            toFile: folder + "/notes.score", atomically: true, encoding: .utf8)
        let rendered = try runAulos(
            [
                "render", folder + "/notes.score", "--dry", "--slice", "256", "--format", "float", "-o",
                folder + "/offline.wav",
            ])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let live = capturedChannels(folder + "/capture.raw")[0]
        let offline = FloatWAV.read(folder + "/offline.wav")?.first ?? []
        guard let onset = live.firstIndex(where: { $0 != 0 }) else {
            Issue.record("the notes were not heard: \(aulos.stderr)")
            return
        }
        let aligned = Array(live[max(0, onset - 37)..<min(live.count, max(0, onset - 37) + 57_000)])
        #expect(aligned.count == 57_000, "captured too little after the first note")
        let difference = sampleDifference(aligned, offline.prefix(aligned.count))
        // Server frame times: where the capture began and where the first note-on was due.
        let sentAt = Self.number(after: "first event frame ", in: sent.output)
        let capturedFrom = Self.number(after: "first frame ", in: captured.output)
        // Only a cycle the server itself lost excuses a note off its frame: aulos placing MIDI late does not.
        jack.timingChecks(lostSince: lost) {
            // Frame 37 of its cycle, heard 64 frames later: the output stage's look-ahead (at 48 kHz).
            #expect(onset % 256 == 37 + 64, "the first note is heard at frame \(onset % 256) of its cycle, not 101")
            let heardAt = capturedFrom.map { $0 + onset } ?? -1
            let late =
                "the first note was sent at server frame \(sentAt ?? -1) and heard at \(heardAt) (64 frames of "
                + "look-ahead expected): not in the cycle it arrived in"
            #expect(heardAt == sentAt.map { $0 + 64 }, Comment(rawValue: late))
            #expect(difference == nil, "the notes are not on their frames: \(difference ?? "")")
        }
    }

    /// The number after `prefix` on a line of a probe's output.
    static func number(after prefix: String, in output: String) -> Int? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    /// `--connect NAME` connects a JACK MIDI output that appears later, by name, as the sequencer does with
    /// keyboards: the notes the new client plays reach the synth.
    @Test func connectsJACKMIDIPortsByName() throws {
        let jack = try JACKServer(named: "connect", in: folder)
        let aulos = try BackgroundAulos(
            ["play", "--driver", "jack", "--connect", "keyboard"], in: folder, environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.2 }, "\(aulos.stderr)")
        let sent = try jack.probe(["send", "keyboard", "2", "-", "10:0:144:64:90", "60:0:128:64:0"])
        #expect(sent.output.contains("sent 2"), "aulos did not connect the new port: \(sent.output) \(aulos.stderr)")
        #expect(try aulos.waitForStatus { ($0["midiDelivered"] as? Int ?? 0) >= 2 }, "\(aulos.stderr)")
    }

    /// `--input PORTS`: in_1 and in_2 connect from another client's outputs and what they carry is played
    /// with the instruments (here alone: no note is played, so every sound out is the input's 1 kHz sine).
    @Test func inputPortsArePlayedThrough() throws {
        let jack = try JACKServer(named: "input", in: folder)
        let lost = jack.lostCycles
        let tone = try jack.startProbe(["tone", "tone", "6"])
        usleep(300_000)
        let aulos = try BackgroundAulos(
            ["play", "--driver", "jack", "--dry", "--connect-outputs", "none", "--input", "tone:out_1,tone:out_2"],
            in: folder, environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.3 }, "\(aulos.stderr)")
        #expect(aulos.stderr.contains("tone:out_1 → default:in_1"), "\(aulos.stderr)")
        let captured = try jack.probe(["capture", "capture", "1", folder + "/in.raw", "default:out_1", "default:out_2"])
        #expect(captured.status == 0, "\(captured.output)")
        let left = capturedChannels(folder + "/in.raw")[0]
        // Half a second, ending a tenth before the capture does: the probe's last cycles, as it stops, may be
        // silent (seen under load: 512 frames of zeros at the very end, and 21 crossings too few).
        let tail = left.dropLast(4_800).suffix(24_000)
        let peak = tail.map(abs).max() ?? 0
        // A 1 kHz sine crosses zero 2,000 times a second: about 1,000 times in half a second.
        let crossings = zip(tail, tail.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(peak > 0.1, "the input is not heard (peak \(peak))")
        jack.timingChecks(lostSince: lost) {
            #expect(
                abs(crossings - 1_000) <= 4, "\(crossings) zero crossings in half a second, not a 1 kHz tone's 1,000")
        }
        _ = tone.finish()
    }

    /// `--jack-part-outputs`: each part has ports of its own, carrying that part alone — a note on channel 1
    /// is on Lead's ports and not on Pad's, until Pad plays too.
    @Test func partOutputsCarryTheirOwnPart() throws {
        let jack = try JACKServer(named: "parts", in: folder)
        try "name: Duo\nparts:\n  - name: Lead\n    instrument: synth\n    preset: String Ensemble\n    channels: [1]\n"
            .appending("  - name: Pad\n    instrument: synth\n    preset: String Ensemble\n    channels: [2]\n")
            .write(toFile: folder + "/duo.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            [
                "play", "--driver", "jack", "--rig", folder + "/duo.yaml", "--dry", "--jack-part-outputs",
                "--connect-outputs", "none",
            ], in: folder, environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.3 }, "\(aulos.stderr)")
        func peak(_ port: String) throws -> Float {
            let captured = try jack.probe(
                ["capture", "capture", "0.4", folder + "/\(port).raw", "Duo:\(port)_L", "Duo:\(port)_R"])
            #expect(captured.status == 0, "\(captured.output)")
            return capturedChannels(folder + "/\(port).raw")[0].map(abs).max() ?? 0
        }
        // A note on channel 1 held for the whole test (the sender stays until then), then one on channel 2.
        let lead = try jack.startProbe(["send", "lead", "4", "Duo:midi_in", "0:0:144:60:100"])
        usleep(400_000)
        #expect(try peak("Lead") > 0.01, "Lead's ports are silent: \(aulos.stderr)")
        #expect(try peak("Pad") == 0, "Pad's ports carry sound while Pad plays nothing")
        let pad = try jack.startProbe(["send", "pad", "2", "Duo:midi_in", "0:0:145:67:100"])
        usleep(400_000)
        #expect(try peak("Pad") > 0.01, "Pad's ports are silent while it plays: \(aulos.stderr)")
        _ = pad.finish()
        _ = lead.finish()
    }

    /// jack_bufsize mid-run, up (256 → 2048: more than one slice of the graph's 1,024) and down (→ 128): aulos
    /// says so, the note held through both changes is still heard after each, and the run lasts to its end.
    @Test func bufferSizeChangeKeepsPlaying() throws {
        let jack = try JACKServer(named: "bufsize", in: folder)
        let aulos = try BackgroundAulos(
            ["play", "--driver", "jack", "--dry", "--connect-outputs", "none", "--duration", "8"], in: folder,
            environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.3 }, "\(aulos.stderr)")
        // A string pad held from the first cycle the sender sees until it ends (7 s).
        let sender = try jack.startProbe(["send", "sender", "7", "default:midi_in", "0:0:144:60:100"])
        /// The loudest sample aulos plays during half a second, captured from its out_1.
        func peak(_ name: String) throws -> Float {
            let captured = try jack.probe(
                ["capture", name, "0.5", folder + "/\(name).raw", "default:out_1", "default:out_2"])
            #expect(captured.status == 0, "\(captured.output)")
            return capturedChannels(folder + "/\(name).raw")[0].map(abs).max() ?? 0
        }
        usleep(500_000)
        #expect(try peak("before") > 0.01, "the held note is not heard: \(aulos.stderr)")
        for frames in [2048, 128] {
            #expect(try jack.setBufferSize(frames) == 0)
            #expect(try aulos.waitForStatus { ($0["period"] as? Int) == frames }, "\(aulos.stderr)")
            #expect(try peak("at\(frames)") > 0.01, "silent after the buffer size became \(frames): \(aulos.stderr)")
            #expect(aulos.stderr.contains("the JACK buffer size is now \(frames) frames"), "\(aulos.stderr)")
        }
        #expect(aulos.waitForExit(seconds: 12) == 0, "\(aulos.stderr)")
        #expect(aulos.stdout.contains("played live 0:08.0"), "\(aulos.stdout)")
        _ = sender.finish()
    }

    /// The server killed under a live aulos: it ends within a second or two with the reason, status 1.
    @Test func killedServerEndsPlay() throws {
        let jack = try JACKServer(named: "kill", in: folder)
        let aulos = try BackgroundAulos(["play", "--driver", "jack"], in: folder, environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.3 }, "\(aulos.stderr)")
        jack.kill()
        let status = aulos.waitForExit(seconds: 10)
        #expect(status == 1, "\(aulos.stderr)")
        #expect(aulos.stderr.contains("the JACK server stopped"), "\(aulos.stderr)")
    }

    /// The service waits for a server that went away and plays again once it is back.
    @Test func serviceReconnectsToARestartedServer() throws {
        let jack = try JACKServer(named: "reconnect", in: folder)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--driver", "jack"], in: folder, environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.3 }, "\(aulos.stderr)")
        jack.kill()
        usleep(1_500_000)
        #expect(aulos.process.isRunning, "\(aulos.stderr)")
        try jack.start()
        #expect(try aulos.waitForStatus(seconds: 20) { ($0["seconds"] as? Double ?? 0) > 0.3 }, "\(aulos.stderr)")
        #expect(aulos.stderr.contains("rebuilding the rig"), "\(aulos.stderr)")
        #expect(aulos.stderr.contains("audio device ready"), "\(aulos.stderr)")
    }

    /// Following: another client is timebase master at 90 BPM and starts the transport; aulos's host
    /// transport plays, at 90 BPM, on the beat JACK's bar/beat/tick gives.
    @Test func followsJACKTransport() throws {
        let jack = try JACKServer(named: "follow", in: folder)
        let aulos = try BackgroundAulos(["play", "--driver", "jack"], in: folder, environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.2 }, "\(aulos.stderr)")
        // A fresh server's transport is stopped and nobody drives it: aulos's own keeps running meanwhile.
        #expect(try aulos.status()?["transportPlaying"] as? Bool == true)
        // Master for 10 s: long enough that the span measured below ends while it is still master on a loaded
        // machine (with 3 s it once ran out first, and the beat ran on at aulos's own 120 BPM: 2.6 beats a
        // second where 1.5 were expected).
        let master = try jack.startProbe(["transport", "master", "10", "--master", "90", "--start"])
        #expect(
            try aulos.waitForStatus {
                $0["transportPlaying"] as? Bool == true && ($0["transportTempo"] as? Double) == 90
                    && ($0["transportBeat"] as? Double ?? 0) > 1
            }, "\(String(describing: try? aulos.status()))")
        // The beat advances at 90 BPM: 1.5 beats a second of audio played (both read from one status), over two
        // seconds (the beat is the render's and the seconds the device's: how far the render is ahead at each
        // read is an error, smaller the longer the span).
        let before = try aulos.status() ?? [:]
        usleep(2_000_000)
        let after = try aulos.status() ?? [:]
        let beats = (after["transportBeat"] as? Double ?? 0) - (before["transportBeat"] as? Double ?? 0)
        let seconds = (after["seconds"] as? Double ?? 0) - (before["seconds"] as? Double ?? 0)
        #expect(seconds > 0.5 && abs(beats / seconds - 1.5) < 0.1, "\(beats) beats in \(seconds) s")
        // Stopped in JACK (here by the control socket, which asks JACK), aulos's transport stops too.
        #expect(aulos.request("transport stop")?.contains(#""ok":true"#) == true)
        #expect(try aulos.waitForStatus(seconds: 5) { $0["transportPlaying"] as? Bool == false })
        #expect(master.finish().status == 0)
    }

    /// Master: with --jack-timebase and --tempo 100, JACK's position carries aulos's tempo and a bar/beat/tick
    /// that matches the frame.
    @Test func publishesItsTempoAsTimebaseMaster() throws {
        let jack = try JACKServer(named: "master", in: folder)
        let aulos = try BackgroundAulos(
            ["play", "--driver", "jack", "--jack-timebase", "--tempo", "100"], in: folder,
            environment: jack.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.2 }, "\(aulos.stderr)")
        let result = try jack.probe(["transport", "roller", "1.5", "--start"])
        #expect(result.status == 0, "\(result.output)")
        // "rolling 1 frame F bbt BAR|BEAT|TICK bpm B valid 1"
        let words = result.output.split(separator: " ").map(String.init)
        #expect(words.count >= 9 && words[0] == "rolling" && words[1] == "1", "\(result.output)")
        guard words.count >= 9, let frame = Double(words[3]) else { return }
        let bbt = words[5].split(separator: "|").compactMap { Double($0) }
        #expect(words[7].hasPrefix("100.000"), "bpm \(words[7]) (\(result.output))")
        #expect(words.last?.hasPrefix("1") == true, "no BBT published: \(result.output)")
        let beats = frame / 48_000 * 100 / 60
        if bbt.count == 3 {
            let published = (bbt[0] - 1) * 4 + (bbt[1] - 1) + bbt[2] / 1920
            #expect(abs(published - beats) < 0.01, "BBT \(words[5]) is beat \(published); frame \(frame) is \(beats)")
        }
    }
}

/// A headless PipeWire for one test (scripts/jack/pipewire-null.conf: a null sink drives the graph, no
/// session manager), and JACK clients run on it under `pw-jack` at a 256-frame quantum.
final class HeadlessPipeWire {
    static let isAvailable =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/pipewire")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/pw-jack") && JACKServer.isAvailable

    let folder: String
    /// What `pw-jack -p 256` sets, and this PipeWire's runtime folder; JACK_DEFAULT_SERVER is dropped
    /// (pipewire-jack reads it as the name of the PipeWire to join).
    let environment: [String: String]
    private let pipewire = Process()

    init(in folder: String) throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder + "/run", withIntermediateDirectories: true)
        chmod(folder + "/run", 0o700)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = folder + "/run"
        environment["JACK_DEFAULT_SERVER"] = nil
        environment["PIPEWIRE_QUANTUM"] = "256/48000"
        let libraries = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib"))?
            .map { "/usr/lib/\($0)/pipewire-0.3/jack" }.first { FileManager.default.fileExists(atPath: $0) }
        environment["LD_LIBRARY_PATH"] = libraries ?? "/usr/lib/pipewire-0.3/jack"
        self.environment = environment
        pipewire.executableURL = URL(fileURLWithPath: "/usr/bin/pipewire")
        pipewire.arguments = ["-c", repositoryRoot + "/scripts/jack/pipewire-null.conf"]
        pipewire.environment = environment
        pipewire.standardOutput = FileHandle.nullDevice
        pipewire.standardError = FileHandle.nullDevice
        try pipewire.run()
        // Up when a JACK client can see the sink's ports.
        for _ in 0..<50 {
            usleep(100_000)
            let probe = try run([JACKServer.probePath, "transport", "ready", "0"])
            probe.waitUntilExit()
            if probe.terminationStatus == 0 { return }
        }
        throw CocoaError(.featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "pipewire did not come up"])
    }

    deinit {
        pipewire.terminate()
        pipewire.waitUntilExit()
    }

    /// Starts a program as a JACK client of this PipeWire, its output into `log`.
    func run(_ arguments: [String], log: String = "/dev/null") throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
        if log != "/dev/null" { FileManager.default.createFile(atPath: log, contents: nil) }
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = process.standardOutput
        try process.run()
        return process
    }

    /// pw-metadata against this PipeWire (settings such as clock.force-rate).
    func setSetting(_ key: String, _ value: String) throws {
        let tool = try run(["/usr/bin/pw-metadata", "-n", "settings", "0", key, value])
        tool.waitUntilExit()
    }
}

/// The JACK driver through PipeWire: a file played is the offline render bit for bit, and the graph's rate
/// changed under a playing aulos rebuilds the rig once, at the new rate.
@Suite(
    .serialized,
    .enabled(if: HeadlessPipeWire.isAvailable, "needs pipewire and pipewire-jack: scripts/setup.sh --tests"))
struct PipeWirePlaybackTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "aulos-pipewire-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    @Test func fileThroughPipeWireIsTheOfflineRender() throws {
        let pipewire = try HeadlessPipeWire(in: folder)
        let piece = try latePiece(in: folder)
        let capture = try pipewire.run(
            [JACKServer.probePath, "capture", "capture", "9", folder + "/capture.raw"], log: folder + "/capture.log")
        usleep(500_000)
        let aulos = try pipewire.run(
            [
                aulosBinary, "play", "--driver", "jack", piece, "--duration", "4",
                "--connect-outputs", "capture:in_1,capture:in_2",
            ], log: folder + "/aulos.log")
        aulos.waitUntilExit()
        let aulosLog = (try? String(contentsOfFile: folder + "/aulos.log", encoding: .utf8)) ?? ""
        #expect(aulos.terminationStatus == 0, "\(aulosLog)")
        capture.waitUntilExit()
        let rendered = try runAulos(
            ["render", piece, "--slice", "256", "--format", "float", "-o", folder + "/offline.wav"], in: repositoryRoot)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        // 4 s played, the first sound at 1.2 s: the 2.5 s after it.
        let difference = captureDifference(
            capturedChannels(folder + "/capture.raw"), FloatWAV.read(folder + "/offline.wav") ?? [], frames: 120_000)
        let check = {
            #expect(
                difference == nil,
                "the audio captured through PipeWire is not the offline render: \(difference ?? ""); \(aulosLog)")
        }
        // PipeWire logs no lost cycles as jackd does; aulos's own summary says when its process thread was not
        // running for a cycle ("stalled outside the render": the scheduler's doing, as on a loaded machine —
        // seen in CI's neighbour suites). Only then is a difference excused; a late render of aulos's own work
        // is not.
        // The same when the recorder itself was skipped: its file then lacks a cycle that aulos played (it
        // counts cycles that did not start where the last ended).
        let stalled = aulosLog.firstMatch(of: /(\d+) slices? stalled outside the render/).flatMap { Int($0.1) } ?? 0
        let captureLog = (try? String(contentsOfFile: folder + "/capture.log", encoding: .utf8)) ?? ""
        let gaps = captureLog.firstMatch(of: /gaps (\d+)/).flatMap { Int($0.1) } ?? 0
        if stalled > 0 || gaps > 0 {
            withKnownIssue(
                Comment(
                    rawValue: "aulos's process thread was not scheduled for \(stalled) cycle(s); the recorder "
                        + "missed \(gaps)"),
                isIntermittent: true, check)
        } else {
            check()
        }
    }

    /// PipeWire's graph forced to 44.1 kHz under a live aulos: the rig is rebuilt at 44.1 kHz, once (a new
    /// client is told the default rate until it joins the graph, so the unit joins for a cycle to learn it).
    @Test func rateChangeRebuildsTheRigOnce() throws {
        let pipewire = try HeadlessPipeWire(in: folder)
        let aulos = try BackgroundAulos(
            ["play", "--driver", "jack", "--connect-outputs", "none"], in: folder, environment: pipewire.environment)
        #expect(try aulos.waitForStatus { ($0["seconds"] as? Double ?? 0) > 0.3 }, "\(aulos.stderr)")
        #expect(try aulos.status()?["sampleRate"] as? Double == 48_000)
        try pipewire.setSetting("clock.force-rate", "44100")
        #expect(
            try aulos.waitForStatus {
                $0["sampleRate"] as? Double == 44_100 && ($0["seconds"] as? Double ?? 0) > 0.5
            }, "\(aulos.stderr)")
        #expect(aulos.stderr.components(separatedBy: "rebuilding the rig").count == 2, "\(aulos.stderr)")
    }
}

/// The demo piece two beats (1.2 s) later, written to `folder`: a capture client connected as aulos starts
/// would miss the first cycles of a piece that sounds from frame 0 (PipeWire links ports asynchronously).
func latePiece(in folder: String) throws -> String {
    let demo = try String(contentsOfFile: repositoryRoot + "/presets/scores/demo.score", encoding: .utf8)
    let lines = demo.split(separator: "\n").map { line -> String in
        let words = line.split(separator: " ", maxSplits: 1)
        guard words.count == 2, words[0].hasSuffix("b"), let beat = Double(words[0].dropLast()),
            !words[1].hasPrefix("tempo"), !words[1].hasPrefix("program")
        else { return String(line) }
        return "\(beat + 2)b \(words[1])"
    }
    let path = folder + "/late.score"
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

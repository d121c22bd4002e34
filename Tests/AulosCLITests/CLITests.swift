import AulosTestSupport
import Foundation
import Testing

/// Runs the built `aulos` binary as a user would and captures what it prints.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// The `aulos` executable the tests run: the one built beside this test bundle, in the same build folder
/// (`swift build --show-bin-path` of the same scratch path and configuration), so `make asan` and
/// `make tsan` run the sanitised `aulos` they built and a release test run its release build — never a
/// debug binary left in `.build/debug` by another build, possibly stale. The bundle is the running
/// executable (`swift test` and scripts/run-tests.sh both run it directly), so its folder is
/// /proc/self/exe's.
let aulosBinary: String = {
    let bundle =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    let binary = URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("aulos").path
    precondition(
        FileManager.default.isExecutableFile(atPath: binary),
        "no aulos beside the test bundle at \(binary): build it with the tests (swift build --build-tests)")
    return binary
}()

/// Runs aulos (or `executable`: another copy of it, a system tool) to its end.
func runAulos(
    _ arguments: [String], in directory: String? = nil, limitingFileSize bytes: Int? = nil,
    environment: [String: String] = [:], executable: String = aulosBinary
) throws -> CommandResult {
    let binary = URL(fileURLWithPath: executable)
    let process = Process()
    if let bytes {
        // util-linux's prlimit: the file-size limit (ulimit -f) a quota or a full disk looks like to a writer.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--fsize=\(bytes)", binary.path] + arguments
    } else {
        process.executableURL = binary
        process.arguments = arguments
    }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    // Every live `aulos play` serves a control socket at the default path: each run gets a default of its own,
    // so tests running side by side (or a service on this machine) never meet there.
    var environment = environment
    let socketFolder = NSTemporaryDirectory() + "aulos-run-\(UUID().uuidString)"
    if environment["AULOS_CONTROL_SOCKET"] == nil { environment["AULOS_CONTROL_SOCKET"] = socketFolder + "/control" }
    defer { try? FileManager.default.removeItem(atPath: socketFolder) }
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = Pipe()
    process.standardInput = FileHandle.nullDevice  // nothing waits on the test runner's terminal
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}

@Suite struct CLITests {
    @Test func versionAndHelp() throws {
        let version = try runAulos(["--version"])
        #expect(version.status == 0)
        let lines = version.stdout.split(separator: "\n")
        #expect(lines.first?.split(separator: ".").count == 3, "a semantic version: \(version.stdout)")
        // The checkout's build plays its own tree's data (found from the binary's place, not compiled in).
        #expect(lines.dropFirst().first.map(String.init) == "data: " + repositoryRoot, "\(version.stdout)")
        for command in [[], ["units"], ["graph"], ["render"], ["presets"], ["soundfont"]] {
            let help = try runAulos(command + ["--help"])
            #expect(help.status == 0, "\(command)")
            #expect(help.stdout.contains("USAGE"), "\(command)")
        }
    }

    @Test func unitsListsEveryBuiltInUnitAndFilters() throws {
        let all = try runAulos(["units"])
        #expect(all.status == 0)
        // Units Aulos wrote say so; those that reimplement a Core Audio unit show its description as an alias.
        #expect(all.stdout.contains("auou genr Auls  1.0.0    Aulos: Generic Output  (Core Audio: auou/genr/appl)"))
        #expect(all.stdout.contains("aufc conv Auls  1.0.0    Aulos: Converter  (Core Audio: aufc/conv/appl)"))
        #expect(!all.stdout.contains("Apple:"))
        #expect(all.stdout.contains("augn tone Auls"))
        #expect(all.stdout.contains("aumu osyn Auls"))
        #expect(all.stdout.contains("aumu fsmp Auls"))
        let outputs = try runAulos(["units", "--matching", "auou"])
        #expect(outputs.stdout.split(separator: "\n").count == 3)  // header, Generic Output, ALSA I/O
        #expect(outputs.stdout.contains("auou alsa Auls"))
        // Code ported from Core Audio searches by Apple's description and finds Aulos's unit.
        let ported = try runAulos(["units", "--matching", "auou/genr/appl"])
        #expect(ported.stdout.split(separator: "\n").count == 2 && ported.stdout.contains("Aulos: Generic Output"))
        let bad = try runAulos(["units", "--matching", "toolong/x"])
        #expect(bad.status == 64)
    }

    @Test func presetsListsSynthPresetsAndParameters() throws {
        let result = try runAulos(["presets"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("89: Warm Pad"))
        #expect(result.stdout.contains("osc1Waveform"))
        #expect(result.stdout.contains("saw|pulse|triangle|sine|noise"))
        #expect(result.stdout.contains("AulosGM.sf2"))
        #expect(result.stdout.contains("21: Vocal Booster"))
        #expect(result.stdout.contains("  band: Band, 4 parts"), "\(result.stdout)")
        #expect(result.stdout.contains("  stage: Stage, a set of 4 rigs"))
        // The effects a rig's returns and master chain can name, with their presets and parameters.
        #expect(result.stdout.contains("  reverb: Room, Hall, Plate, Chamber, Cathedral, FluidSynth\n"))
        #expect(result.stdout.contains("    decay-time           0.1…30, 2\n"))
        #expect(result.stdout.contains("sync-kind            0…2, 0 (straight, dotted, triplet)"))
    }

    /// `aulos presets --soundfont FILE`: a font's presets by bank and program (FluidR3's bank 8 variations
    /// among them), read from its headers; a file that is not one is one line and a non-zero exit.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/FluidR3_GM.sf2")))
    func presetsListsASoundFontsBanksAndPrograms() throws {
        let listed = try runAulos(["presets", "--soundfont", "/usr/share/sounds/sf2/FluidR3_GM.sf2"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("  0: Yamaha Grand Piano"), "\(listed.stdout.prefix(400))")
        #expect(lines.contains("  bank 8 28: Funk Guitar"))
        #expect(lines.contains("  bank 128 0: Standard"))
        // By bank and program.
        let piano = lines.firstIndex(of: "  0: Yamaha Grand Piano") ?? 0
        let funk = lines.firstIndex(of: "  bank 8 28: Funk Guitar") ?? 0
        #expect(piano < funk)
        let bad = try runAulos(["presets", "--soundfont", "/dev/null"])
        #expect(bad.status != 0 && bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        #expect(bad.stderr.contains("/dev/null"), "\(bad.stderr)")
    }

    /// A factory rig by name, from a folder outside the source tree: `--rig band` (it failed, only paths were
    /// taken); a name that is neither a file nor a factory rig is an error naming it.
    @Test func aFactoryRigIsFoundByName() throws {
        let folder = NSTemporaryDirectory() + "aulos-rig-name-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let score = folder + "/one.score"
        try "0f on 60 vel=100\n4800f off 60\n9600f end\n".write(toFile: score, atomically: true, encoding: .utf8)
        let rendered = try runAulos(["render", score, "--rig", "band", "--tail", "0", "-o", "out.wav"], in: folder)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/out.wav"))
        let graph = try runAulos(["graph", "--rig", "stage"], in: folder)
        #expect(graph.status == 0 && graph.stdout.contains("Piano"), "\(graph.stderr)")
        let missing = try runAulos(["render", score, "--rig", "no-such-rig", "-o", "x.wav"], in: folder)
        #expect(
            missing.status != 0
                && missing.stderr.contains("no rig file or factory rig 'no-such-rig' (factory rigs: band,"),
            "\(missing.stderr)")
    }

    @Test func graphPrintsTheDefaultRig() throws {
        let result = try runAulos(["graph", "--slice", "128"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("'auou' 'genr' 'Auls', Aulos: Generic Output"))
        #expect(result.stdout.contains("'aumu' 'osyn' 'Auls'"))
        #expect(result.stdout.contains("'aumx' 'mcmx' 'Auls', Aulos: Multichannel Mixer"))
        // The parts mixer (node 2) into the master mixer (node 4), the synth's mix and effect sends into the
        // parts mixer, the General MIDI returns; the master through the output stage (node 7) to the output.
        #expect(result.stdout.contains("node 4 output 0 => node 7 input 0"))
        #expect(result.stdout.contains("node 7 output 0 => node 1 input 0"))
        #expect(result.stdout.contains("'aufx' 'lmtr' 'Auls', Aulos: Peak Limiter"))
        #expect(result.stdout.contains("node 3 output 0 => node 2 input 0"))
        #expect(result.stdout.contains("node 3 output 1 => node 2 input 1"))
        #expect(result.stdout.contains("128 max frames"))
        #expect(
            result.stdout.contains(
                "synth: bus 0, channels 1-16, volume 1, pan 0; sends: reverb 1 × CC 91, chorus 1 × CC 93"))
        #expect(
            result.stdout.contains(
                "reverb (send 1, follows CC 91): reverb 'FluidSynth' → master input 1, level 0.246"))
        let dry = try runAulos(["graph", "--dry"])
        #expect(dry.stdout.contains("node 2 output 0 => node 4 input 0") && !dry.stdout.contains("Returns:"))
        #expect(dry.stdout.contains("node 4 output 0 => node 1 input 0"))
        // The transport advances before a file's timeline and the MIDI scheduler dispatch, all three as
        // pre-render notifications.
        #expect(result.stdout.contains("Render Notifications: 3"))
        let sampler = try runAulos(["graph", "--instrument", "sampler", "--eq", "rock"])
        #expect(sampler.stdout.contains("'aumu' 'fsmp' 'Auls'"))
        #expect(sampler.stdout.contains("'aufx' 'ipeq' 'Auls'"))
        let rig = try runAulos(["graph", "--rig", repositoryRoot + "/presets/rigs/band.yaml"])
        #expect(rig.status == 0, "\(rig.stderr)")
        #expect(rig.stdout.contains("'aumx' 'mcmx' 'Auls'"))
        // The band's returns: the parts mixer's sends through a reverb and a chorus into the master mixer.
        #expect(rig.stdout.contains("'aufx' 'rvrb' 'Auls', Aulos: Reverb"))
        #expect(rig.stdout.contains("← node 2 output 2"), "\(rig.stdout)")
    }

    /// `aulos play` end to end through alsa-lib: a file PCM (over null) named in an --alsa-config file.
    @Test func playGoesThroughAnALSADevice() throws {
        let folder = NSTemporaryDirectory() + "aulos-cli-play-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = folder + "/asound.conf"
        try #"pcm.capturefile { type file slave.pcm { type null } file "\#(folder)/played.wav" format wav }"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        // One note, not the demo's band: the null PCM is known to be unpaced once it has taken more than twice
        // real time, and a debug build rendering the whole demo beside the other suites may not manage that.
        try "0s note A4 0.5s\n".write(toFile: folder + "/note.score", atomically: true, encoding: .utf8)
        let result = try runAulos([
            "play", folder + "/note.score", "--device", "capturefile", "--alsa-config", config, "--slice", "128",
            "--duration", "3",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        // Three seconds: a device is taken for unpaced once it is 2× real time and a quarter second ahead, and
        // a debug build with the output stage renders at about 2.7×, which one second did not always reach.
        #expect(result.stdout.hasPrefix("played 0:03"))
        #expect(
            result.stdout.contains("on capturefile (takes audio faster than real time: paced by the clock): 48000 Hz"))
        #expect(result.stdout.contains("128-frame periods × 3"))
        #expect(result.stdout.contains(" 0 xruns"))
        let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/played.wav")
        #expect((attributes[.size] as? Int ?? 0) > 48_000 * 4)  // at least a second of 16-bit stereo or more
        let devices = try runAulos(["devices"])
        #expect(devices.status == 0)
        #expect(devices.stdout.contains("null"))
    }

    /// Live play with no sequencer (this machine, CI): one line saying so and how to get it, exit 1.
    @Test(.enabled(if: access("/dev/snd/seq", F_OK) != 0, "a sequencer exists: live play would really start"))
    func livePlayWithoutASequencerSaysSo() throws {
        let result = try runAulos(["play", "--device", "null", "--duration", "1"])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "aulos: error: no ALSA sequencer: /dev/snd/seq is missing; load it with 'sudo modprobe snd-seq', "
                + "or play a file with 'aulos play FILE'\n", "what to do, and no Core Audio status code")
        #expect(result.stdout.isEmpty)
    }

    @Test func renderWritesAFile() throws {
        let path = NSTemporaryDirectory() + "aulos-cli-\(UUID().uuidString).flac"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runAulos(["render", "-o", path, "--format", "s24", "--instrument", "sampler"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("sampler (AulosGM.sf2, $AULOS_SOUNDFONT)"), "\(result.stdout)")
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(result.stderr.isEmpty)  // no progress bar when stderr is not a terminal
    }

    /// Bad input: one clear line on stderr, a non-zero exit, nothing on stdout, no file left behind.
    static let badInvocations: [BadInvocation] = [
        BadInvocation(["render", "--slice", "0"], 64),
        BadInvocation(["render", "--slice", "99999"], 64),
        BadInvocation(["render", "--sample-rate", "abc"], 64),
        BadInvocation(["render", "--format", "int8"], 64),
        BadInvocation(["render", "--program", "128"], 64),
        BadInvocation(["render", "--instrument", "synth", "--soundfont", "x.sf2"], 64),
        BadInvocation(["render", "/nonexistent/song.mid"], 1),
        BadInvocation(["render", "--instrument", "sampler", "--soundfont", "/nonexistent.sf2"], 1),
        BadInvocation(["render", "--preset", "Kazoo"], 1),
        BadInvocation(["render", "--instrument", "kazoo"], 64),
        BadInvocation(["render", "--eq", "Kazoo"], 1),
        BadInvocation(["render", "--rig", "/nonexistent/rig.yaml"], 1),
        BadInvocation(["render", "--arpeggio", "up:1/16", "--instrument", "sampler"], 1),
        BadInvocation(["render", "--arpeggio", "sideways:1/16"], 64),
        BadInvocation(["render", "--tempo", "0"], 64),
        BadInvocation(["render", "--mpe", "sideways"], 64),
        BadInvocation(["render", "--mpe", "lower 9, upper 9"], 64),
        BadInvocation(["render", "--instrument", "sampler", "--mpe", "lower"], 64),
        BadInvocation(["play", "--demo", "--device", "nosuchpcm", "--duration", "1"], 1),
        BadInvocation(["play", "--demo", "song.mid"], 64),
        BadInvocation(["play", "song.mid", "--connect", "Keystation"], 64),
        BadInvocation(["play", "--demo", "--lowest-latency"], 64),
        BadInvocation(["play", "--midi-headroom", "-5"], 64),
        BadInvocation(["play", "--midi-headroom", "10", "--lowest-latency"], 64),
        BadInvocation(["play", "--periods", "1"], 64),
        BadInvocation(["play", "--demo", "--record", "take.mp3"], 64),
        BadInvocation(["play", "--demo", "--record-parts"], 64),
        BadInvocation(["service", "unit", "--osc", "0.0.0.0:9000"], 64),
        BadInvocation(["service", "unit", "--web", "pi.local:80"], 64),
        BadInvocation(["play", "--duration", "-3"], 64),
        BadInvocation(["render", "--rig", "presets/rigs/band.yaml", "--program", "3"], 64),
        BadInvocation(["graph", "--rig", "/nonexistent/rig.yaml"], 1),
        BadInvocation(["render", "-o", "out.mp3"], 64),
        BadInvocation(["render", "--tail", "-1"], 64),
        BadInvocation(["render", "--bogus"], 64),
        BadInvocation(["nonsense"], 64),
        BadInvocation(["render", "-o", "/nonexistent-dir/demo.wav"], 1),
        BadInvocation(["render", "-o", "x.flac", "--format", "float"], 1),
        BadInvocation(["status", "--socket", "/nonexistent-dir/control"], 1),
        BadInvocation(["set", "Lead.cutoff", "900", "--socket", "/nonexistent-dir/control"], 1),
        BadInvocation(["learn", "Lead.cutoff", "--socket", "/nonexistent-dir/control"], 1),
        BadInvocation(["service", "install", "--root", "/nonexistent-dir", "--rig", "/nonexistent/rig.yaml"], 1),
        BadInvocation(["play", "song.mid", "--service"], 1),
        BadInvocation(["play", "--demo", "--send-clock"], 64),
        // Found by an audit: these trapped (a force unwrap, Int(NaN)).
        BadInvocation(["service", "unit", "--rig", "/"], 64),
        BadInvocation(["service", "unit", "--driver", "pulse"], 64),
        BadInvocation(["play", "--driver", "jak"], 64),
        BadInvocation(["play", "--driver", "alsa", "--connect-outputs", "a:b"], 64),
        BadInvocation(["play", "--driver", "jack", "--connect-outputs", "nocolon"], 64),
        BadInvocation(["play", "--driver", "jack", "--slice", "64"], 1),
        BadInvocation(["play", "--driver", "jack", "--device", "hw:1,0"], 1),
        BadInvocation(
            ["play", "--driver", "jack", "--jack-timebase", repositoryRoot + "/presets/scores/demo.score"], 1),
        BadInvocation(["learn", "X.Y", "--timeout", "nan"], 64),
        BadInvocation(["render", "--max-duration", "0"], 64),
        // Flags that were silently ignored or rounded.
        BadInvocation(["render", "--instrument", "sampler", "--preset", "Warm Pad"], 64),
        BadInvocation(["render", "--sample-rate", "44100.5"], 64),
        BadInvocation(["play", "--demo", "--slice", "8"], 64),
        BadInvocation(["render", "--max-duration", "604801"], 64),
        // Readers are bounded: an endless input is refused at its size limit, not read until memory runs out.
        BadInvocation(["render", "/dev/zero", "-o", "/tmp/never.wav"], 1),
        BadInvocation(["render", "--rig", "/dev/zero", "-o", "/tmp/never.wav"], 1),
        BadInvocation(["render", "--instrument", "sampler", "--soundfont", "/dev/zero", "-o", "/tmp/never.wav"], 1),
    ]

    /// Messages that misled, found by attacking aulos with bad input: each now says what is wrong.
    @Test func messagesSayWhatIsWrong() throws {
        let folder = NSTemporaryDirectory() + "aulos-messages-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        FileManager.default.createFile(atPath: folder + "/cut.mid", contents: Data("MThd\0\0\0\u{6}\0".utf8))
        FileManager.default.createFile(
            atPath: folder + "/parts.yaml",
            contents: Data(
                ("name: x\nparts:\n" + String(repeating: "  - instrument: synth\n", count: 65)).utf8))
        let cases: [([String], String)] = [
            // was: "does not start with 'MThd'"
            (["render", "cut.mid"], "cut.mid: truncated: the file ends after 9 bytes, inside its 14-byte MThd header"),
            // was: "Missing value for '--slice <slice>'" (a negative number read as an option)
            (["render", "--slice", "-5"], "--slice must be between 1 and 4096 frames, not -5"),
            (["render", "--tail", "-1"], "--tail must be between 0 and 60 seconds, not -1"),
            // was: "must be between 0 and 86400, not 0.0"
            (["play", "--demo", "--duration", "0"], "--duration must be more than 0 and at most 86400 seconds, not 0"),
            // was: "no RIFF header"
            (
                ["render", "--instrument", "sampler", "--soundfont", folder],
                "SoundFont \(folder): is a directory, not a SoundFont file"
            ),
            // was: "a rig set holds at most 64 parts"
            (["graph", "--rig", "parts.yaml"], "parts.yaml:3: parts: 65 parts; a rig holds at most 64"),
        ]
        for (arguments, expected) in cases {
            let result = try runAulos(arguments, in: folder)
            #expect(result.stderr == "aulos: error: \(expected)\n", "\(arguments)")
            #expect(result.status != 0)
        }
        // A script reading `status --json` gets JSON on stdout for an error too (it printed plain text).
        let status = try runAulos(["status", "--json", "--socket", folder + "/none"])
        #expect(status.status == 1 && status.stderr.isEmpty)
        #expect(
            status.stdout == #"{"error":"cannot reach aulos at \#(folder)/none: no aulos is running there"}"# + "\n")
    }

    /// The unit the installer writes is the one shipped in packaging/ (regenerate with `aulos service unit`).
    @Test func serviceUnitIsTheShippedOne() throws {
        let result = try runAulos(["service", "unit"])
        #expect(result.status == 0)
        let shipped = try String(contentsOfFile: repositoryRoot + "/packaging/systemd/aulos.service", encoding: .utf8)
        #expect(result.stdout == shipped)
        let mine = NSTemporaryDirectory() + "my-\(getpid()).yaml"
        try "parts:\n  - instrument: synth\n".write(toFile: mine, atomically: true, encoding: .utf8)
        defer { unlink(mine) }
        let custom = try runAulos(["service", "unit", "--device", "hw:1,0", "--user", "pi", "--rig", mine])
        #expect(
            custom.stdout.contains("--rig /var/lib/aulos/rigs/my-\(getpid()).yaml --device hw:1,0 ")
                && custom.stdout.contains("User=pi\n"))
        let jack = try runAulos(["service", "unit", "--driver", "jack"])
        #expect(
            jack.stdout.contains("--rig /var/lib/aulos/rigs/stage.yaml --driver jack --control-socket"))
    }

    @Test(arguments: badInvocations)
    func badInputGetsOneLineAndANonZeroExit(invocation: BadInvocation) throws {
        let (arguments, status) = (invocation.arguments, invocation.status)
        let result = try runAulos(arguments)
        #expect(result.status == status, "\(arguments): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("aulos: error: "))
        #expect(result.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "x.flac"))
    }
}

struct BadInvocation: Sendable, CustomTestStringConvertible {
    let arguments: [String]
    let status: Int32
    init(_ arguments: [String], _ status: Int32) {
        self.arguments = arguments
        self.status = status
    }
    var testDescription: String { arguments.joined(separator: " ") }
}

/// `aulos units` lists the LV2 plugins found beside the built-in units; `--lv2` shows ports and features.
@Suite struct UnitsLV2CommandTests {
    @Test func unitsListsLV2PluginsAndDescribesThem() throws {
        let all = try runAulos(["units"])
        #expect(all.status == 0)
        #expect(all.stdout.contains("aumu osyn Auls"), "the built-in units first")
        // LV2 rows read as a musician knows the plugin: name, project, what a rig writes (no hashed codes).
        let jx10 = all.stdout.split(separator: "\n").first { $0.hasSuffix("lv2:http://drobilla.net/plugins/mda/JX10") }
        #expect(jx10?.hasPrefix("aumu  MDA JX10 ") == true, "\(all.stdout.suffix(400))")
        #expect(jx10?.contains("(MDA LV2)") == true, "\(jx10 ?? "")")
        #expect(jx10?.contains("ldpz") == false, "no hashed manufacturer code: \(jx10 ?? "")")
        let described = try runAulos(["units", "--lv2", "--matching", "aumu/*/ldpz"])
        #expect(described.status == 0)
        #expect(described.stdout.contains("port 26 in  atom (MIDI) event_in"), "\(described.stdout.prefix(600))")
        #expect(described.stdout.contains("requires: urid:map"))
        #expect(described.stdout.contains("Aulos provides everything it requires"))
        #expect(!described.stdout.contains("<http://lv2plug.in/plugins/"), "--matching filters LV2 plugins too")
    }
}

/// An LV2 instrument plays a file from the command line and from a rig; what cannot be hosted is one line.
@Suite struct LV2InstrumentCommandTests {
    static let jx10 = "http://drobilla.net/plugins/mda/JX10"

    /// A scratch folder named for the test, with a score `song.score` (the caller removes the folder).
    static func folder(_ name: String, score: String) throws -> String {
        let folder = NSTemporaryDirectory() + "aulos-lv2-\(name)-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try score.write(toFile: folder + "/song.score", atomically: true, encoding: .utf8)
        return folder
    }

    /// ZynAddSubFX sends its state (kilobytes of XML) out of its atom output after a preset loads: with
    /// 8 KiB there it printed "Sending key 'state' to UI failed, out of space" on every run.
    @Test func zynAddSubFXHasRoomForItsState() throws {
        let folder = try Self.folder("zyn", score: "0b tempo 120\n0b note C4 1b vel=100\n1b end\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "name: Z\nparts:\n  - instrument: lv2:http://zynaddsubfx.sourceforge.net\n"
            .appending("    preset: \"Arpeggios: 0001-Arpeggio1.xiz\"\n")
            .write(toFile: folder + "/zyn.yaml", atomically: true, encoding: .utf8)
        let render = try runAulos(["render", "song.score", "--rig", "zyn.yaml", "-o", "z.wav"], in: folder)
        #expect(render.status == 0, "\(render.stderr)")
        // (The plugin prints it on standard output.)
        #expect(!(render.stdout + render.stderr).contains("out of space"), "\(render.stdout.prefix(300))")
    }

    @Test func anLV2InstrumentRendersAFileAndARig() throws {
        let folder = try Self.folder("render", score: "0b tempo 120\n0b note C4 1b vel=100\n1b note E4 1b\n2b end\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let render = try runAulos(
            ["render", "song.score", "--instrument", "lv2:" + Self.jx10, "--format", "float", "-o", "jx.wav"],
            in: folder)
        #expect(render.status == 0, "\(render.stderr)")
        #expect(render.stdout.contains("lv2 (MDA JX10)"), "\(render.stdout)")
        let audio = try #require(FileManager.default.contents(atPath: folder + "/jx.wav"))
        #expect(audio.count > 100_000 && audio.dropFirst(100).contains { $0 != 0 }, "the JX10 made sound")
        try "name: JX\nparts:\n  - name: Lead\n    instrument: lv2:\(Self.jx10)\n    channels: [1]\n    volume: 0.5\n"
            .write(toFile: folder + "/jx.yaml", atomically: true, encoding: .utf8)
        let rig = try runAulos(["render", "song.score", "--rig", "jx.yaml", "-o", "rig.wav"], in: folder)
        #expect(rig.status == 0, "\(rig.stderr)")
        #expect(rig.stdout.contains("lv2 (MDA JX10)"), "\(rig.stdout)")
    }

    /// Tests/Fixtures/lv2: plugins that cannot be hosted, beside the installed ones.
    static var testBundles: [String: String] {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/lv2").path
        return ["LV2_PATH": fixtures + ":/usr/lib/x86_64-linux-gnu/lv2:/usr/lib/aarch64-linux-gnu/lv2:/usr/lib/lv2"]
    }

    @Test(arguments: [
        (
            "lv2:urn:aulos:test:needs-feature",
            "part 'lv2': Needs Feature requires the LV2 feature <urn:aulos:test:no-such-feature>, which Aulos does "
                + "not provide"
        ),
        ("lv2:urn:aulos:test:no-instance", "part 'lv2': No Instance could not be instantiated at 48000 Hz"),
        (
            "lv2:urn:aulos:test:missing-binary",
            "Missing Binary could not be instantiated at 48000 Hz (Failed to open library /nonexistent/aulos-missing.so"
        ),
        ("lv2:urn:aulos:test:needs-cv", "part 'lv2': Needs CV: port 0 'cv' is cv, which Aulos cannot connect"),
        ("lv2:http://example.org/nothing", "part 'lv2': no LV2 plugin <http://example.org/nothing> installed"),
        ("lv2:jx10", "--instrument takes synth, sampler, sfz:PATH or lv2:URI, not 'lv2:jx10'"),
    ])
    func whatCannotBeHostedIsOneLine(_ instrument: String, _ expected: String) throws {
        let result = try runAulos(
            ["render", "--instrument", instrument, "-o", NSTemporaryDirectory() + "never.wav"],
            environment: Self.testBundles)
        #expect(result.status != 0)
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    /// A plugin that does not declare hardRTCapable is hosted, and flagged where the user looks: in
    /// `aulos units --lv2` and as a warning when it plays (the service's status carries the same list).
    @Test func aPluginThatIsNotHardRealTimeCapableIsFlagged() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/lv2-soft-real-time").path
        let units = try runAulos(["units", "--lv2"], environment: ["LV2_PATH": fixtures])
        #expect(units.stdout.contains("Soft Amplifier") && units.stdout.contains("not hard-real-time capable"))
        let render = try runAulos(
            [
                "render", "--instrument", "lv2:http://lv2plug.in/plugins/eg-amp", "-o",
                NSTemporaryDirectory() + "soft.wav",
            ],
            environment: ["LV2_PATH": fixtures])
        #expect(render.status == 0, "\(render.stderr)")
        #expect(render.stderr.contains("Soft Amplifier is not hard-real-time capable"), "\(render.stderr)")
    }
}

/// A bad plugin costs only itself: a bundle whose port index is -1 or 4000000000 (lilv 0.24 memsets some
/// 32 GB for either, and every command that read any plugin died with signal 11), or whose plugin.ttl is
/// not Turtle, beside good ones. Each runs as a child process, so the test outlives a crash.
@Suite struct LV2BrokenBundleCommandTests {
    @Test func brokenBundlesAreOneLineEachAndTheRestPlay() throws {
        let folder = try LV2TestBundles.folder()
        defer { TestFiles.remove(folder) }
        let path = ["LV2_PATH": folder]
        let units = try runAulos(["units"], environment: path)
        #expect(units.status == 0, "\(units.stderr.prefix(300))")
        #expect(units.stdout.contains("lv2:\(LV2TestBundles.jx10)"))
        #expect(units.stdout.contains("lv2:\(LV2TestBundles.amp)"))
        let warnings = units.stderr.split(separator: "\n")
        #expect(warnings.count == 4, "one line per broken plugin or bundle: \(units.stderr)")
        for (uri, bundle, reason) in [
            (LV2TestBundles.negativeIndex, "negative-index.lv2", "a port's lv2:index is -1, not 0…0"),
            (LV2TestBundles.hugeIndex, "huge-index.lv2", "a port's lv2:index is 4000000000, not 0…0"),
            (
                LV2TestBundles.syntaxError, "syntax-error.lv2",
                "its Turtle could not be read (plugin.ttl line 5, column 51: missing ';' or '.')"
            ),
        ] {
            let line = "aulos: warning: the LV2 plugin <\(uri)> in \(folder)/\(bundle) cannot be loaded: \(reason)"
            #expect(warnings.contains { $0.hasPrefix(line) }, "\(line)\n\(units.stderr)")
        }
        // A manifest lilv cannot read hides its plugins from lilv; the bundle is named instead.
        let unreadable =
            "aulos: warning: the LV2 bundle \(folder)/manifest-error.lv2 cannot be read (manifest.ttl line 3, column "
        #expect(warnings.contains { $0.hasPrefix(unreadable) }, "\(units.stderr)")

        // A render that uses the good plugin neither crashes nor hears of the broken ones.
        let score = folder + "/song.score"
        TestFiles.write("0b tempo 120\n0b note C4 1b vel=100\n1b end\n", to: score)
        let render = try runAulos(
            ["render", score, "--instrument", "lv2:" + LV2TestBundles.jx10, "-o", folder + "/jx.wav"],
            environment: path)
        #expect(render.status == 0, "\(render.stderr.prefix(300))")
        #expect(render.stdout.contains("lv2 (MDA JX10)"))

        // Naming a broken one is a one-line error with its reason, wherever it is named.
        let instrument = try runAulos(
            ["render", score, "--instrument", "lv2:" + LV2TestBundles.hugeIndex, "-o", folder + "/no.wav"],
            environment: path)
        #expect(instrument.status != 0)
        #expect(
            instrument.stderr.contains("cannot be loaded: a port's lv2:index is 4000000000"), "\(instrument.stderr)")
        #expect(instrument.stderr.split(separator: "\n").count == 1, "\(instrument.stderr)")
        // One its bundle's manifest names was "not installed".
        let hidden = try runAulos(
            ["render", score, "--instrument", "lv2:" + LV2TestBundles.manifestError, "-o", folder + "/no.wav"],
            environment: path)
        #expect(
            hidden.stderr.contains("cannot be loaded: its bundle's manifest could not be read (manifest.ttl line 3"))
        #expect(hidden.stderr.split(separator: "\n").count == 1, "\(hidden.stderr)")
        let presets = try runAulos(["presets", "--unit", "lv2:" + LV2TestBundles.negativeIndex], environment: path)
        #expect(presets.status != 0)
        #expect(presets.stderr.contains("cannot be loaded: a port's lv2:index is -1"), "\(presets.stderr)")
        // It read as an effect without audio inputs ("takes no audio in, so it cannot be an effect").
        TestFiles.write(
            "name: Broken\nparts:\n  - name: Lead\n    instrument: lv2:\(LV2TestBundles.jx10)\n    channels: [1]\n"
                + "    effects:\n      - unit: lv2:\(LV2TestBundles.syntaxError)\n",
            to: folder + "/rig.yaml")
        let rig = try runAulos(
            ["render", score, "--rig", folder + "/rig.yaml", "-o", folder + "/no.wav"], environment: path)
        #expect(rig.status != 0)
        #expect(
            rig.stderr.contains("cannot be loaded: its Turtle could not be read (plugin.ttl line 5"), "\(rig.stderr)")
        #expect(rig.stderr.split(separator: "\n").count == 1, "\(rig.stderr)")
    }
}

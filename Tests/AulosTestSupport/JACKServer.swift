import Foundation
import Testing

/// A real JACK server for a test: `jackd -d dummy` under a name of its own (so tests never meet another
/// server), paced by its timer at the sample rate, with the test's C client (scripts/jack/jack-probe.c)
/// built beside it to capture audio, send MIDI and drive the transport.
public final class JACKServer {
    /// jackd and a C compiler are there (scripts/setup.sh --tests installs jackd2).
    public static let isAvailable =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/cc")

    public let name: String
    public let folder: String
    private var process: Process?

    /// Starts `jackd -n aulos-test-NAME -d dummy -r 48000 -p PERIOD` and waits until a client can connect.
    /// Each test names its own server, always the same: JACK's shared registry holds eight servers, and the
    /// entry of one that was killed is reclaimed only by a server of the same name, so fresh names on every
    /// run would fill it ("Too many servers already active").
    public init(named server: String, period: Int = 256, in folder: String) throws {
        name = "aulos-test-\(server)"
        self.folder = folder
        try start(period: period)
    }

    deinit { stop() }

    /// What aulos and the probe need to find this server.
    public var environment: [String: String] { ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"] }

    public func start(period: Int = 256) throws {
        let jackd = Process()
        jackd.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        jackd.arguments = ["-n", name, "-d", "dummy", "-r", "48000", "-p", "\(period)"]
        FileManager.default.createFile(atPath: folder + "/jackd.log", contents: nil)
        jackd.standardOutput = FileHandle(forWritingAtPath: folder + "/jackd.log")
        jackd.standardError = jackd.standardOutput
        try jackd.run()
        process = jackd
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if try probe(["transport", "ready", "0"]).status == 0 { return }
            usleep(100_000)
        }
        throw CocoaError(.featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "jackd did not come up"])
    }

    /// Cycles the server lost so far, by its log: its timer woke late, or a client had not finished in time
    /// ("XRun"). A test checking timing to the frame cannot tell anything on a machine that lost one.
    public var lostCycles: Int {
        let log = (try? String(contentsOfFile: folder + "/jackd.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains("XRun") || $0.contains("was not finished") }.count
    }

    /// Runs `checks` — expectations that hold only if no cycle was lost — as known issues when the server
    /// lost a cycle since `since` (its count at the start): on a loaded machine its timer, not Aulos, decided
    /// them. They are still run and reported. Aulos placing MIDI late is not excused: that is what the
    /// frame checks exist to catch.
    public func timingChecks(lostSince since: Int, _ checks: () throws -> Void) rethrows {
        let lost = lostCycles - since
        if lost > 0 {
            let why = "on this loaded machine jackd lost \(lost) cycle(s)"
            withKnownIssue(
                Comment(rawValue: why + ": frame-exact timing cannot be judged"), isIntermittent: true
            ) { try checks() }
        } else {
            try checks()
        }
    }

    /// SIGKILL, as a crash or `killall -9 jackd` would end it.
    public func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// Runs jack_bufsize against this server.
    public func setBufferSize(_ frames: Int) throws -> Int32 {
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/jack_bufsize")
        tool.arguments = ["\(frames)"]
        tool.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        tool.standardOutput = FileHandle.nullDevice
        try tool.run()
        tool.waitUntilExit()
        return tool.terminationStatus
    }

    /// The probe built once per test run (a C JACK client: scripts/jack/jack-probe.c).
    public static let probePath: String = {
        let path = NSTemporaryDirectory() + "aulos-jack-probe-\(getpid())"
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        cc.arguments = ["-O2", "-o", path, TestFiles.repositoryRoot + "/scripts/jack/jack-probe.c", "-ljack", "-lm"]
        try? cc.run()
        cc.waitUntilExit()
        return path
    }()

    /// Runs the probe to completion: its exit status and output.
    @discardableResult
    public func probe(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let running = try startProbe(arguments)
        return running.finish()
    }

    /// Starts the probe in the background; `finish()` waits for it.
    public func startProbe(_ arguments: [String]) throws -> RunningProbe {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.probePath)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return RunningProbe(process: process, output: output)
    }

    public struct RunningProbe {
        public let process: Process
        let output: Pipe

        public func finish() -> (status: Int32, output: String) {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
    }
}

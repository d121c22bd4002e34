import Foundation

/// The built `aulos` binary running in the background (a live instrument or a service), with its output
/// captured to files and its control socket queried as a user would, with `aulos status --json`.
final class BackgroundAulos {
    let process = Process()
    let folder: String
    let socketPath: String

    /// Starts `aulos ARGUMENTS --control-socket FOLDER/control`; output goes to FOLDER/stdout and stderr.
    init(_ arguments: [String], in folder: String, environment: [String: String] = [:]) throws {
        self.folder = folder
        socketPath = folder + "/control"
        process.executableURL = URL(fileURLWithPath: aulosBinary)
        process.arguments = arguments + ["--control-socket", socketPath]
        process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        FileManager.default.createFile(atPath: folder + "/stdout", contents: nil)
        FileManager.default.createFile(atPath: folder + "/stderr", contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: folder + "/stdout")
        process.standardError = FileHandle(forWritingAtPath: folder + "/stderr")
        try process.run()
    }

    /// Two one-part synth rigs, One (part Lead) and Two (part Pad), and `set.yaml` listing them.
    static func writeTwoRigSet(in folder: String) throws {
        try "name: One\nparts:\n  - name: Lead\n    instrument: synth\n".write(
            toFile: folder + "/one.yaml", atomically: true, encoding: .utf8)
        try "name: Two\nparts:\n  - name: Pad\n    instrument: synth\n".write(
            toFile: folder + "/two.yaml", atomically: true, encoding: .utf8)
        try "name: Set\nrigs:\n  - program: 0\n    rig: one.yaml\n  - program: 1\n    rig: two.yaml\n".write(
            toFile: folder + "/set.yaml", atomically: true, encoding: .utf8)
    }

    deinit {
        guard process.isRunning else { return }
        process.terminate()
        if waitForExit(seconds: 5) == nil {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var stdout: String { (try? String(contentsOfFile: folder + "/stdout", encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: folder + "/stderr", encoding: .utf8)) ?? "" }

    /// `aulos status --json` decoded, or nil when it does not answer.
    func status() throws -> [String: Any]? {
        let result = try runAulos(["status", "--json", "--socket", socketPath])
        guard result.status == 0 else { return nil }
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    }

    /// Polls the status every 100 ms until `condition` holds (true) or `seconds` pass (false).
    func waitForStatus(seconds: Double = 15, _ condition: ([String: Any]) -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let status = try status(), condition(status) { return true }
            guard process.isRunning else { return false }
            usleep(100_000)
        }
        return false
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// One raw request line on the control socket, as any program allowed on it could send; the reply line,
    /// or nil when there is none within five seconds.
    func request(_ line: String) -> String? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in socketPath.utf8.prefix(107).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return nil }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var reply: [UInt8] = []
        var byte: UInt8 = 0
        while read(descriptor, &byte, 1) == 1 && byte != 10 { reply.append(byte) }
        return reply.isEmpty ? nil : String(decoding: reply, as: UTF8.self)
    }

    /// Waits up to `seconds` for the process to exit; its exit status, or nil if it is still running.
    func waitForExit(seconds: Double = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        return process.isRunning ? nil : process.terminationStatus
    }
}

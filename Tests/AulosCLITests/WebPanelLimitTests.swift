import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The panel's limits on what one client may cost everyone else: who may use a loopback panel without a
/// password, idle connections.
extension WebPanelTests {
    /// `executable ARGUMENTS`, its standard output and exit status.
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The control socket refuses `nobody`; so does the passwordless loopback panel: a connection's owner
    /// is read from the kernel (/proc/net/tcp), and only root, the service's user and its group get in.
    /// `nobody` used to read the status, take the write token and change anything.
    @Test func aLoopbackPanelWithoutAPasswordServesOnlyTheServicesUsers() throws {
        guard getuid() == 0 else { return }  // running a client as another user needs root
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (aulos, _) = try Self.servePanel("one.yaml", in: folder, port: port) { $0["rig"] as? String == "One" }
        let url = "http://127.0.0.1:\(port)/api/session"
        let asNobody = try Self.run(
            "/usr/bin/setpriv",
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/curl", "-s", "-m", "5", "-w",
                "\n%{http_code}", url,
            ])
        #expect(asNobody.stdout.hasSuffix("\n403"), "\(asNobody.stdout)")
        #expect(asNobody.stdout.contains("--web-password"), "\(asNobody.stdout)")
        #expect(!asNobody.stdout.contains("csrf"), "\(asNobody.stdout)")
        let asRoot = try Self.run("/usr/bin/curl", ["-s", "-m", "5", "-w", "\n%{http_code}", url])
        #expect(asRoot.stdout.hasSuffix("\n200") && asRoot.stdout.contains("csrf"), "\(asRoot.stdout)")
        // From an IPv6 socket (a v4-mapped address: the socket is listed in /proc/net/tcp6), the same.
        let mapped = [
            "-g", "-s", "-m", "5", "-w", "\n%{http_code}", "-H", "Host: 127.0.0.1:\(port)",
            "http://[::ffff:127.0.0.1]:\(port)/api/session",
        ]
        let nobodyMapped = try Self.run(
            "/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/curl"] + mapped)
        #expect(nobodyMapped.stdout.hasSuffix("\n403"), "\(nobodyMapped.stdout)")
        let rootMapped = try Self.run("/usr/bin/curl", mapped)
        #expect(rootMapped.stdout.hasSuffix("\n200"), "\(rootMapped.stdout)")
        #expect(aulos.process.isRunning)
    }

    /// 128 connections that never send a byte, all from one address, used to take every place at the door
    /// for as long as they were held, before any login. Now one address holds at most 16 (its idlest is
    /// closed for a newcomer), and a connection silent past its time is closed.
    @Test func idleConnectionsDoNotLockThePanelOut() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (aulos, _) = try Self.servePanel(
            "one.yaml", in: folder, port: port, environment: ["AULOS_WEB_IDLE_SECONDS": "3"]
        ) { $0["rig"] as? String == "One" }
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<128 {
            if let descriptor = Self.connection(to: port) { idle.append(descriptor) }
        }
        usleep(1_200_000)  // the gate has taken them all, and they have been quiet past a newcomer's grace
        let started = Date()
        let answer = Self.http("GET", "/api/session", port: port)
        #expect(answer?.status == 200, "a request beside 128 idle connections: \(answer.debugDescription)")
        #expect(Date().timeIntervalSince(started) < 0.9, "answered at once, not when the idle ones time out")

        // One that sends nothing is closed once its (here) 3 s are up.
        let silent = try #require(Self.connection(to: port))
        defer { close(silent) }
        var timeout = timeval(tv_sec: 6, tv_usec: 0)
        setsockopt(silent, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let waited = Date()
        #expect(recv(silent, &byte, 1, 0) == 0, "closed by the panel")
        #expect(Date().timeIntervalSince(waited) < 4.5)
        #expect(aulos.process.isRunning)
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The panel's limits on what one client may cost everyone else: who may use a loopback panel without a
/// password, idle connections, guessing passwords, passwords with a NUL, two panels' cookies.
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

    /// A `--web-password` file for `password`, made by `aulos web-password` as a user makes it.
    static func passwordFile(in folder: String, _ password: String) throws -> String {
        let path = folder + "/web-password"
        let hasher = Process()
        hasher.executableURL = URL(fileURLWithPath: aulosBinary)
        hasher.arguments = ["web-password", "--output", path]
        let input = Pipe()
        hasher.standardInput = input
        hasher.standardOutput = FileHandle.nullDevice
        try hasher.run()
        input.fileHandleForWriting.write(Data((password + "\n").utf8))
        try input.fileHandleForWriting.close()
        hasher.waitUntilExit()
        #expect(hasher.terminationStatus == 0)
        return path
    }

    /// aulos on the null device playing one.yaml of `folder` with a panel on loopback at `port` that needs
    /// the password of `passwordFile`, once its status says it plays.
    static func servePasswordPanel(in folder: String, port: UInt16, passwordFile: String) throws -> BackgroundAulos {
        let aulos = try BackgroundAulos(
            [
                "play", "--service", "--rig", folder + "/one.yaml", "--device", "null", "--web", "127.0.0.1:\(port)",
                "--web-password", passwordFile,
            ], in: folder)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "One" }, "\(aulos.stderr)")
        return aulos
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

    /// Every local user connects from 127.0.0.1: the per-address limit counts each user (uid) apart there, so
    /// `nobody` holding 20 connections (refused, or a head begun and never ended) cannot crowd out the
    /// panel's own user, as it did when 16 from 127.0.0.1 were all the panel would take.
    @Test func anotherLocalUserCannotCrowdTheOwnerOut() throws {
        guard getuid() == 0 else { return }
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (aulos, _) = try Self.servePanel("one.yaml", in: folder, port: port) { $0["rig"] as? String == "One" }
        let script = """
            socket, time = __import__("socket"), __import__("time")  # (no import line: the package check reads them)
            held = []
            for _ in range(20):
                s = socket.create_connection(("127.0.0.1", \(port)))
                s.sendall(b"GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")
                held.append(s)
            print("holding", flush=True)
            time.sleep(3)
            """
        let crowd = Process()
        crowd.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        crowd.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", script]
        let out = Pipe()
        crowd.standardOutput = out
        try crowd.run()
        defer { crowd.terminate() }
        let said = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        #expect(said.contains("holding"), "\(said)")
        usleep(300_000)
        let answer = Self.http("GET", "/api/session", port: port)
        #expect(answer?.status == 200, "the owner beside nobody's 20 connections: \(answer.debugDescription)")
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

    /// Wrong passwords are evaluated at a rate for the whole panel, not a delay per request: 50 clients
    /// guessing in parallel for two seconds get a handful of tries, the rest 429.
    @Test func guessingPasswordsInParallelIsRateLimited() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let password = try Self.passwordFile(in: folder, "correct horse")
        let aulos = try Self.servePasswordPanel(in: folder, port: port, passwordFile: password)
        let lock = NSLock()
        nonisolated(unsafe) var seen: [Int: Int] = [:]
        let seconds = 2.0
        let deadline = Date().addingTimeInterval(seconds)
        let done = DispatchGroup()
        for client in 0..<50 {
            done.enter()
            // Threads of their own: 50 clients at once, not as many as there are cores.
            Thread {
                while Date() < deadline {
                    let body = #"{"password":"guess \#(client)"}"#
                    let status = Self.http("POST", "/api/login", port: port, body: body)?.status ?? 0
                    lock.withLock { seen[status, default: 0] += 1 }
                    if status == 0 { usleep(20_000) }  // turned away at the door (16 per address): as a browser
                }
                done.leave()
            }.start()
        }
        done.wait()
        let evaluated = seen[401, default: 0]
        print("50 parallel guessers for \(seconds) s: \(seen) (401: tried, 429: refused untried)")
        #expect(evaluated <= 12, "wrong passwords evaluated in \(seconds) s: \(seen)")
        #expect(seen[429, default: 0] > 0, "\(seen)")
        #expect(seen[200] == nil)
        #expect(aulos.process.isRunning)
    }

    /// crypt(3) reads a C string: "PASSWORD\0anything" used to log in. Any control character is refused.
    @Test func aPasswordWithANulOrControlCharacterIsRefused() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let password = try Self.passwordFile(in: folder, "correct horse")
        let aulos = try Self.servePasswordPanel(in: folder, port: port, passwordFile: password)
        for body in [#"{"password":"correct horse\u0000junk"}"#, #"{"password":"correct horse\u0000"}"#] {
            let answer = Self.http("POST", "/api/login", port: port, body: body)
            #expect(answer?.status == 400, "\(body): \(answer.debugDescription)")
            #expect(answer?.headers["set-cookie"] == nil)
            #expect(answer?.body.contains("control character") == true, "\(answer?.body ?? "")")
        }
        #expect(Self.http("POST", "/api/login", port: port, body: #"{"password":"correct horse"}"#)?.status == 200)
        #expect(aulos.process.isRunning)
    }

    /// Two panels on one host (ports 8080 and 8081) used to share one cookie name; a browser keeps cookies
    /// per host, not per port, so logging into one logged the other out. Each panel's cookie has its port.
    @Test func twoPanelsOnOneHostKeepTheirSessions() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let other = folder + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try BackgroundAulos.writeTwoRigSet(in: other)
        let password = try Self.passwordFile(in: folder, "correct horse")
        let first = try Self.servePasswordPanel(in: folder, port: port, passwordFile: password)
        let second = try Self.servePasswordPanel(in: other, port: port + 1, passwordFile: password)
        // A browser's cookie jar for 127.0.0.1: one value per name, whatever the port.
        var jar: [String: String] = [:]
        for panel in [port, port + 1] {
            let login = Self.http("POST", "/api/login", port: panel, body: #"{"password":"correct horse"}"#)
            #expect(login?.status == 200)
            let pair = String((login?.headers["set-cookie"] ?? "").prefix { $0 != ";" })
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            try #require(parts.count == 2, "\(pair)")
            jar[parts[0]] = parts[1]
        }
        let cookies = jar.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        for panel in [port, port + 1] {
            let session = Self.json(
                Self.http("GET", "/api/session", port: panel, headers: ["Cookie": cookies])?.body ?? "")
            #expect(session?["loggedIn"] as? Bool == true, "panel on \(panel) with cookies \(jar.keys.sorted())")
        }
        #expect(first.process.isRunning && second.process.isRunning)
    }
}

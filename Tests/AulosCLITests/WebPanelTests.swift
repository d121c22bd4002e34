import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `aulos play --web`: the panel's page, API and status WebSocket over real TCP on loopback, against the
/// service on ALSA's `null` device, with what the panel did checked through the control socket.
@Suite(.serialized) struct WebPanelTests {
    /// One HTTP/1.1 exchange on a fresh connection (Connection: close): status, headers, body.
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    static func http(
        _ method: String, _ path: String, port: UInt16, headers: [String: String] = [:], body: String = ""
    ) -> Response? {
        var lines = ["\(method) \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Connection: close"]
        if headers["Host"] != nil { lines.removeAll { $0.hasPrefix("Host:") } }
        lines += headers.map { "\($0.key): \($0.value)" }
        lines.append("Content-Length: \(body.utf8.count)")
        guard let raw = exchange(Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8), port: port),
            let split = raw.range(of: Data("\r\n\r\n".utf8))
        else { return nil }
        let head = String(decoding: raw[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let status = head.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        var fields: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(
            status: status, headers: fields, body: String(decoding: raw[split.upperBound...], as: UTF8.self))
    }

    /// Sends `request` to 127.0.0.1:`port` and reads until the server closes (five seconds at most), or
    /// until `until` says enough has arrived.
    static func exchange(_ request: [UInt8], port: UInt16, until: ((Data) -> Bool)? = nil) -> Data? {
        guard let descriptor = connection(to: port) else { return nil }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            data.append(contentsOf: buffer[..<count])
            if let until, until(data) { break }
        }
        return data
    }

    /// A TCP connection to 127.0.0.1:`port`, or nil.
    static func connection(to port: UInt16) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    static func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// A folder with a set of two rigs, and the port the panel is given.
    static func makeSet() throws -> (folder: String, port: UInt16) {
        let folder = NSTemporaryDirectory() + "aulos-web-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try BackgroundAulos.writeTwoRigSet(in: folder)
        return (folder, UInt16(20_000 + (getpid() + 7_919) % 20_000))
    }

    /// aulos on the null device playing `rig` (a file in `folder`) with the panel on loopback at `port`, once
    /// its status says `ready`; and the CSRF token the panel hands this machine.
    static func servePanel(
        _ rig: String, in folder: String, port: UInt16, adding extra: [String] = [],
        environment: [String: String] = [:], ready: ([String: Any]) -> Bool
    ) throws -> (aulos: BackgroundAulos, csrf: String) {
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/" + rig, "--device", "null", "--web", "127.0.0.1:\(port)"]
                + extra, in: folder, environment: environment)
        #expect(try aulos.waitForStatus(ready), "\(aulos.stderr)")
        let csrf = try #require(json(http("GET", "/api/session", port: port)?.body ?? "")?["csrf"] as? String)
        return (aulos, csrf)
    }

    /// `line` through `POST /api/control`, carrying the token.
    static func control(_ line: String, port: UInt16, csrf: String) -> Response? {
        http("POST", "/api/control", port: port, headers: ["X-Aulos-CSRF": csrf], body: #"{"request":"\#(line)"}"#)
    }

    @Test func thePanelServesItsPageAndActsThroughTheControlServer() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/one.yaml", "--device", "null", "--web", "127.0.0.1:\(port)"],
            in: folder)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "One" }, "\(aulos.stderr)")

        let page = Self.http("GET", "/", port: port)
        #expect(page?.status == 200)
        #expect(page?.body.contains("<title>Aulos</title>") == true)
        #expect(Self.http("GET", "/panel.js", port: port)?.body.contains("/api/status") == true)

        let session = Self.json(Self.http("GET", "/api/session", port: port)?.body ?? "")
        let csrf = try #require(session?["csrf"] as? String)
        #expect(session?["passwordRequired"] as? Bool == false)
        let write = ["X-Aulos-CSRF": csrf, "Content-Type": "application/json"]

        let set = Self.http(
            "POST", "/api/control", port: port, headers: write, body: #"{"request":"set Lead.cutoff 1234"}"#)
        #expect(set?.status == 200, "\(set?.body ?? "no answer")")
        #expect(aulos.request("get Lead.cutoff")?.contains("1234") == true)

        // What a page of another site, or a rebinding attacker, could send is refused before it is read.
        let body = #"{"request":"set Lead.cutoff 99"}"#
        #expect(Self.http("POST", "/api/control", port: port, body: body)?.status == 403)
        #expect(
            Self.http(
                "POST", "/api/control", port: port, headers: write.merging(["Origin": "http://evil.example"]) { $1 },
                body: body)?
                .status == 403)
        #expect(Self.http("GET", "/api/parts", port: port, headers: ["Host": "evil.example:\(port)"])?.status == 403)
        #expect(
            Self.http("POST", "/api/control", port: port, headers: write, body: #"{"request":"quit"}"#)?.status == 400)
        let huge = #"{"request":"set Lead.cutoff \#(String(repeating: "9", count: 9000))"}"#
        #expect(Self.http("POST", "/api/control", port: port, headers: write, body: huge)?.status == 400)
        #expect(aulos.request("get Lead.cutoff")?.contains("1234") == true)

        let parts = Self.json(Self.http("GET", "/api/parts", port: port)?.body ?? "")
        let groups = parts?["groups"] as? [[String: Any]] ?? []
        #expect(groups.first?["name"] as? String == "Lead")
        let controls = groups.first?["controls"] as? [[String: Any]] ?? []
        #expect(controls.contains { $0["target"] as? String == "Lead.volume" })
        #expect(controls.count > 50, "every synth parameter is listed: \(controls.count)")

        // The status WebSocket: a frame of status within a second.
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        let upgrade =
            "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let stream = Self.exchange(Array(upgrade.utf8), port: port) { data in
            String(decoding: data, as: UTF8.self).contains(#""sampledNanos""#)
                && String(decoding: data, as: UTF8.self).contains("\"xruns\"")
        }
        let text = String(decoding: stream ?? Data(), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101"), "\(text.prefix(200))")
        #expect(text.contains(#""rig":"One""#))
    }

    @Test func aRigUploadIsCheckedBeforeItReplacesAnything() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (aulos, csrf) = try Self.servePanel("set.yaml", in: folder, port: port) {
            ($0["rigs"] as? [String])?.count == 2
        }
        let write = ["X-Aulos-CSRF": csrf]
        let original = try String(contentsOfFile: folder + "/set.yaml", encoding: .utf8)
        #expect(Self.http("GET", "/api/rig-file", port: port)?.body == original)

        let switched = Self.control("rig 2", port: port, csrf: csrf)
        #expect(switched?.status == 200, "\(switched?.body ?? "")")
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Two" })

        let bad = Self.http("PUT", "/api/rig-file", port: port, headers: write, body: "name: Bad\nparts: 3\n")
        #expect(bad?.status == 400)
        #expect(bad?.body.contains("not replaced") == true, "\(bad?.body ?? "")")
        #expect(try String(contentsOfFile: folder + "/set.yaml", encoding: .utf8) == original)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Two" && $0["reloads"] as? Int == 0 })
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("checking") }
        #expect(leftovers.isEmpty, "\(leftovers)")

        let good = "name: Set\nrigs:\n  - program: 0\n    rig: two.yaml\n"
        let replaced = Self.http("PUT", "/api/rig-file", port: port, headers: write, body: good)
        #expect(replaced?.status == 200, "\(replaced?.body ?? "")")
        #expect(try aulos.waitForStatus { $0["reloads"] as? Int == 1 && ($0["rigs"] as? [String]) == ["Two"] })
        #expect(try String(contentsOfFile: folder + "/set.yaml", encoding: .utf8) == good)
    }

    /// Rigs that read but cannot be built, or whose plugin crashes or exits: each upload is tried in full (in a
    /// child process) before anything is replaced, so each gets a 400 naming what stands in the way, the file
    /// stays as it was and the rig plays on. These used to get 200, replace the file, then end the service.
    @Test func aRigThatReadsButDoesNotBuildReplacesNothing() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (aulos, csrf) = try Self.servePanel(
            "set.yaml", in: folder, port: port, environment: try MisbehavingPlugins.environment()
        ) { ($0["rigs"] as? [String])?.count == 2 }
        let original = try String(contentsOfFile: folder + "/set.yaml", encoding: .utf8)
        let synth = "name: Bad\nparts:\n  - name: Lead\n    instrument: synth\n"
        let cases: [(rig: String, says: String)] = [
            (synth.replacingOccurrences(of: "synth\n", with: "synth\n    preset: No Such\n"), "no synth preset"),
            (synth + "controls:\n  - cc: 1\n    target: Leed.cutoff\n", "no part 'Leed'"),
            ("name: Bad\nparts:\n  - name: S\n    instrument: sampler\n    soundfont: /nonexistent.sf2\n", "sf2"),
            ("name: Bad\nparts:\n  - name: S\n    instrument: sampler\n    soundfont: /etc/passwd\n", "SoundFont"),
            (synth + "tuning: /nonexistent.scl\n", "nonexistent.scl"),
            (synth + "    wavetable: /nonexistent.wav\n", "wavetable"),
            ("name: Bad\nparts:\n  - name: X\n    instrument: lv2:urn:aulos:test:not-installed\n", "not-installed"),
            (MisbehavingPlugins.rig("segv-run"), "crashed"),
            (MisbehavingPlugins.rig("exit-instantiate"), "exit status 3"),
        ]
        for (rig, says) in cases {
            let answer = Self.http("PUT", "/api/rig-file", port: port, headers: ["X-Aulos-CSRF": csrf], body: rig)
            #expect(answer?.status == 400, "\(rig): \(answer?.body ?? "no answer")")
            #expect(answer?.body.contains(says) == true, "\(rig): \(answer?.body ?? "")")
            #expect(try String(contentsOfFile: folder + "/set.yaml", encoding: .utf8) == original)
            #expect(aulos.process.isRunning, "\(aulos.stderr)")
        }
        // Load: a broken file beside the playing one is refused the same way.
        try MisbehavingPlugins.rig("segv-run").write(toFile: folder + "/crash.yaml", atomically: true, encoding: .utf8)
        let load = Self.http(
            "POST", "/api/rig-files/load", port: port, headers: ["X-Aulos-CSRF": csrf], body: #"{"name":"crash.yaml"}"#)
        #expect(load?.status == 400 && load?.body.contains("crashed") == true, "\(load?.body ?? "")")
        #expect(try aulos.waitForStatus { ($0["rigs"] as? [String])?.count == 2 && $0["reloads"] as? Int == 0 })
        #expect(aulos.process.isRunning)
    }

    /// Errors that go over the network name the file and the line, never the content of a file other than the
    /// rig files: an uploaded set naming `rig: /etc/passwd` returned its first line, a tuning of /etc/passwd
    /// quoted its second. An uploaded set may list only rig files of its own folder; what the upload itself
    /// says is still quoted.
    @Test func errorsSentOverTheNetworkNeverQuoteOtherFiles() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (aulos, csrf) = try Self.servePanel("set.yaml", in: folder, port: port) {
            ($0["rigs"] as? [String])?.count == 2
        }
        func upload(_ text: String) -> String {
            Self.http("PUT", "/api/rig-file", port: port, headers: ["X-Aulos-CSRF": csrf], body: text)?.body ?? ""
        }
        let outside = upload("name: Set\nrigs:\n  - program: 0\n    rig: /etc/passwd\n")
        #expect(outside.contains("lists rig files in its own folder"), "\(outside)")
        #expect(!outside.contains("root:"), "\(outside)")
        let tuning = upload("name: T\ntuning: /etc/passwd\nparts:\n  - name: Lead\n    instrument: synth\n")
        #expect(tuning.contains("/etc/passwd:"), "\(tuning)")
        #expect(!tuning.contains("root:") && !tuning.contains("daemon:"), "\(tuning)")
        let own = upload("name: T\nparts:\n  - name: Lead\n    instrument: synth\n    preset: Nothing Like It\n")
        #expect(own.contains("'Nothing Like It'"), "\(own)")
        #expect(aulos.process.isRunning)
    }

    @Test func rigFilesBesideThePlayingOneAreLoadedAndSaved() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (aulos, csrf) = try Self.servePanel("set.yaml", in: folder, port: port) {
            ($0["rigs"] as? [String])?.count == 2
        }
        func post(_ action: String, _ name: String) -> Response? {
            Self.http(
                "POST", "/api/rig-files/" + action, port: port, headers: ["X-Aulos-CSRF": csrf],
                body: #"{"name":"\#(name)"}"#)
        }
        let listing = Self.json(Self.http("GET", "/api/rig-files", port: port)?.body ?? "")
        #expect(listing?["files"] as? [String] == ["one.yaml", "set.yaml", "two.yaml"])
        #expect(listing?["playing"] as? String == "set.yaml")

        // Save writes the set as it plays: a set file listing its rigs saved beside it.
        #expect(post("save", "copy.yaml")?.status == 200)
        let copy = try String(contentsOfFile: folder + "/copy.yaml", encoding: .utf8)
        #expect(copy.contains("rig: \"copy.one.yaml\"") && copy.contains("rig: \"copy.two.yaml\""), "\(copy)")
        for rig in ["one", "two"] {
            #expect(FileManager.default.fileExists(atPath: folder + "/copy.\(rig).yaml"))
        }
        #expect(post("save", "copy.yaml")?.body.contains("never replaces") == true)
        #expect(post("save", "../outside.yaml")?.status == 400)
        #expect(!FileManager.default.fileExists(atPath: folder + "/../outside.yaml"))

        #expect(post("load", "missing.yaml")?.body.contains("not loaded") == true)
        #expect(try aulos.waitForStatus { ($0["rigs"] as? [String])?.count == 2 && $0["reloads"] as? Int == 0 })
        #expect(post("load", "two.yaml")?.status == 200)
        #expect(try aulos.waitForStatus { ($0["rigs"] as? [String]) == ["Two"] && $0["reloads"] as? Int == 1 })
    }

    @Test func theRecordButtonRecordsWhilePlaying() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (aulos, csrf) = try Self.servePanel(
            "one.yaml", in: folder, port: port, adding: ["--record-dir", folder, "--record-parts"]
        ) { $0["rig"] as? String == "One" }
        func control(_ line: String) -> Response? { Self.control(line, port: port, csrf: csrf) }
        #expect(control("record start ../escape.wav")?.status == 400)
        #expect(control("record start take.mp3")?.status == 400)
        let started = control("record start take.wav")
        #expect(started?.status == 200, "\(started?.body ?? "")")
        #expect(try aulos.waitForStatus { ($0["recordingTo"] as? String)?.hasSuffix("take.wav") == true })
        #expect(control("record start other.wav")?.body.contains("already recording") == true)
        #expect(control("midi 90 3C 64")?.status == 200)
        // The MIDI activity log the panel shows.
        #expect(
            try aulos.waitForStatus { status in
                (status["recentMIDI"] as? [[String: Any]] ?? []).contains {
                    ($0["text"] as? String)?.hasPrefix("ch 1 note on 60 100") == true
                }
            })
        usleep(500_000)
        let stopped = control("record stop")
        #expect(stopped?.status == 200, "\(stopped?.body ?? "")")
        let frames = Self.json(stopped?.body ?? "")?["frames"] as? Int ?? 0
        #expect(frames > 10_000, "\(stopped?.body ?? "")")
        let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/take.wav")[.size] as? Int) ?? 0
        #expect(size >= frames * 8, "a float stereo WAV of \(frames) frames: \(size) bytes")
        // The part beside it (--record-parts), as long — and the output stage's look-ahead longer: both start
        // on the music's first frame, and the master's last 64 frames were still in the limiter's look-ahead
        // when the take stopped (the part is tapped before it).
        #expect(Self.json(stopped?.body ?? "")?["parts"] as? [String] == [folder + "/take.Lead.wav"])
        let part = (try? FileManager.default.attributesOfItem(atPath: folder + "/take.Lead.wav")[.size] as? Int) ?? 0
        #expect(part == size + 64 * 8, "\(part) against \(size)")
        #expect(control("record start take.wav")?.body.contains("never replace") == true)
        unlink(folder + "/take.wav")
        #expect(control("record start take.wav")?.body.contains("take.Lead.wav exists") == true)
        #expect(try aulos.waitForStatus { $0["recordingTo"] == nil && $0["xruns"] as? Int == 0 })
    }

    @Test func theFontsAndTheirPresetsAreListedForTheirParts() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // FluidR3 (installed for the tests): its presets are stored out of bank and program order.
        let font = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
        try "name: Keys\nparts:\n  - name: Piano\n    instrument: sampler\n    soundfont: \(font)\n".write(
            toFile: folder + "/keys.yaml", atomically: true, encoding: .utf8)
        let (aulos, csrf) = try Self.servePanel("keys.yaml", in: folder, port: port) { $0["rig"] as? String == "Keys" }
        let answer = Self.control("fonts", port: port, csrf: csrf)
        let fonts = Self.json(answer?.body ?? "")?["fonts"] as? [[String: Any]] ?? []
        let played = try #require(fonts.first, "\(answer?.body.prefix(300) ?? "no answer")")
        #expect(played["parts"] as? [String] == ["Piano"])
        let presets = played["presets"] as? [[String: Any]] ?? []
        #expect(presets.count > 100)
        #expect(presets.contains { $0["bank"] as? Int == 0 && $0["program"] as? Int == 0 })
        // By bank and program, as a menu lists them (a font stores its presets in any order).
        let numbers = presets.map { ($0["bank"] as? Int ?? -1) * 128 + ($0["program"] as? Int ?? -1) }
        #expect(numbers == numbers.sorted(), "presets not in bank and program order: \(numbers.prefix(8))")
        let chosen = Self.control("preset Piano 0 24", port: port, csrf: csrf)
        #expect(chosen?.status == 200, "\(chosen?.body ?? "")")
        #expect(try aulos.waitForStatus { ($0["midiDelivered"] as? Int ?? 0) >= 3 })
    }

    @Test func beyondLoopbackThePanelNeedsAPasswordAndASession() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let refused = try runAulos(["play", "--device", "null", "--web", "0.0.0.0:\(port)", "--duration", "1"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("only with a password"), "\(refused.stderr)")
        // A file without a "$id$" hash (empty, or text libcrypt would take as an old DES salt) is refused.
        for content in ["", "notahash\n"] {
            try content.write(toFile: folder + "/not-a-hash", atomically: true, encoding: .utf8)
            let result = try runAulos([
                "play", "--device", "null", "--web", "0.0.0.0:\(port)", "--web-password", folder + "/not-a-hash",
                "--duration", "1",
            ])
            #expect(result.status != 0)
            #expect(result.stderr.contains("holds no password hash"), "\(result.stderr)")
        }

        // The hash, as a user makes it: the password on standard input, the hash into a file.
        let hasher = Process()
        hasher.executableURL = URL(fileURLWithPath: aulosBinary)
        hasher.arguments = ["web-password", "--output", folder + "/web-password"]
        let input = Pipe()
        hasher.standardInput = input
        hasher.standardOutput = FileHandle.nullDevice
        try hasher.run()
        input.fileHandleForWriting.write(Data("correct horse\n".utf8))
        try input.fileHandleForWriting.close()
        hasher.waitUntilExit()
        #expect(hasher.terminationStatus == 0)
        let hash = try String(contentsOfFile: folder + "/web-password", encoding: .utf8)
        #expect(hash.hasPrefix("$y$") && !hash.contains("correct"))

        let aulos = try BackgroundAulos(
            [
                "play", "--service", "--rig", folder + "/one.yaml", "--device", "null", "--web", "0.0.0.0:\(port)",
                "--web-password", folder + "/web-password",
            ], in: folder)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "One" }, "\(aulos.stderr)")
        let session = Self.json(Self.http("GET", "/api/session", port: port)?.body ?? "")
        #expect(session?["passwordRequired"] as? Bool == true)
        #expect(session?["csrf"] is NSNull)
        let body = #"{"request":"set Lead.cutoff 777"}"#
        #expect(
            Self.http("POST", "/api/control", port: port, headers: ["X-Aulos-CSRF": "guess"], body: body)?.status == 403
        )
        #expect(Self.http("GET", "/api/parts", port: port)?.status == 401)
        #expect(Self.http("POST", "/api/login", port: port, body: #"{"password":"wrong"}"#)?.status == 401)

        let login = try #require(Self.http("POST", "/api/login", port: port, body: #"{"password":"correct horse"}"#))
        #expect(login.status == 200)
        let cookie = try #require(login.headers["set-cookie"])
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let csrf = try #require(Self.json(login.body)?["csrf"] as? String)
        let pair = String(cookie.prefix { $0 != ";" })
        #expect(Self.http("POST", "/api/control", port: port, headers: ["Cookie": pair], body: body)?.status == 403)
        let set = Self.http(
            "POST", "/api/control", port: port, headers: ["Cookie": pair, "X-Aulos-CSRF": csrf], body: body)
        #expect(set?.status == 200, "\(set?.body ?? "")")
        #expect(aulos.request("get Lead.cutoff")?.contains("777") == true)
    }

    /// Sends `head` then up to `flood` bytes more (as fast as the panel takes them, never blocking on a
    /// panel that stopped reading), and returns what the panel answered before it closed.
    static func flood(_ head: String, _ flood: Int, port: UInt16, seconds: Int = 10) -> String {
        guard let descriptor = connection(to: port) else { return "" }
        defer { close(descriptor) }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var pending = Array(head.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: flood)
        var answer = Data()
        let deadline = Date().addingTimeInterval(Double(seconds))
        while Date() < deadline {
            if !pending.isEmpty {
                let sent = pending.withUnsafeBytes {
                    send(descriptor, $0.baseAddress, min($0.count, 65_536), Int32(MSG_NOSIGNAL))
                }
                if sent > 0 { pending.removeFirst(sent) } else if errno != EAGAIN { pending = [] }
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 { answer.append(contentsOf: buffer[..<count]) }
            if count == 0 || (count < 0 && errno != EAGAIN) { break }
            if count < 0 { usleep(1000) }
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// The gate in front of the server: a head over 16 KB (an endless header line, cut off at once instead
    /// of being read as long as it is sent) or over 100 lines gets 431, a body over 1 MB 413, a chunked
    /// body 411, two Content-Lengths 400, a head not whole in time 408 — each answered and closed, before
    /// any password or token is asked for — and the panel serves on.
    @Test func oversizedAndSlowRequestsAreRefusedAtTheDoor() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/one.yaml", "--device", "null", "--web", "127.0.0.1:\(port)"],
            in: folder, environment: ["AULOS_WEB_HEAD_SECONDS": "1"])
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "One" }, "\(aulos.stderr)")
        let host = "Host: 127.0.0.1:\(port)\r\n"
        let cases: [(head: String, flood: Int, status: String)] = [
            ("GET / HTTP/1.1\r\n\(host)X-Long: ", 50 << 20, "431"),
            ("GET / HTTP/1.1\r\n\(host)" + String(repeating: "X-A: b\r\n", count: 120) + "\r\n", 0, "431"),
            ("PUT /api/rig-file HTTP/1.1\r\n\(host)Content-Length: 5000000\r\n\r\n", 5_000_000, "413"),
            ("POST /api/control HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n", 0, "411"),
            ("POST /api/control HTTP/1.1\r\n\(host)Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", 0, "400"),
            ("GET / HTTP/1.1\r\n\(host)X-Slow: ", 0, "408"),
        ]
        for (head, flood, status) in cases {
            let answer = Self.flood(head, flood, port: port)
            #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(head.prefix(60)): \(answer.prefix(200))")
            #expect(answer.contains(#"{"error":"#), "one line why")
        }
        #expect(Self.http("GET", "/api/session", port: port)?.status == 200, "the panel serves on")
        #expect(try aulos.waitForStatus { $0["xruns"] as? Int == 0 })
    }

    /// A rig file's `web:` and `osc:` start the panel and OSC as `--web` and `--osc` do; a panel open to the
    /// network from a rig file needs a password as much as one from the command line.
    @Test func aRigFileNamesItsPanelAndOSC() throws {
        let (folder, port) = try Self.makeSet()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "name: Served\nweb: 127.0.0.1:\(port)\nosc: 0\nparts:\n  - name: Lead\n    instrument: synth\n".write(
            toFile: folder + "/served.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/served.yaml", "--device", "null"], in: folder)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Served" }, "\(aulos.stderr)")
        #expect(Self.json(Self.http("GET", "/api/session", port: port)?.body ?? "")?["csrf"] is String)
        #expect(aulos.stderr.contains("OSC on 127.0.0.1:"), "\(aulos.stderr)")

        try "web: 0.0.0.0:\(port)\nparts:\n  - instrument: synth\n".write(
            toFile: folder + "/open.yaml", atomically: true, encoding: .utf8)
        let refused = try runAulos(["play", "--rig", folder + "/open.yaml", "--device", "null", "--duration", "1"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("only with a password"), "\(refused.stderr)")
    }

    @Test func aPasswordHashNeedsAPassword() throws {
        let result = try runAulos(["web-password"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("standard input"), "\(result.stderr)")
    }
}

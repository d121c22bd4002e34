import AulosCore
import AulosPlayback
import AulosRig
import AulosTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The pieces that make `aulos play --service` a good systemd citizen: the control socket, the readiness
/// notification, and the installer's files.
@Suite(.serialized) struct ServiceTests {
    let folder = "/tmp/aulos-service-\(getpid())"

    @Test func controlSocketAnswersOneLinePerRequestWithGroupOnlyPermissions() throws {
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/control"
        let server = try ControlSocket(path: path)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660, "only the service's user and group")
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        // A second server on the same path is refused while the first answers.
        do {
            _ = try ControlSocket(path: path)
            Issue.record("two servers on one socket")
        } catch {
            #expect(error.message.contains("already listening"))
        }
        let requests = ["status", "set a.b 1", String(repeating: "x", count: 5000)]
        let replies = Mutex<[String]>([])
        let client = Thread {
            for request in requests {
                let reply = (try? ControlSocket.request(request, at: path)) ?? "no reply"
                replies.withLock { $0.append(reply) }
            }
        }
        client.start()
        var seen: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while seen.count < requests.count && Date() < deadline {
            server.serve { line in
                seen.append(line)
                return #"{"echo":\#(line.count)}"#
            }
            usleep(5_000)
        }
        while replies.withLock({ $0.count }) < requests.count && Date() < deadline { usleep(5_000) }
        #expect(seen == requests)
        #expect(replies.withLock { $0 } == requests.map { #"{"echo":\#($0.count)}"# })
    }

    @Test func staleSocketFromACrashIsReplacedAndAbsentServiceIsAClearError() throws {
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/control"
        do {
            _ = try ControlSocket.request("status", at: path)
            Issue.record("reached nothing")
        } catch {
            #expect(error.message.contains("no aulos is running there"), "\(error.message)")
        }
        // A socket file nobody listens on (the process was killed): the next start takes it over.
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = Self.atAddress(path) { bind(descriptor, $0, $1) }
        close(descriptor)
        #expect(access(path, F_OK) == 0)
        let server = try ControlSocket(path: path)
        _ = server
    }

    /// Calls `body` (bind, connect) with the Unix socket address of `path`.
    static func atAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(107).enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Connects to `path` without sending anything (an idle client); nil when the connection is refused.
    static func idleClient(_ path: String) -> Int32? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard Self.atAddress(path, { connect(descriptor, $0, $1) }) == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Two hundred clients that connect and say nothing (they used to be served one at a time, a second
    /// each, on the control tick, and made `aulos status` fail with EAGAIN): requests from others are still
    /// answered at once, the idle ones are closed at their deadline, and at most `maximumClients` are held.
    @Test func idleClientsNeitherDelayNorLockOutOthers() throws {
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/control"
        let server = try ControlSocket(path: path)
        var idle: [Int32] = []
        defer { for descriptor in idle { close(descriptor) } }
        for _ in 0..<200 {
            if let descriptor = Self.idleClient(path) { idle.append(descriptor) }
            if idle.count % 20 == 0 { usleep(10_000) }  // let the socket thread accept them
        }
        #expect(idle.count == 200, "every connection was accepted")
        let replies = Mutex<[String]>([])
        let client = Thread {
            for index in 0..<5 {
                let reply = (try? ControlSocket.request("status \(index)", at: path)) ?? "no reply"
                replies.withLock { $0.append(reply) }
            }
        }
        client.start()
        let deadline = Date().addingTimeInterval(10)
        while replies.withLock({ $0.count }) < 5 && Date() < deadline {
            server.serve { #"{"echo":"\#($0)"}"# }
            #expect(server.openConnections <= ControlSocket.maximumClients)
            usleep(5_000)
        }
        #expect(replies.withLock { $0 } == (0..<5).map { #"{"echo":"status \#($0)"}"# })
        // Past their deadline the idle clients are gone.
        let closing = Date().addingTimeInterval(4)
        while server.openConnections > 0 && Date() < closing { usleep(50_000) }
        #expect(server.openConnections == 0)
    }

    /// sd_notify's datagram, received on a socket standing in for systemd's.
    @Test func readinessReachesTheNotifySocket() throws {
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/notify"
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(receiver) }
        #expect(Self.atAddress(path) { bind(receiver, $0, $1) } == 0)
        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect(ServiceNotifier.isSupervised)
        #expect(ServiceNotifier.notify("READY=1\nSTATUS=playing"))
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(receiver, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(count > 0 && String(decoding: buffer[..<max(0, count)], as: UTF8.self) == "READY=1\nSTATUS=playing")
        unsetenv("NOTIFY_SOCKET")
        #expect(!ServiceNotifier.notify("READY=1"), "outside systemd it does nothing")
    }

    /// `aulos service install --root DIR` lays out the binary, presets, rigs and SoundFont and the unit;
    /// the unit is the one shipped in packaging/; uninstall removes them again.
    @Test func installerLaysOutFilesAndTheShippedUnit() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var installer = ServiceInstaller()
        installer.root = folder
        let executable = "/bin/true"
        let lines = try installer.install(executable: executable, presets: TestFiles.presets, soundFont: nil)
        #expect(lines.count == 5, "\(lines)")
        for path in [
            "/usr/local/bin/aulos", "/usr/local/share/aulos/presets/rigs/stage.yaml",
            "/usr/local/share/aulos/presets/synth/089-warm-pad.json", "/var/lib/aulos/rigs/stage.yaml",
            "/var/lib/aulos/recordings", "/etc/systemd/system/aulos.service",
        ] {
            #expect(access(folder + path, F_OK) == 0, "\(path)")
        }
        #expect(access(folder + "/usr/local/bin/aulos", X_OK) == 0)
        // The set the service plays loads from its own writable folder (its rig files are found beside it).
        #expect(try RigSet.load(folder + "/var/lib/aulos/rigs/stage.yaml").entries.count == 4)
        let unit = try String(contentsOfFile: folder + "/etc/systemd/system/aulos.service", encoding: .utf8)
        let shipped = try String(
            contentsOfFile: TestFiles.presets + "/../packaging/systemd/aulos.service", encoding: .utf8)
        #expect(unit == shipped, "packaging/systemd/aulos.service is what the installer writes: regenerate it")
        for line in [
            "Type=notify", "LimitRTPRIO=95", "LimitMEMLOCK=infinity", "Restart=on-failure",
            "ExecReload=/bin/kill -HUP $MAINPID",
            "ExecStart=/usr/local/bin/aulos play --service --rig /var/lib/aulos/rigs/stage.yaml "
                + "--device default --control-socket /run/aulos/control --record-dir /var/lib/aulos/recordings",
            "RestrictAddressFamilies=AF_UNIX", "StandardError=journal", "StateDirectory=aulos", "ProtectSystem=strict",
        ] {
            #expect(unit.contains(line + "\n"), "\(line)")
        }
        let removed = try installer.uninstall()
        #expect(
            removed.count == 4 && access(folder + "/usr/local/bin/aulos", F_OK) != 0
                && access(folder + "/usr/local/share/aulos", F_OK) != 0)
        #expect(access(folder + "/var/lib/aulos/rigs/stage.yaml", F_OK) == 0, "the service's rigs are the user's")
        try? FileManager.default.removeItem(atPath: folder + "/var")
        #expect(try installer.uninstall() == ["nothing to remove: aulos is not installed under \(folder)/usr/local"])
    }

    /// A rig that names the panel or OSC opens the unit to IPv4 as the options do; a panel beyond this
    /// machine without a password is refused before anything is installed.
    @Test func aRigsServersReachTheUnit() throws {
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        TestFiles.write("osc: 9000\nparts:\n  - instrument: synth\n", to: folder + "/osc.yaml")
        TestFiles.write("web: 0.0.0.0:8080\nparts:\n  - instrument: synth\n", to: folder + "/open.yaml")
        var installer = ServiceInstaller()
        installer.root = folder + "/root"
        #expect(installer.unitText.contains("RestrictAddressFamilies=AF_UNIX\n"))
        installer.rig = folder + "/osc.yaml"
        try installer.readRig()
        #expect(installer.unitText.contains("RestrictAddressFamilies=AF_UNIX AF_INET\n"))
        installer.rig = folder + "/open.yaml"
        #expect(throws: InstallError.self) {
            try installer.install(executable: "/bin/true", presets: TestFiles.presets, soundFont: nil)
        }
        #expect(access(folder + "/root", F_OK) != 0, "nothing installed for a panel open to all without a password")
        installer.webPasswordFile = "/etc/aulos/web-password"
        try installer.readRig()
        #expect(installer.unitText.contains("RestrictAddressFamilies=AF_UNIX AF_INET\n"))
    }

    /// Network MIDI from the options goes into ExecStart as given; from them or from the rig it opens the unit to
    /// IPv4 and IPv6 (its peers may be either). An allow list or a latency with no port is refused.
    @Test func networkMIDIReachesTheUnit() throws {
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        TestFiles.write(
            "network-midi:\n  listen: 5004\n  secret: x\nparts:\n  - instrument: synth\n", to: folder + "/net.yaml")
        TestFiles.write("parts:\n  - instrument: synth\n", to: folder + "/plain.yaml")
        var installer = ServiceInstaller()
        installer.root = folder + "/root"
        installer.networkMIDIListen = "[::]:5004"
        installer.networkMIDIAllow = [NetworkPrefix("192.168.1.0/24")!, NetworkPrefix("::1")!]
        installer.networkMIDILatency = 2.5
        installer.networkMIDIConnect = ["192.168.1.5:5004", "[fe80::2]:5004"]
        try installer.readRig()
        #expect(
            installer.unitText.contains(
                " --network-midi [::]:5004 --network-midi-allow 192.168.1.0/24,::1 --network-midi-latency 2.5 "
                    + "--network-midi-connect 192.168.1.5:5004,[fe80::2]:5004\n"),
            "\(installer.unitText)")
        #expect(installer.unitText.contains("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"))
        #expect(!installer.hasUnusedNetworkMIDISecret)

        // The rig's key alone: nothing in ExecStart (play reads the rig), the network opened all the same.
        var fromRig = ServiceInstaller()
        fromRig.root = folder + "/root"
        fromRig.rig = folder + "/net.yaml"
        try fromRig.readRig()
        #expect(!fromRig.unitText.contains("--network-midi"))
        #expect(fromRig.unitText.contains("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"))
        #expect(fromRig.hasUnusedNetworkMIDISecret)
        fromRig.networkMIDILatency = 1
        try fromRig.readRig()
        #expect(fromRig.unitText.contains(" --network-midi-latency 1\n"), "a latency tunes the rig's")
        // Network MIDI 2.0 uses the secret; --network-midi2 goes into ExecStart.
        fromRig.networkMIDI2Listen = "5673"
        try fromRig.readRig()
        #expect(fromRig.unitText.contains(" --network-midi2 5673\n"), "\(fromRig.unitText)")
        #expect(!fromRig.hasUnusedNetworkMIDISecret)

        var orphan = ServiceInstaller()
        orphan.root = folder + "/root"
        orphan.rig = folder + "/plain.yaml"
        orphan.networkMIDIAllow = [NetworkPrefix("10.0.0.0/8")!]
        #expect(throws: InstallError.self) { try orphan.readRig() }
        orphan.rig = nil
        #expect(throws: InstallError.self) { try orphan.readRig() }
        orphan.networkMIDIAllow = nil
        orphan.networkMIDIConnect = ["192.168.1.5:5004"]
        #expect(throws: InstallError.self) { try orphan.readRig() }
        fromRig.networkMIDIConnect = ["192.168.1.5:5004"]
        try fromRig.readRig()
        #expect(
            fromRig.unitText.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }?.split(separator: " ")
                .joined(separator: " ").contains(" --network-midi-connect 192.168.1.5:5004") == true,
            "peers invited from the rig's port"
        )
        orphan.networkMIDIConnect = ["pi.local:5004"]
        orphan.networkMIDIListen = "5004"
        #expect(throws: InstallError.self) { try orphan.readRig() }
        orphan.networkMIDIConnect = nil
        orphan.networkMIDIListen = "70000"
        #expect(throws: InstallError.self) { try orphan.readRig() }
        orphan.networkMIDIListen = nil
        orphan.networkMIDI2Listen = "pi.local:5673"
        #expect(throws: InstallError.self) { try orphan.readRig() }
        #expect(access(folder + "/root", F_OK) != 0, "nothing installed")
    }

    /// A set is installed with its rigs beside it; a reinstall keeps the rigs changed since (the panel's
    /// uploads) and keeps an earlier copy of the rig asked for as NAME.old; a set reaching outside its
    /// folder is refused.
    @Test func aReinstallKeepsTheRigsChangedSince() throws {
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        mkdir(folder + "/mine", 0o755)
        mkdir(folder + "/mine/more", 0o755)
        TestFiles.write("name: A\nparts:\n  - instrument: synth\n", to: folder + "/mine/a.yaml")
        TestFiles.write("name: B\nparts:\n  - instrument: synth\n", to: folder + "/mine/more/b.yaml")
        TestFiles.write(
            "rigs:\n  - program: 0\n    rig: a.yaml\n  - program: 1\n    rig: more/b.yaml\n",
            to: folder + "/mine/set.yaml")
        var installer = ServiceInstaller()
        installer.root = folder + "/root"
        installer.rig = folder + "/mine/set.yaml"
        _ = try installer.install(executable: "/bin/true", presets: TestFiles.presets, soundFont: nil)
        let rigs = folder + "/root/var/lib/aulos/rigs"
        #expect(try RigSet.load(rigs + "/set.yaml").entries.map(\.rig.name) == ["A", "B"])
        #expect(installer.unitText.contains("--rig /var/lib/aulos/rigs/set.yaml "))

        // Changed where the service plays them (as the panel would), then installed again.
        TestFiles.write("name: Changed\nparts:\n  - instrument: synth\n", to: rigs + "/band.yaml")
        TestFiles.write("name: A2\nparts:\n  - instrument: synth\n", to: rigs + "/a.yaml")
        let lines = try installer.install(executable: "/bin/true", presets: TestFiles.presets, soundFont: nil)
        #expect(try RigSet.load(rigs + "/band.yaml").entries[0].rig.name == "Changed", "a factory rig kept")
        #expect(try RigSet.load(rigs + "/a.yaml").entries[0].rig.name == "A", "the rig asked for is installed")
        #expect(try RigSet.load(rigs + "/a.yaml.old").entries[0].rig.name == "A2", "and the earlier one kept")
        #expect(lines.contains { $0.contains("a.yaml.old") } && lines.contains { $0.contains("kept 5 already") })

        TestFiles.write("rigs:\n  - program: 0\n    rig: ../a.yaml\n", to: folder + "/mine/more/out.yaml")
        installer.rig = folder + "/mine/more/out.yaml"
        #expect(throws: InstallError.self) { try installer.readRig() }
    }

    @Test func installerRefusesARigThatWouldNotLoadAtBoot() throws {
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        TestFiles.write("parts: []\n", to: folder + "/broken.yaml")
        var installer = ServiceInstaller()
        installer.root = folder + "/root"
        installer.rig = folder + "/broken.yaml"
        #expect(throws: InstallError.self) {
            try installer.install(executable: "/bin/true", presets: TestFiles.presets, soundFont: nil)
        }
        #expect(access(folder + "/root", F_OK) != 0, "nothing installed for a rig that cannot play")
    }
}

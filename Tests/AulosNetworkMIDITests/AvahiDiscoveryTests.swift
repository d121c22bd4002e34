import AulosTestSupport
import Foundation
import Synchronization
import Testing

@testable import AulosNetworkMIDI

/// The names DNS-SD takes, checked before Avahi sees them.
@Suite struct DNSServiceNameTests {
    @Test func instanceNamesAreOneLabelCutAtACharacter() {
        #expect(DNSServiceName.instanceName("Stage Rig") == "Stage Rig")
        #expect(DNSServiceName.instanceName("  ") == "Aulos")
        let long = String(repeating: "é", count: 40)  // 80 bytes: 31 fit in 63
        let cut = DNSServiceName.instanceName(long)
        #expect(cut.utf8.count == 62)
        #expect(cut == String(repeating: "é", count: 31))
    }

    @Test func serviceTypesAreUnderscoreLabelAndTransport() {
        #expect(DNSServiceName.isValidType("_apple-midi._udp"))
        #expect(DNSServiceName.isValidType("_midi2._udp"))
        for bad in [
            "apple-midi._udp", "_apple-midi", "_apple-midi._sctp", "_-x._udp", "_._udp", "_a.b._udp",
            "_abcdefghijklmnop._udp", "_mid i._udp",
        ] {
            #expect(!DNSServiceName.isValidType(bad), "\(bad)")
        }
    }
}

/// Where a service is advertised follows the address its socket listens on.
@Suite struct AdvertisedScopeTests {
    @Test func everyAddressIsEverywhereAndOneAddressIsItsInterface() throws {
        #expect(AdvertisedScope(listeningOn: nil) == .everywhere)
        #expect(AdvertisedScope(listeningOn: "::") == .everywhere)
        let ipv4 = try #require(AdvertisedScope(listeningOn: "0.0.0.0"))
        #expect(ipv4.interfaceIndex == nil && ipv4.version == .ipv4 && ipv4.described == " over IPv4")
        // Loopback is an interface every machine has (the caller does not advertise it; the scope is still right).
        let loopback = try #require(AdvertisedScope(listeningOn: "127.0.0.1"))
        #expect(loopback.interfaceIndex == Int32(if_nametoindex("lo")) && loopback.version == .ipv4)
        #expect(loopback.described == " on lo")
        if let six = AdvertisedScope(listeningOn: "::1") {
            #expect(six.interfaceIndex == Int32(if_nametoindex("lo")) && six.version == .ipv6)
        }
        // An address no interface has (TEST-NET-1, the documentation prefix), and text that is no address.
        #expect(AdvertisedScope(listeningOn: "192.0.2.7") == nil)
        #expect(AdvertisedScope(listeningOn: "2001:db8::7") == nil)
        #expect(AdvertisedScope(listeningOn: "pi.local") == nil)
    }
}

/// A real avahi-daemon on a private D-Bus system bus (scripts/avahi/private-avahi.sh: its own network namespace,
/// so neither the machine's network nor another daemon is touched): the advertiser publishes, Avahi renames a
/// name in use, the browser finds what was published, and a daemon that goes away is said, not fatal. Needs root
/// and avahi-daemon (scripts/setup.sh --tests); without them it prints why and checks nothing.
/// `make test-avahi` drives the same daemon with Avahi's own tools and the `aulos` commands.
@Suite(.serialized) struct AvahiDiscoveryTests {
    /// Notices from an advertiser. Threads: Avahi's appends, the test's reads, under the lock.
    final class Notices: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func append(_ line: String) { lines.withLock { $0.append(line) } }

        /// Waits (up to 10 s: the daemon probes a name for about a second) for a notice containing `text`.
        func wait(for text: String) -> Bool {
            for _ in 0..<1000 {
                if all.contains(where: { $0.contains(text) }) { return true }
                usleep(10_000)
            }
            return false
        }
    }

    static let script = TestFiles.repositoryRoot + "/scripts/avahi/private-avahi.sh"

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func advertisedRenamedBrowsedAndWithdrawnWithTheDaemon() throws {
        let folder = NSTemporaryDirectory() + "aulos-avahi-\(getpid())"
        let started = try Self.run(["start", folder])
        defer {
            _ = try? Self.run(["stop", folder])
            try? FileManager.default.removeItem(atPath: folder)
        }
        guard started.status == 0, let line = started.output.split(separator: "\n").last,
            line.hasPrefix("DBUS_SYSTEM_BUS_ADDRESS=")
        else {
            print("skipped: Avahi discovery with the daemon (\(started.output.trimmingCharacters(in: .newlines)))")
            return
        }
        // libavahi-client reaches the bus this names (libdbus reads it at each connection). Only ever replaced,
        // never added: glibc's setenv reallocates the environment's array to add a name, and a getenv on another
        // test's thread can then read the freed one. scripts/run-tests.sh puts it there (libdbus's own default)
        // before any thread starts.
        guard let saved = getenv("DBUS_SYSTEM_BUS_ADDRESS").map({ String(cString: $0) }) else {
            print("skipped: Avahi discovery with the daemon (DBUS_SYSTEM_BUS_ADDRESS must be in the environment")
            print("  when the tests start, as scripts/run-tests.sh puts it: setting a new name races other threads)")
            return
        }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", String(line.dropFirst("DBUS_SYSTEM_BUS_ADDRESS=".count)), 1)
        defer { setenv("DBUS_SYSTEM_BUS_ADDRESS", saved, 1) }

        let first = Notices()
        let advertiser = AvahiAdvertiser { first.append($0) }
        defer { advertiser.stop() }
        #expect(advertiser.advertise(type: DNSServiceName.appleMIDI, port: 15104, name: "Aulos Test"))
        #expect(first.wait(for: "advertised as 'Aulos Test' (_apple-midi._udp port 15104)"), "\(first.all)")

        // The same name from another client: Avahi's alternative, said.
        let second = Notices()
        let rival = AvahiAdvertiser { second.append($0) }
        defer { rival.stop() }
        #expect(rival.advertise(type: DNSServiceName.appleMIDI, port: 15106, name: "Aulos Test"))
        #expect(rival.advertise(type: DNSServiceName.networkMIDI2, port: 15108, name: "Aulos Test"))
        #expect(second.wait(for: "advertised as 'Aulos Test #2' (_apple-midi._udp port 15106)"), "\(second.all)")
        #expect(second.wait(for: "advertised as 'Aulos Test' (_midi2._udp port 15108)"), "\(second.all)")
        #expect(rival.advertisedNames == ["Aulos Test #2", "Aulos Test"])
        #expect(!rival.advertise(type: "apple-midi", port: 5004, name: "x"))
        #expect(second.all.contains { $0.contains("'apple-midi' port 5004 is not a service DNS-SD can advertise") })

        // The IP version is passed on: over IPv4 it is found; over IPv6 alone (the daemon's namespace has no IPv6)
        // it is not.
        let third = Notices()
        let scoped = AvahiAdvertiser { third.append($0) }
        defer { scoped.stop() }
        #expect(
            scoped.advertise(
                type: DNSServiceName.appleMIDI, port: 15110, name: "Scoped 4",
                scope: try #require(
                    AdvertisedScope(listeningOn: "0.0.0.0"))))
        let onlySix = AdvertisedScope(interfaceIndex: nil, version: .ipv6, interfaceName: nil)
        #expect(scoped.advertise(type: DNSServiceName.appleMIDI, port: 15112, name: "Scoped 6", scope: onlySix))
        #expect(third.wait(for: "advertised as 'Scoped 4' (_apple-midi._udp port 15110) through Avahi over IPv4"))
        let scopedPeers = try AvahiBrowser.browse(types: [DNSServiceName.appleMIDI]).get()
            .filter { $0.name.hasPrefix("Scoped") }.map { "\($0.name) \($0.address):\($0.port)" }
        #expect(scopedPeers == ["Scoped 4 10.78.0.1:15110"], "\(scopedPeers) \(third.all)")

        let peers = try AvahiBrowser.browse().get().filter { $0.name.hasPrefix("Aulos Test") }
        let found = peers.map { "\($0.name) \($0.type) \($0.address):\($0.port) \($0.isLocal)" }
        #expect(
            found == [
                "Aulos Test _apple-midi._udp 10.78.0.1:15104 true", "Aulos Test _midi2._udp 10.78.0.1:15108 true",
                "Aulos Test #2 _apple-midi._udp 10.78.0.1:15106 true",
            ])

        // The daemon goes away (the bus stays): the advertiser says so once and keeps running; the browser says why.
        let pid = try #require(Int32(String(contentsOfFile: folder + "/avahi.pid").trimmingCharacters(in: .newlines)))
        kill(pid, SIGTERM)
        #expect(first.wait(for: "not advertised: avahi-daemon is not running; peers can add this box by address"))
        #expect(first.all.filter { $0.hasPrefix("not advertised") }.count == 1, "\(first.all)")
        #expect(AvahiBrowser.browse() == .failure(AvahiUnavailable(reason: "avahi-daemon is not running")))
    }
}

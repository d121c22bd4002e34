import AulosCore
import AulosRig
import AulosTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A rig's or set's `network-midi:`: the port, the allow list, the playout latency, Network MIDI 2.0's port and
/// secret, every mistake one line with the file and line.
@Suite struct NetworkMIDIRigTests {
    let part = "parts:\n  - instrument: synth\n"

    @Test func scalarAndMappingFormsRead() throws {
        #expect(
            try Rig(yaml: "network-midi: 5004\n" + part).servers.networkMIDI == NetworkMIDISettings(listen: "5004"))
        let rig = try Rig(
            yaml: """
                network-midi:
                  listen: "[::1]:5004"
                  allow: [192.168.1.0/24, "::1", 10.1.2.3]
                  latency-ms: 2.5
                  secret: s3cret
                """ + "\n" + part)
        let settings = try #require(rig.servers.networkMIDI)
        #expect(settings.listen == "[::1]:5004")
        #expect(settings.allowText == ["192.168.1.0/24", "::1", "10.1.2.3"])
        #expect(settings.latencyMilliseconds == 2.5)
        #expect(settings.secret == "s3cret")
        #expect(rig.servers.needsNetwork && rig.servers.needsIPv6)
        // Empty, like absent, is the local network; one address alone is a list of one.
        let empty = try Rig(yaml: "network-midi:\n  listen: 5004\n  allow: []\n" + part)
        #expect(empty.servers.networkMIDI?.allow == nil)
        let one = try Rig(yaml: "network-midi:\n  listen: 0.0.0.0:5004\n  allow: 10.0.0.0/8\n" + part)
        #expect(one.servers.networkMIDI?.allowText == ["10.0.0.0/8"])
        // midi2: a Network MIDI 2.0 host beside the AppleMIDI one.
        let both = try Rig(yaml: "network-midi:\n  listen: 5004\n  midi2: 5673\n" + part)
        #expect(both.servers.networkMIDI?.midi2 == "5673")
        #expect(try Rig(yaml: "network-midi: 5004\n" + part).servers.networkMIDI?.midi2 == nil)
        // Network MIDI 2.0 alone: no AppleMIDI host.
        let alone = try Rig(yaml: "network-midi:\n  midi2: 5673\n  allow: 10.0.0.0/8\n" + part)
        #expect(alone.servers.networkMIDI?.listen == nil && alone.servers.networkMIDI?.midi2 == "5673")
        #expect(try Rig(yaml: alone.yaml()) == alone, "\(alone.yaml())")
        // users: Network MIDI 2.0's accounts, name to password.
        let users = try Rig(
            yaml: "network-midi:\n  listen: 5004\n  users:\n    alice: pw-1\n    \"bob b\": \"2\"\n" + part)
        #expect(users.servers.networkMIDI?.users == ["alice": "pw-1", "bob b": "2"])
        #expect(users.servers.networkMIDI?.hasAuthentication == true)
    }

    /// `connect:`: the peers Aulos invites, a list or one; empty, like absent, none.
    @Test func connectListsThePeersToInvite() throws {
        let rig = try Rig(
            yaml: "network-midi:\n  listen: 5004\n  connect: [ \"192.168.1.5:5004\", \"[fe80::2]:5006\" ]\n" + part)
        #expect(rig.servers.networkMIDI?.connect == ["192.168.1.5:5004", "[fe80::2]:5006"])
        let one = try Rig(yaml: "network-midi:\n  listen: 5004\n  connect: 10.0.0.9:5004\n" + part)
        #expect(one.servers.networkMIDI?.connect == ["10.0.0.9:5004"])
        let none = try Rig(yaml: "network-midi:\n  listen: 5004\n  connect: []\n" + part)
        #expect(none.servers.networkMIDI == NetworkMIDISettings(listen: "5004"))
    }

    @Test func roundTripsThroughYAML() throws {
        var rig = try Rig(yaml: part)
        rig.servers.networkMIDI = NetworkMIDISettings(
            listen: "192.168.1.20:5004", allow: [NetworkPrefix("fe80::/10")!, NetworkPrefix("127.0.0.1")!],
            latencyMilliseconds: 4, secret: "a \"quoted\" secret", connect: ["192.168.1.5:5004", "[::1]:5006"])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        rig.servers.networkMIDI = NetworkMIDISettings(listen: "5004")
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        rig.servers.networkMIDI?.midi2 = "[::1]:5673"
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        rig.servers.networkMIDI?.users = ["alice": "pw: \"1\"", "zoë": "ünï"]
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
    }

    @Test func aSetNamesItsOwn() throws {
        let folder = NSTemporaryDirectory() + "aulos-network-midi-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        TestFiles.write("name: One\nnetwork-midi: 6004\n" + part, to: folder + "/one.yaml")
        TestFiles.write(
            "network-midi:\n  listen: 5004\n  latency-ms: 0\nrigs:\n  - program: 0\n    rig: one.yaml\n",
            to: folder + "/set.yaml")
        #expect(try RigSet.load(folder + "/one.yaml").servers.networkMIDI == NetworkMIDISettings(listen: "6004"))
        #expect(
            try RigSet.load(folder + "/set.yaml").servers.networkMIDI
                == NetworkMIDISettings(listen: "5004", latencyMilliseconds: 0),
            "a set's own key, not its first rig's")
        TestFiles.write(
            "network-midi:\n  listen: 5004\n  allow: [pi.local]\nrigs:\n  - program: 0\n    rig: one.yaml\n",
            to: folder + "/bad.yaml")
        #expect {
            try RigSet.load(folder + "/bad.yaml")
        } throws: { error in
            (error as? RigError)?.message.hasPrefix(folder + "/bad.yaml:3: network-midi.allow: 'pi.local'") == true
        }
    }

    @Test(arguments: [
        ("network-midi: 65535\n", "test.yaml:1: network-midi: '65535': the port must be a number from 1 to 65534"),
        ("network-midi: pi.local:5004\n", "test.yaml:1: network-midi: 'pi.local:5004': 'pi.local' is not a numeric"),
        ("network-midi: ::1:5004\n", "test.yaml:1: network-midi: '::1:5004': an IPv6 address goes in brackets"),
        ("network-midi: [5004]\n", "test.yaml:1: network-midi: must be [ADDR:]PORT"),
        ("network-midi:\n  allow: [10.0.0.0/8]\n", "test.yaml:2: network-midi: needs listen: [ADDR:]PORT"),
        (
            "network-midi:\n  midi2: 5673\n  connect: [10.0.0.2:5004]\n",
            "test.yaml:3: network-midi.connect: is AppleMIDI's: it needs listen: [ADDR:]PORT too"
        ),
        ("network-midi:\n  listen: 5004\n  port: 5004\n", "test.yaml:3: network-midi.port: unknown key"),
        (
            "network-midi:\n  listen: 5004\n  allow:\n    - 10.0.0.0/8\n    - 8.8.8.8/33\n",
            "test.yaml:5: network-midi.allow: '8.8.8.8/33' is not a numeric address or prefix"
        ),
        ("network-midi:\n  listen: 5004\n  allow: [[1]]\n", "test.yaml:3: network-midi.allow: lists addresses"),
        (
            "network-midi:\n  listen: 5004\n  latency-ms: 2000\n",
            "test.yaml:3: network-midi.latency-ms: 2000 is outside 0…1000"
        ),
        (
            "network-midi:\n  listen: 5004\n  latency-ms: soon\n",
            "test.yaml:3: network-midi.latency-ms: must be a number"
        ),
        ("network-midi:\n  listen: 5004\n  secret: \"\"\n", "test.yaml:3: network-midi.secret: is empty"),
        (
            "network-midi:\n  listen: 5004\n  connect:\n    - 10.0.0.2:5004\n    - pi.local:5004\n",
            "test.yaml:5: network-midi.connect: 'pi.local:5004': 'pi.local' is not a numeric"
        ),
        (
            "network-midi:\n  listen: 5004\n  connect: [5004]\n",
            "test.yaml:3: network-midi.connect: '5004': give the peer's numeric address and port"
        ),
        ("network-midi:\n  listen: 5004\n  connect: [[1]]\n", "test.yaml:3: network-midi.connect: lists peers"),
        (
            "network-midi:\n  listen: 5004\n  midi2: host:5673\n",
            "test.yaml:3: network-midi.midi2: 'host:5673': 'host' is not a numeric"
        ),
        ("network-midi:\n  listen: 5004\n  midi2: [1]\n", "test.yaml:3: network-midi.midi2: must be [ADDR:]PORT"),
        ("network-midi:\n  listen: 5004\n  users: [alice]\n", "test.yaml:3: network-midi.users: is a mapping"),
        (
            "network-midi:\n  listen: 5004\n  users:\n    alice: \"\"\n",
            "test.yaml:4: network-midi.users: a password is 1 to 128 bytes"
        ),
        (
            "network-midi:\n  listen: 5004\n  users:\n    alice: pw\n    \"a\\tb\": pw\n",
            "test.yaml:5: network-midi.users: a user name has no control characters"
        ),
        ("network-midi:\n  listen: 5004\n  users:\n    alice: [1]\n", "test.yaml:4: network-midi.users: is a mapping"),
    ])
    func mistakesNameFileAndLine(text: String, expected: String) {
        do {
            _ = try Rig(yaml: text + part, file: "test.yaml")
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.message.hasPrefix(expected), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
    }
}

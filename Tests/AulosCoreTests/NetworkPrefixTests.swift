import AulosCore
import Testing

/// Allow lists and `[ADDR:]PORT` read one way for the command line, rig files, the service and the host.
struct NetworkPrefixTests {
    @Test func prefixesContainTheirAddresses() throws {
        let lan = try #require(NetworkPrefix("192.168.1.0/24"))
        #expect(lan.contains("192.168.1.77") && !lan.contains("192.168.2.1") && !lan.contains("::1"))
        #expect(NetworkPrefix("192.168.1.99/24") == lan, "host bits past the length are dropped")
        #expect(lan.description == "192.168.1.0/24")
        #expect(NetworkPrefix("10.1.2.3")?.description == "10.1.2.3")
        #expect(NetworkPrefix("10.1.2.3")?.contains("10.1.2.4") == false)
        #expect(NetworkPrefix("fe80::/10")?.contains("fe80::1:2") == true)
        #expect(NetworkPrefix("fe80::/10")?.contains("fec0::1") == false)
        #expect(NetworkPrefix("2001:db8::/64")?.contains("2001:db8::ffff:1") == true)
        #expect(NetworkPrefix("2001:db8::/64")?.contains("2001:db8:0:1::1") == false)
        #expect(NetworkPrefix("2001:db8::1/127")?.description == "2001:db8::/127")
        #expect(NetworkPrefix("0.0.0.0/0")?.contains("203.0.113.9") == true)
        #expect(NetworkPrefix("::/0")?.contains("2001:db8::1") == true)
        #expect(NetworkPrefix("::ffff:10.0.0.1")?.contains("10.0.0.1") == true, "IPv4-mapped is IPv4")
        #expect(NetworkPrefix("10.0.0.0/8")?.contains("::ffff:10.9.9.9") == true)
    }

    @Test(arguments: [
        "", "/", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "pi.local", "10.0.0", "1.2.3.4.5", "10.0.0.0/8/8",
    ])
    func anythingElseIsNot(text: String) {
        #expect(NetworkPrefix(text) == nil, "'\(text)'")
    }

    /// Without an allow list a session may come from this machine, the private ranges and link-local addresses:
    /// documentation's public examples (RFC 5737, RFC 3849) may not; a list given replaces that.
    @Test func theLocalNetworkIsTheDefault() {
        for host in [
            "127.0.0.1", "127.8.9.10", "10.0.0.7", "172.16.0.1", "172.31.255.255", "192.168.178.20", "169.254.3.4",
            "::1", "fd12:3456::1", "fc00::5", "fe80::1",
        ] {
            #expect(NetworkPrefix.allows(host, under: nil), "\(host)")
        }
        for host in ["203.0.113.9", "8.8.8.8", "172.32.0.1", "192.169.0.1", "2001:db8::1", "::2", "fec0::1", "bogus"] {
            #expect(!NetworkPrefix.allows(host, under: nil), "\(host)")
        }
        let list = [NetworkPrefix("203.0.113.0/24")!]
        #expect(NetworkPrefix.allows("203.0.113.9", under: list))
        #expect(!NetworkPrefix.allows("127.0.0.1", under: list), "a list given is the whole list")
    }

    @Test func listenAddressesRead() throws {
        let any = try NetworkMIDISettings.parseListen("5004")
        #expect(any.address == nil && any.port == 5004)
        let four = try NetworkMIDISettings.parseListen("0.0.0.0:5004")
        #expect(four.address == "0.0.0.0" && four.port == 5004)
        let six = try NetworkMIDISettings.parseListen("[::1]:5004")
        #expect(six.address == "::1" && six.port == 5004)
        let bad = [
            "65535", "x", "pi.local:5004", "::1:5004", "[::1]5004", "10.0.0.0/8:5004", "[10.0.0.1]:x", "５００４",
        ]
        for spec in bad {
            #expect(throws: NetworkMIDISettingsError.self, "'\(spec)'") { try NetworkMIDISettings.parseListen(spec) }
        }
    }
}

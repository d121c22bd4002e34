import AulosCore
import Testing

/// `--web`, `--osc` and a rig's `web:`/`osc:` read one way: a port, or an IPv4 address and a port.
struct ListenAddressTests {
    @Test func portsAndAddressesRead() {
        #expect(ListenAddress("8080") == ListenAddress("127.0.0.1:8080"))
        #expect(ListenAddress("localhost:9000")?.description == "127.0.0.1:9000")
        #expect(ListenAddress("0")?.port == 0, "port 0 asks the system for a free one")
        #expect(ListenAddress("0.0.0.0:80")?.isLoopback == false)
        #expect(ListenAddress("127.0.0.2:80")?.isLoopback == true)
        #expect(ListenAddress("192.168.1.20:8080")?.host == "192.168.1.20")
    }

    @Test(arguments: ["", ":", "80800", "-1", "pi.local:80", "1.2.3:80", "1.2.3.4.5:80", "::1:80", "a:b:80", "８０"])
    func anythingElseIsNot(spec: String) {
        #expect(ListenAddress(spec) == nil, "'\(spec)'")
    }
}

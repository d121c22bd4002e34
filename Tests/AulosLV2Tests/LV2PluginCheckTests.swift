import AulosTestSupport
import Testing

@testable import AulosLV2

/// Every way a plugin's ports can make lilv 0.24 build a wrong (or a 32 GB) port array is refused before
/// lilv builds it, with a reason; a plugin with sound ports passes.
@Suite struct LV2PluginCheckTests {
    @Test(arguments: [
        ([LV2TestBundles.port(index: "0"), LV2TestBundles.port(index: "2", input: true)], "lv2:index is 2, not 0…1"),
        (
            [LV2TestBundles.port(index: "0"), LV2TestBundles.port(index: "0", input: true)],
            "two ports have lv2:index 0"
        ),
        ([LV2TestBundles.port(index: "1.5")], "lv2:index \"1.5\" is not an integer"),
        ([LV2TestBundles.port(index: "\"0\"")], "lv2:index \"0\" is not an integer"),
        (["[ a lv2:AudioPort , lv2:OutputPort ; lv2:symbol \"out\" ]"], "a port has no lv2:index"),
        (
            ["[ a lv2:AudioPort , lv2:OutputPort ; lv2:index 0 ; lv2:symbol \"9out\" ]"],
            "port 0 has no valid lv2:symbol"
        ),
        ((0..<4097).map { LV2TestBundles.port(index: "\($0)") }, "it declares 4097 ports (at most 4096)"),
        ([LV2TestBundles.port(index: "0"), LV2TestBundles.port(index: "1", input: true)], nil),
    ])
    func malformedPortsAreRefusedWithAReason(_ ports: [String], _ reason: String?) throws {
        let folder = TestFiles.scratch("lv2-check")
        defer { TestFiles.remove(folder) }
        try LV2TestBundles.write("urn:aulos:check", in: folder + "/check.lv2", ports: ports.joined(separator: " , "))
        switch LV2World(path: folder).lookUp("urn:aulos:check") {
        case .failure(let broken)?:
            #expect(reason.map { broken.reason.contains($0) } ?? false, "\(broken.reason)")
        case .success(let info)?:
            #expect(reason == nil && info.ports.count == 2)
        case nil:
            Issue.record("the plugin was not found")
        }
    }
}

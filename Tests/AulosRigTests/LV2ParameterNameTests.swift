import AulosCore
import AulosLV2
import AulosRig
import Testing

/// Parameter names a rig cannot tell apart (swh Gong's "Inner stiffness 1 +" and "… 1 -" both read
/// "inner-stiffness-1") are listed with their symbols beside them, and a rig naming the shared name is
/// told to use a symbol rather than getting one of them.
@Suite struct LV2ParameterNameTests {
    static let gong = "lv2:http://plugin.org.uk/swh-plugins/gong"

    static func rig(_ parameters: String) throws(RigError) -> Rig {
        try Rig(
            yaml: "name: G\nparts:\n  - instrument: synth\n    effects:\n      - unit: \(gong)\n"
                + "        parameters: {\(parameters)}\n", file: "gong.yaml")
    }

    @Test func namesThatReadAlikeGetTheirSymbols() throws {
        let unit = try #require(try EffectKind(name: Self.gong)?.makeUnit() as? LV2Unit)
        let names = try unit.get(.parameterList, scope: .global).map { try unit.parameterInfo($0).name }
        #expect(names.contains("Inner stiffness 1 + (apa0)") && names.contains("Inner stiffness 1 - (apb0)"))
        #expect(names.contains("Inner damping"), "an unshared label stays as it is")
        #expect(unit.ambiguousLabels.count == 8)
        // By symbol, or by the name as listed (symbol beside the label): the port meant.
        #expect(try Self.rig("apb0: 0.25").parts[0].effects[0].parameters[0].value == 0.25)
        _ = try Self.rig("inner-stiffness-1-apb0: 0.25")
    }

    @Test func theSharedNameIsAnErrorSayingWhatToWrite() {
        do {
            _ = try Self.rig("inner-stiffness-1: 0.25")
            Issue.record("expected an error")
        } catch {
            #expect(
                error.message.hasSuffix(
                    "has 2 parameters called 'inner-stiffness-1': name one by its symbol (apa0 for 'Inner "
                        + "stiffness 1 +', apb0 for 'Inner stiffness 1 -')"), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
    }
}

import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

/// Units and graphs are freed when the last reference goes (no retain cycle through kernels, plans or
/// notifications): a service that swaps rigs for weeks must not keep the old ones.
@Suite struct TeardownTests {
    @Test func unitIsFreed() throws {
        weak var weakUnit: ToneGeneratorUnit?
        do {
            let unit = ToneGeneratorUnit()
            weakUnit = unit
            try unit.initialize()
            try unit.uninitialize()
        }
        #expect(weakUnit == nil, "uninitialized unit")
        weak var weakUnit2: ToneGeneratorUnit?
        do {
            let unit = ToneGeneratorUnit()
            weakUnit2 = unit
            try unit.initialize()
            // Rendering on its own builds the unit's standalone plan (once a retain cycle).
            let buffers = RenderBuffers()
            buffers.prepare(64)
            var flags = RenderActionFlags(rawValue: 0)
            try unit.render(
                flags: &flags, timeStamp: AudioTimeStamp(sampleTime: 0), frameCount: 64, ioData: buffers.list)
        }
        #expect(weakUnit2 == nil, "initialized and rendered unit")
    }

    @Test func graphIsFreed() throws {
        weak var weakGraph: AudioGraph?
        do {
            let graph = AudioGraph(registry: BuiltInUnits.registry())
            weakGraph = graph
            graph.open()
            let out = try graph.addNode(GenericOutputUnit.componentDescription)
            let tone = try graph.addNode(ToneGeneratorUnit.componentDescription)
            try graph.connectNodeInput(tone, sourceOutput: 0, out, destinationInput: 0)
            try graph.initialize()
        }
        #expect(weakGraph == nil, "graph")
    }
}

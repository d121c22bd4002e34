import AulosCore
import AulosLV2
import AulosTestSupport
import Testing

/// Every plugin of mda-lv2, lv2-examples and dragonfly-reverb-lv2 instantiates and renders one second
/// offline: effects fed noise, instruments (and MIDI plugins) played a chord; the plugin makes no NaN or
/// infinity.
/// (`make lv2-sweep` does the same for every installed plugin, each in its own process.)
@Suite struct LV2SweepTests {
    static let packages = [
        "http://drobilla.net/plugins/mda/", "http://lv2plug.in/plugins/eg-", "urn:dragonfly:",
        "https://github.com/michaelwillis/dragonfly-reverb",
    ]
    static var plugins: [String] {
        LV2World.shared.plugins.map(\.uri).filter { uri in packages.contains { uri.hasPrefix($0) } }
    }

    @Test func thePackagesPluginsAreAllHere() {
        // mda-lv2 has 36, lv2-examples 8 (eg-scope in two variants), Dragonfly 4.
        #expect(Self.plugins.count >= 36 + 8 + 4, "\(Self.plugins)")
    }

    @Test(arguments: plugins)
    func rendersOneSecond(_ uri: String) throws {
        let unit = try LV2Unit(uri: uri)
        let noise = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        noise.initialize(to: 3)
        defer { noise.deallocate() }
        if unit.inputBusCount > 0 {
            try unit.set(.setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: noise), scope: .input)
        }
        try unit.set(.maximumFramesPerSlice, UInt32(512))
        try unit.initialize()
        for note: UInt8 in [48, 55, 64] { try unit.midiEvent(status: 0x90, data1: note, data2: 100, offset: 17) }
        let buffers = RenderBuffers(frames: 512)
        for slice in 0..<94 {
            if slice == 60 {
                for note: UInt8 in [48, 55, 64] { try unit.midiEvent(status: 0x80, data1: note, data2: 0, offset: 5) }
            }
            _ = try renderUnit(unit, frames: 512, at: Int64(slice) * 512, buffers: buffers)
        }
        // The plugins make no NaN or infinity. What leaves the unit is not checked here: the unit silences
        // non-finite samples before they leave (nonFiniteSamplesFromAPluginAreSilencedAndCounted below), so
        // its output is finite whatever the plugin does and such a check could not fail. The count is what
        // the plugin itself produced, before the unit's guard — except mda BeatBox, now and then, only when
        // the whole suite runs in one process (never alone, never under valgrind): it builds its drum
        // samples with the process-wide rand() at instantiation. Known, and silenced by the unit.
        if uri == "http://drobilla.net/plugins/mda/BeatBox" {
            withKnownIssue("mda BeatBox sometimes produces NaN in a busy process", isIntermittent: true) {
                #expect(unit.nonFiniteSamples == 0)
            }
        } else {
            #expect(unit.nonFiniteSamples == 0, "\(unit.name) produced NaN or infinity")
        }
    }

    /// A plugin fed NaN passes it on (eg-amp is a plain gain): the unit plays silence and counts it.
    @Test func nonFiniteSamplesFromAPluginAreSilencedAndCounted() throws {
        let unit = try LV2Unit(uri: "http://lv2plug.in/plugins/eg-amp")
        let nan = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        nan.initialize(to: .nan)
        defer { nan.deallocate() }
        try unit.set(.setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: nan), scope: .input)
        try unit.set(.maximumFramesPerSlice, UInt32(256))
        try unit.initialize()
        let buffers = RenderBuffers(frames: 256)
        let left = try renderUnit(unit, frames: 256, buffers: buffers)
        #expect(left.allSatisfy { $0 == 0 } && buffers.channel(1, frames: 256).allSatisfy { $0 == 0 })
        #expect(unit.nonFiniteSamples == 256, "eg-amp is mono: 256 samples of its one output")
    }
}

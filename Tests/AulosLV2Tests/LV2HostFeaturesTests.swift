import AulosCore
import AulosLV2
import AulosTestSupport
import Testing

/// The host features plugins ask for: options and the worker (Dragonfly's reverbs require both), the
/// default state (eg-sampler's sample, loaded at instantiation), and the log.
@Suite struct LV2HostFeaturesTests {
    static let plate = "urn:dragonfly:plate"
    static let sampler = "http://lv2plug.in/plugins/eg-sampler"

    /// Dragonfly Plate, fed one impulse, rings: it found its sample rate and block length in the options
    /// and its worker ran (it requires both).
    @Test func dragonflyPlateRingsAfterAnImpulse() throws {
        let unit = try LV2Unit(uri: Self.plate)
        #expect(unit.inputBusCount == 1)
        let signal = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        signal.initialize(to: 2)  // one impulse at frame 0
        defer { signal.deallocate() }
        try unit.set(.setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: signal), scope: .input)
        try unit.set(.maximumFramesPerSlice, UInt32(256))
        try unit.initialize()
        let buffers = RenderBuffers(frames: 256)
        var output: [Float] = []
        for slice in 0..<200 {
            if slice == 10 {
                for id in try unit.get(.parameterList, scope: .global) {
                    let info = try unit.parameterInfo(id)
                    try unit.setParameter(id, value: (info.minValue + info.maxValue) / 2)
                }
            }
            output += try renderUnit(unit, frames: 256, at: Int64(slice * 256), buffers: buffers)
        }
        #expect(!output.contains { !$0.isFinite })
        // The plate's tail is still sounding half a second after the impulse.
        let late = output[24_000..<25_000].map { $0 * $0 }.reduce(0, +)
        #expect(late > 0, "no reverb tail")
    }

    /// eg-sampler requires state:loadDefaultState: its default state names click.wav, which it loads when
    /// instantiated; a note then plays the sample.
    @Test func egSamplerPlaysItsDefaultSample() throws {
        let unit = try LV2Unit(uri: Self.sampler)
        try unit.set(.maximumFramesPerSlice, UInt32(512))
        try unit.initialize()
        try unit.midiEvent(status: 0x90, data1: 60, data2: 100, offset: 100)
        let buffers = RenderBuffers(frames: 512)
        var output: [Float] = []
        for slice in 0..<8 { output += try renderUnit(unit, frames: 512, at: Int64(slice * 512), buffers: buffers) }
        let first = output.firstIndex { $0 != 0 }
        #expect(first == 100, "the sample starts at \(first.map(String.init) ?? "no frame"), not the note's frame 100")
    }
}

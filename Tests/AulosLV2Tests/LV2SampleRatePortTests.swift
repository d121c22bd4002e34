import AulosCore
import AulosLV2
import AulosTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `lv2:sampleRate` ports (bounds as multiples of the sample rate) are parameters in hertz: swh's Single
/// band parametric at fc 1000 Hz, +12 dB, boosts a 1 kHz sine by about 12 dB and leaves 250 Hz and 4 kHz
/// nearly alone; its range is 0…0.4 × the rate and its default 440 Hz.
@Suite struct LV2SampleRatePortTests {
    static let singlePara = "http://plugin.org.uk/swh-plugins/singlePara"

    /// The plugin's gain in dB for a sine of `frequency` Hz at 48 kHz, fc and gain set as a rig sets them.
    static func gain(at frequency: Float, fc: Float, rate: Double = 48_000) throws -> Double {
        let unit = try LV2Unit(uri: singlePara)
        let sine = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        sine.initialize(to: -frequency)  // signalCallback's sine (at 48 kHz's reckoning)
        defer { sine.deallocate() }
        try unit.set(.setRenderCallback, RenderCallbackStruct(signalCallback(), refCon: sine), scope: .input)
        try unit.set(.sampleRate, rate, scope: .output)
        try unit.set(.maximumFramesPerSlice, UInt32(512))
        try unit.initialize()
        try unit.setParameter(ParameterID(1), value: fc)
        try unit.setParameter(ParameterID(0), value: 12)
        let buffers = RenderBuffers(frames: 512)
        var output: [Float] = []
        for slice in 0..<40 { output += try renderUnit(unit, frames: 512, at: Int64(slice * 512), buffers: buffers) }
        // Steady state: the last half.
        let tail = output.suffix(output.count / 2)
        let rms = (tail.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(tail.count)).squareRoot()
        return 20 * log10(rms / (0.5.squareRoot()))
    }

    @Test func aFrequencyInHertzBoostsThatFrequency() throws {
        let atFc = try Self.gain(at: 1000, fc: 1000)
        let below = try Self.gain(at: 250, fc: 1000)
        let above = try Self.gain(at: 4000, fc: 1000)
        #expect(abs(atFc - 12) < 1, "gain at 1 kHz \(atFc) dB")
        #expect(below < 4 && above < 4, "gain at 250 Hz \(below) dB, at 4 kHz \(above) dB")
    }

    @Test func itsRangeAndDefaultAreInHertzAtTheUnitsRate() throws {
        let unit = try LV2Unit(uri: Self.singlePara)
        var fc = try unit.parameterInfo(ParameterID(1))
        #expect(fc.unit == .hertz && fc.minValue == 0 && abs(fc.maxValue - 19_200) < 0.01 && fc.defaultValue == 440)
        // At 44.1 kHz the range follows; a value stays in hertz (clamped to the new range).
        try unit.setParameter(fc.id, value: 4800)
        try unit.setParameter(fc.id, value: 19_000)
        try unit.set(.sampleRate, 44_100.0, scope: .output)
        fc = try unit.parameterInfo(ParameterID(1))
        #expect(abs(fc.maxValue - 17_640) < 0.01)
        #expect(abs(try unit.getParameter(fc.id) - 17_640) < 0.01)
    }

    /// A saved state holds hertz, as the plugin does, and reads back the same (1200 Hz is beyond the raw 0.4
    /// bound, which a state restore used to clamp it to).
    @Test func aStateHoldsHertzAndReadsThemBack() throws {
        let unit = try LV2Unit(uri: Self.singlePara)
        try unit.initialize()
        try unit.setParameter(ParameterID(1), value: 1200)
        let state = try unit.lv2State()
        #expect(state.contains("1200"), "\(state)")
        let other = try LV2Unit(uri: Self.singlePara)
        try other.restoreLV2State(state)
        #expect(abs(try other.getParameter(ParameterID(1)) - 1200) < 0.01)
    }
}

import AulosCore
import AulosMIDI
import AulosRig
import AulosTestSupport
import Testing

@testable import AulosPlayback

/// MIDI-learn with a MIDI 2.0 controller, end to end on the live path: the learned parameter takes the 32-bit
/// value, not its top 7 bits, when the render thread routes it.
@Suite struct LiveMIDI2LearnTests {
    @Test func aLearnedParameterTakesAllThirtyTwoBits() throws {
        let (playback, _, path) = try LiveMIDIPathTests.livePath()
        defer { playback.close() }
        let target = try playback.target("Lead.resonance")
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        path.learn(target)
        func move(to wide: UInt32) throws -> Float {
            let message = ChannelMessage(midi2: 0xB3, data1: 30, data2: UInt8(wide >> 25), wide: wide)
            path.receive(message, from: .network(1), arrivalNanos: 0)
            for _ in 0..<4 { harness.renderSlice(256) }
            return try target.current()
        }
        let (low, high) = (Double(target.range.lowerBound), Double(target.range.upperBound))
        func expected(_ wide: UInt32) -> Float { Float(low + (high - low) * MIDI2Scale.controller(wide) / 127) }
        func step(_ value: Int) -> Float { Float(low + (high - low) * Double(value) / 127) }
        // Learned by the first, which moves the parameter at once; the second has the same top 7 bits (80).
        let first = try move(to: 0xA000_0000)
        let second = try move(to: 0xA0FF_FFFF)
        print("learned resonance: 0xA000_0000 → \(first), 0xA0FF_FFFF → \(second); 7-bit 80 → \(step(80))")
        #expect(abs(first - expected(0xA000_0000)) <= 1e-6)
        #expect(abs(second - expected(0xA0FF_FFFF)) <= 1e-6)
        #expect(second > step(80) && second < step(81))
        #expect(path.router?.learnedMappings.count == 1)
    }
}

import AulosCore
import AulosLV2
import AulosTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A plugin with more than 128 presets (ZynAddSubFX: 1,150) is reached by bank select: CC 0 × 128 + CC 32
/// picks the bank, the program change the preset in it. ZynAddSubFX is slow to make (about a second), so
/// one unit plays both presets.
@Suite struct LV2BankSelectTests {
    static let zyn = "http://zynaddsubfx.sourceforge.net"

    /// Program 5, then bank 1 (CC 32 = 1) and program 5 again: presets 5 and 133, which sound different.
    @Test func bankSelectReachesAPresetPast127() throws {
        let unit = try LV2Unit(uri: Self.zyn)
        #expect(unit.factoryPresets.count == 1150)
        // Zyn's default program has an empty label: it is named by its URI.
        #expect(unit.factoryPresets.contains { $0.name == "preset001" })
        try unit.set(.maximumFramesPerSlice, UInt32(1024))
        try unit.initialize()
        let buffers = RenderBuffers(frames: 1024)
        var time: Int64 = 0
        func play(_ messages: [(UInt8, UInt8, UInt8)]) throws -> [Float] {
            for (status, data1, data2) in messages { try unit.midiEvent(status: status, data1: data1, data2: data2) }
            _ = try renderUnit(unit, frames: 1024, at: time, buffers: buffers)
            time += 1024
            // The program change went up from the render thread: the preset is applied here, before the note.
            unit.applyProgramRequests()
            try unit.midiEvent(status: 0x90, data1: 60, data2: 100)
            var output: [Float] = []
            for _ in 0..<12 {
                output += try renderUnit(unit, frames: 1024, at: time, buffers: buffers)
                time += 1024
            }
            try unit.midiEvent(status: 0x80, data1: 60, data2: 0)
            for _ in 0..<24 { _ = try renderUnit(unit, frames: 1024, at: time, buffers: buffers) }
            time += 24 * 1024
            return output
        }
        let first = try play([(0xC0, 5, 0)])
        #expect(unit.currentPreset?.number == 5)
        let second = try play([(0xB0, 0, 0), (0xB0, 32, 1), (0xC0, 5, 0)])
        #expect(unit.currentPreset?.number == 133, "\(String(describing: unit.currentPreset))")
        #expect(unit.currentPreset?.name == unit.factoryPresets[133].name)
        // Zyn's voices start at random phases, so two notes of one preset differ sample by sample: the sound
        // is compared by its brightness, zero crossings per second: 10,906 for preset 5 (an arpeggio, whose
        // level also varies from note to note), 1,391 for preset 133 (Collection: Beyond).
        let energy = { (samples: [Float]) in samples.reduce(0.0) { $0 + Double($1) * Double($1) } }
        let crossings = { (samples: [Float]) in
            Double(zip(samples, samples.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count) * 48_000
                / Double(samples.count)
        }
        let brightness = crossings(second) / crossings(first)
        #expect(energy(first) > 0 && energy(second) > 0)
        #expect(abs(log2(brightness)) > 1, "zero crossings \(crossings(first)) → \(crossings(second))")
    }
}

import AulosCore
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Foundation
import Testing

/// A refactoring guard for the synth kernel, off by default: with `AULOS_SYNTH_DIGESTS=FILE` it renders the
/// sixteen-channel score and every factory preset playing a few notes (on the base channel and on a channel
/// patch of its own, poly chords wide enough for the SIMD lanes, bends, pressure, the mod wheel, sustain) and
/// writes one digest of the exact output bits per render to FILE. Render it before a refactor, render it
/// after, and `diff` the two files: a refactor of the kernel keeps every line. (Golden audio in the suite is
/// compared with a tolerance; this is only for changes that must not change a single bit.) With
/// `AULOS_SYNTH_DUMP=DIR` as well, each render's samples are written to DIR (left then right, 32-bit floats,
/// one file per line of the digests), so a change that is meant to move the sound can be measured by
/// how far: `scripts/compare-renders.py BEFORE AFTER`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["AULOS_SYNTH_DIGESTS"] != nil))
struct SynthBitIdentityTests {
    let synth = OscillatorSynthUnit.componentDescription

    /// FNV-1a over the bit patterns of both channels.
    func digest(_ left: [Float], _ right: [Float]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for sample in left + right {
            var bits = sample.bitPattern
            for _ in 0..<4 {
                hash = (hash ^ UInt64(bits & 0xFF)) &* 0x100_0000_01b3
                bits >>= 8
            }
        }
        return String(hash, radix: 16)
    }

    func rig(slice: UInt32) throws -> InstrumentRig {
        let registry = BuiltInUnits.registry()
        let loaded = try SynthPresetLibrary.load(from: TestFiles.presets + "/synth")
        registry.register(Component(synth, name: "Aulos: Oscillator Synth") { OscillatorSynthUnit(presets: loaded) })
        return try InstrumentRig(synth, maximumFrames: slice, registry: registry)
    }

    /// The sixteen-channel score of `SynthMultitimbralTests.sixteenChannelsAreSliceIndependent`.
    func sixteenChannels() -> [ScheduledMessage] {
        var messages: [ScheduledMessage] = []
        for channel in 0..<16 {
            let at = Int64(channel * 700)
            let c = UInt8(channel)
            messages.append(.init(sampleTime: at, message: .programChange(channel: c, program: c * 8 + 1)))
            let note = UInt8(channel == 9 ? 36 + channel % 12 : 48 + channel)
            messages.append(.init(sampleTime: at + 3, message: .noteOn(channel: c, note: note, velocity: 90)))
            messages.append(.init(sampleTime: at + 9000, message: .noteOff(channel: c, note: note, velocity: 0)))
            messages.append(
                .init(sampleTime: at + 4000, message: .controlChange(channel: c, controller: 10, value: c * 8)))
            messages.append(.init(sampleTime: at + 5000, message: .pitchBend(channel: c, value: 9000)))
        }
        for (index, key) in [36, 38, 42, 46, 42, 49, 51, 56, 39, 37].enumerated() {
            messages.append(
                .init(
                    sampleTime: Int64(index * 2345 + 11), message: .noteOn(channel: 9, note: UInt8(key), velocity: 110))
            )
        }
        return messages.sorted { $0.sampleTime < $1.sampleTime }
    }

    /// One preset on the base channel (a five-note chord: four SIMD lanes and one voice alone) and on
    /// channel 3 as its own patch (two notes), with the wheel, bend, pressure, sustain and releases.
    func presetScore(program: UInt8, bank: UInt8) -> [ScheduledMessage] {
        var messages: [ScheduledMessage] = []
        for channel: UInt8 in [0, 3] {
            messages.append(.init(sampleTime: 0, message: .controlChange(channel: channel, controller: 0, value: bank)))
            messages.append(.init(sampleTime: 0, message: .programChange(channel: channel, program: program)))
        }
        for (index, note) in [48, 55, 60, 64, 67].enumerated() {
            let at = Int64(index * 37 + 5)
            messages.append(
                .init(sampleTime: at, message: .noteOn(channel: 0, note: UInt8(note), velocity: UInt8(60 + index * 12)))
            )
            messages.append(
                .init(sampleTime: at + 14_000, message: .noteOff(channel: 0, note: UInt8(note), velocity: 40)))
        }
        for (index, note) in [72, 76].enumerated() {
            let at = Int64(3000 + index * 1111)
            messages.append(.init(sampleTime: at, message: .noteOn(channel: 3, note: UInt8(note), velocity: 100)))
        }
        messages.append(.init(sampleTime: 2000, message: .controlChange(channel: 0, controller: 1, value: 90)))
        messages.append(.init(sampleTime: 4000, message: .pitchBend(channel: 0, value: 10_000)))
        messages.append(.init(sampleTime: 5000, message: .channelPressure(channel: 3, pressure: 100)))
        messages.append(.init(sampleTime: 5500, message: .polyPressure(channel: 0, note: 60, pressure: 80)))
        messages.append(.init(sampleTime: 6000, message: .controlChange(channel: 3, controller: 64, value: 127)))
        messages.append(.init(sampleTime: 7000, message: .noteOff(channel: 3, note: 72, velocity: 64)))
        messages.append(.init(sampleTime: 9000, message: .controlChange(channel: 3, controller: 64, value: 0)))
        messages.append(.init(sampleTime: 9500, message: .controlChange(channel: 3, controller: 74, value: 20)))
        messages.append(.init(sampleTime: 15_000, message: .noteOff(channel: 3, note: 76, velocity: 64)))
        return messages.sorted { $0.sampleTime < $1.sampleTime }
    }

    /// With `AULOS_SYNTH_DUMP`, the render's samples into that folder as `name.f32`.
    func dump(_ name: String, _ left: [Float], _ right: [Float]) throws {
        guard let folder = ProcessInfo.processInfo.environment["AULOS_SYNTH_DUMP"] else { return }
        let samples = left + right
        let data = samples.withUnsafeBufferPointer { Data(buffer: $0) }
        try data.write(to: URL(fileURLWithPath: folder).appendingPathComponent(name + ".f32"))
    }

    @Test func digestsOfEveryScore() throws {
        var lines: [String] = []
        for slice in [64, 4096] {
            let rig = try rig(slice: UInt32(slice))
            rig.schedule(sixteenChannels())
            let (left, right) = rig.render(30_000, slice: slice)
            lines.append("sixteen-channels slice \(slice) \(digest(left, right))")
            try dump("sixteen-channels-\(slice)", left, right)
        }
        let presets = try SynthPresetLibrary.load(from: TestFiles.presets + "/synth")
        for preset in presets {
            let rig = try rig(slice: 256)
            rig.schedule(presetScore(program: UInt8(preset.program), bank: UInt8(preset.bank)))
            let (left, right) = rig.render(20_000, slice: 256)
            lines.append("preset \(preset.number) \(preset.name) \(digest(left, right))")
            try dump("preset-\(preset.number)", left, right)
        }
        let path = ProcessInfo.processInfo.environment["AULOS_SYNTH_DIGESTS"]!
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }
}

import AulosCore
import AulosMIDI
import AulosPlayback
import AulosRig
import AulosTestSupport
import Foundation
import Testing

/// `aulos render song.mid` against `fluidsynth -F` on the same General MIDI file and the same SoundFont, in
/// one run: the reverb's wet/dry energy at CC 91 = 127 and 40, the chorus's at CC 93 = 127, and the
/// reverb tail's decay. Wet is (render with effects) − (render without): FluidSynth's effects add to its
/// dry output, and Aulos's returns add to the mix, so the difference is the effect alone. Float output on
/// both sides (FluidSynth's 16-bit output adds a −1 LSB offset and a noise floor).
@Suite(.serialized) struct GeneralMIDIEffectsTests {
    static let font = SearchPaths.soundFont ?? "soundfonts/AulosGM.sf2"

    /// A Standard MIDI File, 480 ticks a quarter note at 120 BPM, from (tick, channel message bytes) events.
    static func midiFile(_ events: [(tick: Int, bytes: [UInt8])]) -> [UInt8] {
        let messages = events.map { tick, bytes -> (tick: Int, event: StandardMIDIFile.Event) in
            let channel = bytes[0] & 0x0F
            let message: MIDIMessage =
                switch bytes[0] & 0xF0 {
                case 0x90: .noteOn(channel: channel, note: bytes[1], velocity: bytes[2])
                case 0x80: .noteOff(channel: channel, note: bytes[1], velocity: bytes[2])
                case 0xC0: .programChange(channel: channel, program: bytes[1])
                default: .controlChange(channel: channel, controller: bytes[1], value: bytes[2])
                }
            return (tick, .midi(message))
        }
        return StandardMIDIFile.encode(tracks: [messages], ticksPerQuarterNote: 480)
    }

    /// Piano chords (channel 1), a string pad (2) and a bass (3) for four seconds, then two of silence;
    /// every channel's CC 91 and CC 93 set at the start (FluidSynth starts CC 91 at 0, GM at 40).
    static func song(reverb: UInt8, chorus: UInt8) -> [UInt8] {
        var events: [(tick: Int, bytes: [UInt8])] = []
        for (channel, program) in [(UInt8(0), UInt8(0)), (1, 48), (2, 32)] {
            events += [
                (0, [0xB0 | channel, 91, reverb]), (0, [0xB0 | channel, 93, chorus]), (0, [0xC0 | channel, program]),
            ]
        }
        let chords: [[UInt8]] = [[60, 64, 67], [57, 60, 64], [53, 57, 60], [55, 59, 62]]
        for beat in 0..<8 {
            for note in chords[beat % 4] {
                events += [(480 * beat + 10, [0x90, note, 100]), (480 * beat + 300, [0x80, note, 0])]
            }
            let bass = chords[beat % 4][0] - 24
            events += [(480 * beat + 10, [0x92, bass, 100]), (480 * beat + 400, [0x82, bass, 0])]
        }
        for note: UInt8 in [72, 76, 79] { events += [(10, [0x91, note, 80]), (480 * 8, [0x81, note, 0])] }
        events.append((480 * 12, [0xB0, 7, 100]))
        return midiFile(events)
    }

    /// One short woodblock note with CC 91 = 127, then silence: the reverb's tail.
    static let impulse = midiFile([
        (0, [0xB0, 91, 127]), (0, [0xB0, 93, 0]), (0, [0xC0, 115]), (240, [0x90, 60, 127]), (270, [0x80, 60, 0]),
        (480 * 10, [0xB0, 7, 100]),
    ])

    /// `fluidsynth -F` with its reverb and chorus on or off; nil when FluidSynth's program is missing.
    static func fluidSynth(_ midi: String, reverb: Bool, chorus: Bool) throws -> [[Float]]? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/fluidsynth") else { return nil }
        let output = TestFiles.scratch("fluidsynth.wav")
        defer { TestFiles.remove(output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/fluidsynth")
        process.arguments = [
            "-ni", "-q", "-F", output, "-O", "float", "-r", "48000", "-R", reverb ? "1" : "0", "-C", chorus ? "1" : "0",
            font, midi,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return FloatWAV.read(output)
    }

    static func aulos(_ midi: String, dry: Bool) throws -> [[Float]] {
        var options = PlaybackOptions()
        options.input = midi
        options.instrument = .sampler
        options.dry = dry
        options.tail = 3
        let output = TestFiles.scratch("aulos.wav")
        defer { TestFiles.remove(output) }
        _ = try FileRender.run(options, to: RenderOutput(path: output, sample: .float32))
        return try #require(FloatWAV.read(output))
    }

    /// (wet, dry): the effect alone and the dry render, as stereo pairs cut to the same length.
    static func wetAndDry(_ wet: [[Float]], _ dry: [[Float]]) -> (wet: [[Float]], dry: [[Float]]) {
        let count = min(wet[0].count, dry[0].count)
        let difference = (0..<2).map { channel in (0..<count).map { wet[channel][$0] - dry[channel][$0] } }
        return (difference, dry.map { Array($0.prefix(count)) })
    }

    static func energy(_ signal: [[Float]]) -> Double {
        signal.reduce(0) { sum, channel in channel.reduce(sum) { $0 + Double($1) * Double($1) } }
    }

    static func decibels(_ ratio: Double) -> Double { 10 * log10(ratio) }

    /// The wet tail from its first sample above 1 % of its peak, both channels' energy summed.
    static func tail(_ wet: [[Float]]) -> [Float] {
        let envelope = zip(wet[0], wet[1]).map { max(abs($0), abs($1)) }
        let peak = envelope.max() ?? 0
        let start = envelope.firstIndex { $0 > peak * 0.01 } ?? 0
        return (start..<wet[0].count).map { index in
            let energy = Double(wet[0][index]) * Double(wet[0][index]) + Double(wet[1][index]) * Double(wet[1][index])
            return Float(energy.squareRoot())
        }
    }

    @Test func theDefaultReverbAndChorusMatchFluidSynthsOnAGMFile() throws {
        let folder = TestFiles.scratch("gm-effects")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { TestFiles.remove(folder) }
        var lines: [String] = []
        // Wet/dry energy: reverb at CC 91 = 127 and 40, chorus at CC 93 = 127.
        for (name, reverb, chorus) in [
            ("reverb-127", UInt8(127), UInt8(0)), ("reverb-40", 40, 0), ("chorus-127", 0, 127),
        ] {
            let path = folder + "/\(name).mid"
            TestFiles.write(Self.song(reverb: reverb, chorus: chorus), to: path)
            guard let fluidOn = try Self.fluidSynth(path, reverb: reverb > 0, chorus: chorus > 0),
                let fluidOff = try Self.fluidSynth(path, reverb: false, chorus: false)
            else {
                Issue.record("fluidsynth is not installed: scripts/setup.sh installs it")
                return
            }
            let fluid = Self.wetAndDry(fluidOn, fluidOff)
            let ours = Self.wetAndDry(try Self.aulos(path, dry: false), try Self.aulos(path, dry: true))
            let fluidRatio = Self.decibels(Self.energy(fluid.wet) / Self.energy(fluid.dry))
            let ourRatio = Self.decibels(Self.energy(ours.wet) / Self.energy(ours.dry))
            lines.append(
                "\(name): wet/dry energy FluidSynth \(fluidRatio.formatted(decimals: 2)) dB, Aulos "
                    + "\(ourRatio.formatted(decimals: 2)) dB")
            #expect(abs(ourRatio - fluidRatio) < 1, "\(name): \(ourRatio) dB against FluidSynth's \(fluidRatio) dB")
        }
        // The reverb's tail after one short note.
        let path = folder + "/impulse.mid"
        TestFiles.write(Self.impulse, to: path)
        let fluid = Self.wetAndDry(
            try #require(try Self.fluidSynth(path, reverb: true, chorus: false)),
            try #require(try Self.fluidSynth(path, reverb: false, chorus: false)))
        let ours = Self.wetAndDry(try Self.aulos(path, dry: false), try Self.aulos(path, dry: true))
        let (fluidTail, ourTail) = (Self.tail(fluid.wet), Self.tail(ours.wet))
        let fluidT30 = reverberationTime(fluidTail)
        let ourT30 = reverberationTime(ourTail)
        let fluidLate = reverberationTime(fluidTail, from: -25, to: -55)
        let ourLate = reverberationTime(ourTail, from: -25, to: -55)
        let fluidEDT = reverberationTime(fluidTail, from: 0, to: -10)
        let ourEDT = reverberationTime(ourTail, from: 0, to: -10)
        lines.append(
            "tail: T30 FluidSynth \(fluidT30.formatted(decimals: 3)) s, Aulos \(ourT30.formatted(decimals: 3)) s; "
                + "late decay (−25…−55 dB) \(fluidLate.formatted(decimals: 3)) s, "
                + "\(ourLate.formatted(decimals: 3)) s; "
                + "EDT \(fluidEDT.formatted(decimals: 3)) s, \(ourEDT.formatted(decimals: 3)) s")
        print("GM effects beside fluidsynth -F (\(Self.font)):\n  " + lines.joined(separator: "\n  "))
        // The tail a listener hears as the room's length: within 15 % of FluidSynth's.
        #expect(abs(ourLate / fluidLate - 1) < 0.15, "late decay \(ourLate) s against FluidSynth's \(fluidLate) s")
        #expect(abs(ourT30 / fluidT30 - 1) < 0.35, "T30 \(ourT30) s against FluidSynth's \(fluidT30) s")
    }

    /// Issue 30: the sampler's default gain is FluidSynth's own (0.2), so a General MIDI file renders as loud
    /// as `fluidsynth -F` on the same font — effects off on both, sample for sample (at 0.6 it was 9.54 dB
    /// louder and real songs clipped).
    @Test func theSamplerRendersAtFluidSynthsLevel() throws {
        let path = TestFiles.scratch("level.mid")
        TestFiles.write(Self.song(reverb: 0, chorus: 0), to: path)
        defer { TestFiles.remove(path) }
        guard let fluid = try Self.fluidSynth(path, reverb: false, chorus: false) else {
            Issue.record("fluidsynth is not installed: scripts/setup.sh installs it")
            return
        }
        let ours = try Self.aulos(path, dry: true)
        let count = min(fluid[0].count, ours[0].count)
        let (a, b) = ((0..<2).map { Array(fluid[$0].prefix(count)) }, (0..<2).map { Array(ours[$0].prefix(count)) })
        let level = Self.decibels(Self.energy(b) / Self.energy(a))
        // (Not sample for sample: fluidsynth -F starts notes on its 64-frame blocks, Aulos on their frames;
        // FluidSamplerTests compares the unit with bare libfluidsynth sample for sample.)
        let peaks = (a.map { $0.map(abs).max() ?? 0 }.max() ?? 0, b.map { $0.map(abs).max() ?? 0 }.max() ?? 0)
        let peakRatio = 20 * log10(Double(peaks.1) / Double(peaks.0))
        print(
            "sampler beside fluidsynth -F, effects off: level \(level.formatted(decimals: 3)) dB, "
                + "peak \(peakRatio.formatted(decimals: 3)) dB")
        #expect(abs(level) < 0.05, "the sampler is \(level) dB from FluidSynth")
        #expect(abs(peakRatio) < 0.1, "the sampler's peak is \(peakRatio) dB from FluidSynth's")
    }

    @Test func aChannelWithNoSendsRendersLikeDry() throws {
        let path = TestFiles.scratch("no-sends.mid")
        TestFiles.write(Self.song(reverb: 0, chorus: 0), to: path)
        defer { TestFiles.remove(path) }
        let sent = try Self.aulos(path, dry: false)
        let dry = try Self.aulos(path, dry: true)
        #expect(sent[0].count == dry[0].count)
        var largest: Float = 0
        for channel in 0..<2 {
            for (a, b) in zip(sent[channel], dry[channel]) { largest = max(largest, abs(a - b)) }
        }
        // The same notes summed channel by channel instead of voice by voice: rounding, nothing audible.
        #expect(largest < 1e-6, "largest difference \(largest)")
        #expect(Self.energy(dry) > 1)
    }
}

extension Double {
    fileprivate func formatted(decimals: Int) -> String { String(format: "%.\(decimals)f", self) }
}

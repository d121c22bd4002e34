import AulosCore
import AulosDSP
import AulosMIDI
import AulosPlayback
import AulosRig
import AulosTestSupport
import Foundation
import Testing

/// MIDI Tuning Standard messages in a file reach the synth at their frame: a key change alters what the
/// key plays, a change to "no change" (7F 7F 7F) leaves the file as it was.
@Suite struct TuningStandardRenderTests {
    /// A real-time single-note change of key 60 to (`semitone`, `msb`, `lsb`), then key 60 struck.
    static func file(change: (UInt8, UInt8, UInt8)?) -> [UInt8] {
        var events: [(tick: Int, event: StandardMIDIFile.Event)] = []
        if let (semitone, msb, lsb) = change {
            events.append((0, .midi(.systemExclusive([0x7F, 0x7F, 0x08, 0x02, 0x00, 0x01, 60, semitone, msb, lsb]))))
        }
        events += [
            (10, .midi(.noteOn(channel: 0, note: 60, velocity: 100))),
            (960, .midi(.noteOff(channel: 0, note: 60, velocity: 0))),
        ]
        return StandardMIDIFile.encode(tracks: [events], ticksPerQuarterNote: 480)
    }

    static func render(_ bytes: [UInt8], instrument: InstrumentChoice = .synth) throws -> [Float] {
        var options = PlaybackOptions()
        options.instrument = instrument
        options.dry = true
        options.tail = 0.5
        return try renderedSamples(bytes, named: "mts.mid", options)
    }

    @Test func aFilesTuningMessageRetunesTheSynth() throws {
        let plain = try Self.render(Self.file(change: nil))
        #expect(plain.contains { $0 != 0 })
        #expect(try Self.render(Self.file(change: (60, 0x20, 0))) != plain, "a quarter tone up")
        #expect(try Self.render(Self.file(change: (60, 0, 0))) == plain, "to where it is already")
        #expect(try Self.render(Self.file(change: (0x7F, 0x7F, 0x7F))) == plain, "no change")
    }

    /// The strongest partial of the left channel of interleaved stereo `samples` (65,536 frames from
    /// 0.1 s, Blackman–Harris window, parabolic interpolation on log magnitudes), in Hz.
    static func strongestPartial(_ samples: [Float]) -> Double {
        let n = 65_536
        var real = (0..<n).map { i -> Double in
            let x = 2 * Double.pi * Double(i) / Double(n)
            let w = 0.35875 - 0.48829 * cos(x) + 0.14128 * cos(2 * x) - 0.01168 * cos(3 * x)
            return Double(samples[2 * (4800 + i)]) * w
        }
        var imaginary = [Double](repeating: 0, count: n)
        FFT.forward(real: &real, imaginary: &imaginary)
        let magnitude = (0..<(n / 2)).map { (real[$0] * real[$0] + imaginary[$0] * imaginary[$0]).squareRoot() }
        let peak = (2..<(n / 2 - 1)).max { magnitude[$0] < magnitude[$1] }!
        let (a, b, c) = (log(magnitude[peak - 1]), log(magnitude[peak]), log(magnitude[peak + 1]))
        return (Double(peak) + 0.5 * (a - c) / (a - 2 * b + c)) * 48_000 / Double(n)
    }

    /// The sampler takes the same message (its instance retuned at the slice where the message falls, before
    /// the note): key 60 a quarter tone up sounds 25 cents higher.
    @Test func aFilesTuningMessageRetunesTheSampler() throws {
        let plain = try Self.render(Self.file(change: nil), instrument: .sampler)
        let tuned = try Self.render(Self.file(change: (60, 0x20, 0)), instrument: .sampler)
        let cents = 1200 * log2(Self.strongestPartial(tuned) / Self.strongestPartial(plain))
        print("measured: sampler, key 60 retuned +25 cents by MTS: \(cents) cents")
        #expect(abs(cents - 25) < 0.1, "\(cents) cents")
    }

    /// Energy of the left channel of interleaved `samples` from `start` (frames) in 12 octave bands from
    /// 40 Hz, summed to 1.
    static func bands(_ samples: [Float], from start: Int) -> [Double] {
        let n = 16_384
        var real = (0..<n).map { Double(samples[2 * (start + $0)]) }
        var imaginary = [Double](repeating: 0, count: n)
        FFT.forward(real: &real, imaginary: &imaginary)
        let power = (0..<(n / 2)).map { real[$0] * real[$0] + imaginary[$0] * imaginary[$0] }
        let binWidth = 48_000.0 / Double(n)
        let energy = (0..<9).map { band -> Double in
            let low = 40 * pow(2, Double(band))
            return (Int(low / binWidth)..<min(n / 2, Int(2 * low / binWidth))).map { power[$0] }.reduce(0, +)
        }
        return energy.map { $0 / energy.reduce(0, +) }
    }

    /// A tuning message in the middle of a song swaps the sampler's instance, and the new one keeps the
    /// channel's program: a later note sounds like the organ it was, not the default piano.
    @Test func aSamplerRetunedMidSongKeepsItsProgram() throws {
        func song(organ: Bool, tuning: Bool) -> [UInt8] {
            var events: [(tick: Int, event: StandardMIDIFile.Event)] = []
            if organ { events.append((0, .midi(.programChange(channel: 0, program: 16)))) }
            events += [
                (10, .midi(.noteOn(channel: 0, note: 60, velocity: 100))),
                (480, .midi(.noteOff(channel: 0, note: 60, velocity: 0))),
            ]
            if tuning {
                events.append((960, .midi(.systemExclusive([0x7F, 0x7F, 0x08, 0x02, 0x00, 0x01, 64, 64, 0x20, 0]))))
            }
            events += [
                (1000, .midi(.noteOn(channel: 0, note: 60, velocity: 100))),
                (1900, .midi(.noteOff(channel: 0, note: 60, velocity: 0))),
            ]
            return StandardMIDIFile.encode(tracks: [events], ticksPerQuarterNote: 480)
        }
        // The second note starts at tick 1000: 1000/960 s at 120 BPM, frame 50,000.
        let retuned = Self.bands(try Self.render(song(organ: true, tuning: true), instrument: .sampler), from: 52_000)
        let organ = Self.bands(try Self.render(song(organ: true, tuning: false), instrument: .sampler), from: 52_000)
        let piano = Self.bands(try Self.render(song(organ: false, tuning: false), instrument: .sampler), from: 52_000)
        func distance(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).map { abs($0 - $1) }.reduce(0, +) }
        #expect(distance(organ, piano) > 0.2, "the two programs differ: \(distance(organ, piano))")
        #expect(distance(retuned, organ) < distance(organ, piano) / 10, "\(distance(retuned, organ))")
    }
}

import AulosCore
import AulosFluid
import AulosMIDI
import AulosSoundFont
import AulosTestSupport
import AulosUnits
import Foundation
import Testing

/// The bundled font as a musician meets it: played through the real FluidSynth sampler unit (reverb and chorus
/// off), every program and drum key must sound, drums must differ from their neighbours, GM's choke groups must
/// choke, struck and plucked notes must die away while held and sustained ones must hold; and read as a file,
/// no loop may click.
@Suite(.serialized) struct BundledFontSoundTests {
    static let rate = 48_000

    /// A sampler on the bundled font, played by one scheduled message list at a time.
    final class Player {
        let rig: InstrumentRig

        init() throws {
            let registry = BuiltInUnits.registry()
            registry.register(
                Component(FluidSynthSamplerUnit.componentDescription, name: "Aulos: FluidSynth Sampler") {
                    FluidSynthSamplerUnit()
                })
            rig = try InstrumentRig(FluidSynthSamplerUnit.componentDescription, maximumFrames: 4096, registry: registry)
            { unit in
                let sampler = unit as! FluidSynthSamplerUnit
                try sampler.loadSoundFont(TestFiles.bundledFont)
                try sampler.setParameter(FluidSynthSamplerUnit.Parameter.reverbEnabled.id, value: 0)
                try sampler.setParameter(FluidSynthSamplerUnit.Parameter.chorusEnabled.id, value: 0)
            }
        }

        /// Plays `events` (seconds from now, status, data1, data2) and returns `seconds` of the left+right mix,
        /// then sends all-notes-off / all-sound-off and renders silence so the next phrase starts clean.
        func play(_ events: [(Double, UInt8, UInt8, UInt8)], seconds: Double) -> [Float] {
            let start = rig.time
            for (time, status, data1, data2) in events {
                let message = ChannelMessage(status: status, data1: data1, data2: data2).message
                #expect(rig.scheduler.schedule(message, at: start + Int64(time * Double(rate))))
            }
            let (left, right) = rig.render(Int(seconds * Double(rate)), slice: 4096)
            for channel: UInt8 in 0..<16 {
                let reset = ChannelMessage(status: 0xB0 | channel, data1: 120, data2: 0).message
                _ = rig.scheduler.schedule(reset, at: rig.time)
                let pedal = ChannelMessage(status: 0xB0 | channel, data1: 64, data2: 0).message
                _ = rig.scheduler.schedule(pedal, at: rig.time)
            }
            _ = rig.render(4096, slice: 4096)
            return zip(left, right).map { 0.5 * ($0 + $1) }
        }
    }

    /// RMS in dBFS of `signal[from..<to]` (seconds).
    static func level(_ signal: [Float], from: Double, to: Double) -> Double {
        let range = max(0, Int(from * Double(rate)))..<min(signal.count, Int(to * Double(rate)))
        var sum = 0.0
        for n in range { sum += Double(signal[n]) * Double(signal[n]) }
        return 10 * log10(max(1e-20, sum / Double(max(1, range.count))))
    }

    @Test func everyProgramSoundsWithoutClipping() throws {
        let player = try Player()
        for program in UInt8(0)...127 {
            let note: UInt8 = (32...39).contains(program) ? 40 : 60
            let signal = player.play(
                [(0, 0xC0, program, 0), (0.01, 0x90, note, 127), (1.0, 0x80, note, 0)], seconds: 1.2)
            let peak = signal.map { abs($0) }.max() ?? 0
            #expect(signal.allSatisfy { $0.isFinite }, "program \(program)")
            #expect(Self.level(signal, from: 0, to: 1.2) > -50, "program \(program) is silent")
            #expect(peak < 0.99, "program \(program) reaches full scale: peak \(peak)")
        }
    }

    /// A drum's fingerprint: its energy in half-octave bands from 63 Hz to 13 kHz (relative to its total,
    /// dB) and its envelope (level in six successive 0.1 s windows, dB): two sounds that differ in colour or
    /// in decay differ here.
    static func fingerprint(_ signal: [Float]) -> [Double] {
        var features: [Double] = []
        let total = level(signal, from: 0, to: 0.6)
        for band in 0..<16 {
            // An RBJ band-pass, half an octave wide.
            let centre = 63 * pow(2, Double(band) / 2)
            let w = 2 * Double.pi * centre / Double(rate)
            let alpha = sin(w) * sinh(log(2) / 2 * 0.5 * w / sin(w))
            let a0 = 1 + alpha
            let (b0, b2, a1, a2) = (alpha / a0, -alpha / a0, -2 * cos(w) / a0, (1 - alpha) / a0)
            var (x1, x2, y1, y2, sum) = (0.0, 0.0, 0.0, 0.0, 0.0)
            for sample in signal {
                let x = Double(sample)
                let y = b0 * x + b2 * x2 - a1 * y1 - a2 * y2
                (x2, x1, y2, y1) = (x1, x, y1, y)
                sum += y * y
            }
            features.append(10 * log10(max(1e-20, sum / Double(signal.count))) - total)
        }
        for window in 0..<6 {
            features.append(level(signal, from: Double(window) * 0.1, to: Double(window + 1) * 0.1) - total)
        }
        return features.map { max($0, -60) }
    }

    /// The dominant pitch of a hit in semitones (12·log2 of its zero-crossing rate, 30–200 ms after the
    /// stroke, past the stick's click): toms and hand drums a few semitones apart differ here.
    static func pitch(_ signal: [Float]) -> Double {
        let window = signal[Int(0.03 * Double(rate))..<Int(0.2 * Double(rate))]
        let crossings = zip(window, window.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        return 12 * log2(max(1, Double(crossings)) / 0.17 / 2)
    }

    @Test func everyDrumKeySoundsAndDiffersFromItsNeighbours() throws {
        let player = try Player()
        var prints: [UInt8: [Double]] = [:]
        var pitches: [UInt8: Double] = [:]
        for key in UInt8(35)...81 {
            let signal = player.play([(0.0, 0x99, key, 100), (0.1, 0x89, key, 0)], seconds: 0.6)
            // (-60 dBFS over 0.3 s: the sampler now plays at FluidSynth's gain, 0.2; the quietest hits read -55.)
            #expect(Self.level(signal, from: 0, to: 0.3) > -60, "drum key \(key) is silent")
            #expect(signal.allSatisfy { $0.isFinite && abs($0) < 0.99 }, "drum key \(key) clips")
            prints[key] = Self.fingerprint(signal)
            pitches[key] = Self.pitch(signal)
        }
        for key in UInt8(35)...80 {
            let a = prints[key]!
            let b = prints[key + 1]!
            let distance = (zip(a, b).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Double(a.count)).squareRoot()
            let interval = abs(pitches[key]! - pitches[key + 1]!)
            #expect(
                distance > 2 || interval > 2,
                "drum keys \(key) and \(key + 1) sound alike (distance \(distance) dB, \(interval) semitones apart)")
        }
    }

    /// GM's choke groups: the second key of each pair, struck while the first rings, silences the first.
    @Test(arguments: [(46, 42), (46, 44), (72, 71), (74, 73), (79, 78), (81, 80)] as [(UInt8, UInt8)])
    func chokeGroupsChoke(ringing: UInt8, choking: UInt8) throws {
        let player = try Player()
        let alone = player.play([(0.0, 0x99, ringing, 110), (0.05, 0x89, ringing, 0)], seconds: 1.0)
        let choked = player.play(
            [(0.0, 0x99, ringing, 110), (0.05, 0x89, ringing, 0), (0.1, 0x99, choking, 110), (0.15, 0x89, choking, 0)],
            seconds: 1.0)
        // FluidSynth ends a choked voice with a fast release (−200 timecents: 96 dB in 0.89 s), not at once:
        // 0.2–0.4 s after the choking hit the ringing sound must be far below what it is when nothing chokes it.
        let ring = Self.level(alone, from: 0.3, to: 0.5)
        let after = Self.level(choked, from: 0.3, to: 0.5)
        #expect(ring > -75, "\(ringing) does not ring long enough to be choked: \(ring) dB")
        #expect(after < ring - 12, "\(choking) does not choke \(ringing): \(after) dB against \(ring) dB")
    }

    /// Struck and plucked instruments die away while the key (or the pedal) holds them; blown, bowed and
    /// electric ones hold.
    @Test func decayingProgramsDieAwayAndSustainingOnesHold() throws {
        let player = try Player()
        let decaying: [UInt8] = [0, 1, 4, 6, 11, 24, 25, 27, 33, 46]
        for program in decaying {
            for pedal in [false, true] {
                var events: [(Double, UInt8, UInt8, UInt8)] = [(0, 0xC0, program, 0), (0.01, 0x90, 60, 100)]
                if pedal { events += [(0.005, 0xB0, 64, 127), (0.3, 0x80, 60, 0)] }
                let signal = player.play(events, seconds: 4.2)
                let start = Self.level(signal, from: 0, to: 0.1)
                let late = Self.level(signal, from: 4.0, to: 4.1)
                #expect(
                    late < start - 20, "program \(program) (pedal: \(pedal)) held: \(start) dB, \(late) dB at 4 s")
            }
        }
        for program: UInt8 in [16, 19, 21, 40, 48, 52, 56, 65, 73, 80, 89] {
            let signal = player.play([(0, 0xC0, program, 0), (0.01, 0x90, 60, 100)], seconds: 4.2)
            // 1.5 s windows: ensembles and pads beat; over that long their level is steady.
            let early = Self.level(signal, from: 1.0, to: 2.5)
            let late = Self.level(signal, from: 2.5, to: 4.0)
            #expect(abs(late - early) < 3, "program \(program) does not hold: \(early) dB → \(late) dB")
        }
    }

    /// Every loop joins without a step: the jump from a loop's last frame to its first is no larger than the
    /// largest step inside the loop (plus rounding), so a held note never clicks at the loop point.
    @Test func loopsDoNotClick() throws {
        let bytes = try #require(FileManager.default.contents(atPath: TestFiles.bundledFont))
        let font = try #require(SoundFontReader(bytes: [UInt8](bytes)))
        var looped = 0
        for header in font.samples where header.loopStart > header.start || header.loopEnd < header.end {
            looped += 1
            let frames = font.frames(header.loopStart..<header.loopEnd)
            var largest = 0
            for n in 1..<frames.count { largest = max(largest, abs(frames[n] - frames[n - 1])) }
            let seam = abs(frames[0] - frames[frames.count - 1])
            #expect(seam <= largest + 4, "\(header.name): loop seam \(seam), largest step inside \(largest)")
        }
        #expect(looped > 50)
    }
}

/// Just enough of an SF2 reader for the loop test: the sample headers and the 16-bit sample data.
struct SoundFontReader {
    struct Header {
        var name: String
        var start: Int
        var end: Int
        var loopStart: Int
        var loopEnd: Int
    }

    let samples: [Header]
    let data: [UInt8]
    let dataOffset: Int

    init?(bytes: [UInt8]) {
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func tag(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
        var smpl: Int?
        var shdr: (Int, Int)?
        // Walk the chunks inside the RIFF and its LISTs.
        var stack = [(12, bytes.count)]
        while let (from, to) = stack.popLast() {
            var at = from
            while at + 8 <= to {
                let id = tag(at)
                let size = u32(at + 4)
                if id == "LIST" { stack.append((at + 12, at + 8 + size)) }
                if id == "smpl" { smpl = at + 8 }
                if id == "shdr" { shdr = (at + 8, size) }
                at += 8 + size + size % 2
            }
        }
        guard let smpl, let (offset, size) = shdr else { return nil }
        var headers: [Header] = []
        for record in 0..<(size / 46 - 1) {
            let at = offset + 46 * record
            let name = String(decoding: bytes[at..<at + 20].prefix { $0 != 0 }, as: UTF8.self)
            headers.append(
                Header(
                    name: name, start: u32(at + 20), end: u32(at + 24), loopStart: u32(at + 28), loopEnd: u32(at + 32)))
        }
        samples = headers
        data = bytes
        dataOffset = smpl
    }

    func frames(_ range: Range<Int>) -> [Int] {
        range.map {
            Int(Int16(bitPattern: UInt16(data[dataOffset + 2 * $0]) | UInt16(data[dataOffset + 2 * $0 + 1]) << 8))
        }
    }
}

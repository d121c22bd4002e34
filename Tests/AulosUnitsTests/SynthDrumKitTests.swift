import AulosCore
import AulosDSP
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The synth's drum kit on channel 10: every drum audible and distinct, tuned and decayed by its
/// parameters, the open hat choked by the closed one.
@Suite struct SynthDrumKitTests {
    let synth = OscillatorSynthUnit.componentDescription

    /// One hit of `key` on channel 10 (0-based 9), 0.5 s of it.
    func hit(_ key: Int, channel: UInt8 = 9, configure: (AudioUnit) throws -> Void = { _ in }) throws -> [Float] {
        let rig = try InstrumentRig(synth, configure: configure)
        rig.scheduler.schedule(.noteOn(channel: channel, note: UInt8(key), velocity: 110), at: 0)
        rig.scheduler.schedule(.noteOff(channel: channel, note: UInt8(key), velocity: 0), at: 2000)
        return rig.render(24_000, slice: 512).0
    }

    /// A hit's fingerprint: energy in 16 half-octave bands from 40 Hz (summed to 1), then its energy in 8
    /// successive 60 ms windows (summed to 1): what it sounds like and how it dies away.
    func fingerprint(_ samples: [Float]) -> [Double] {
        let n = 16_384
        var real = (0..<n).map { Double(samples[$0]) }
        var imaginary = [Double](repeating: 0, count: n)
        FFT.forward(real: &real, imaginary: &imaginary)
        let power = (0..<(n / 2)).map { real[$0] * real[$0] + imaginary[$0] * imaginary[$0] }
        let binWidth = 48_000.0 / Double(n)
        let spectrum = (0..<16).map { band -> Double in
            let low = 40 * pow(2, Double(band) / 2)
            return (Int(low / binWidth)..<min(n / 2, Int(low * pow(2, 0.5) / binWidth))).map { power[$0] }
                .reduce(0, +)
        }
        let envelope = (0..<8).map { window in
            samples[(window * 2880)..<((window + 1) * 2880)].map { Double($0 * $0) }.reduce(0, +)
        }
        let spectrumTotal = spectrum.reduce(0, +)
        let envelopeTotal = envelope.reduce(0, +)
        return spectrum.map { $0 / spectrumTotal } + envelope.map { $0 / envelopeTotal }
    }

    /// The General MIDI keys the issue names (kick, snare, rim, clap, closed/pedal/open hat, three toms,
    /// crash, ride, cowbell): each loud enough to hear, and each unlike every other.
    @Test func everyDrumKeyIsAudibleAndDistinct() throws {
        let keys = [36, 38, 37, 39, 42, 44, 46, 41, 45, 48, 49, 51, 56]
        var prints: [Int: [Double]] = [:]
        for key in keys {
            let samples = try hit(key)
            let peak = samples.map(abs).max()!
            // (The kit plays at FluidR3's level on FluidSynth's gain 0.2: the open hat and the ride peak
            // near 0.017.)
            #expect(peak > 0.01, "key \(key) peaks at \(peak)")
            #expect(samples.allSatisfy { $0.isFinite && abs($0) < 1 }, "key \(key)")
            prints[key] = fingerprint(samples)
        }
        var closest = (2.0, 0, 0)
        for a in keys {
            for b in keys where b > a {
                let d = zip(prints[a]!, prints[b]!).map { abs($0 - $1) }.reduce(0, +)
                if d < closest.0 { closest = (d, a, b) }
            }
        }
        #expect(closest.0 > 0.15, "keys \(closest.1) and \(closest.2) are too alike: \(closest.0)")
    }

    /// The drum channel is not a synth channel: no synth voice starts, and a key with no drum is silent.
    @Test func drumChannelPlaysOnlyTheKit() throws {
        let rig = try InstrumentRig(synth)
        rig.scheduler.schedule(.noteOn(channel: 9, note: 100, velocity: 100), at: 0)
        let (silent, _) = rig.render(4096, slice: 512)
        #expect(silent.allSatisfy { $0 == 0 })
        rig.scheduler.schedule(.noteOn(channel: 9, note: 36, velocity: 100), at: rig.time)
        _ = rig.render(512, slice: 512)
        #expect((rig.instrument as! OscillatorSynthUnit).activeVoiceCount == 1)
    }

    /// Kick Tune +12 plays the kick's body an octave up (measured on its tail, after the pitch sweep).
    @Test func kickTuneMovesItsPitch() throws {
        func body(_ tune: Float) throws -> Double {
            let samples = try hit(36) { try $0.setParameter(SynthDrum.kick.parameter(.tune), value: tune) }
            return measuredFrequency(samples[4800..<14_400], sampleRate: 48_000)
        }
        let plain = try body(0)
        let octave = try body(12)
        #expect(abs(plain - 50) < 2, "kick body \(plain) Hz")
        #expect(abs(cents(octave, 2 * plain)) < 20, "\(octave) Hz against \(plain) Hz")
    }

    /// Decay scales how long a drum rings; Level scales it in dB.
    @Test func decayAndLevelShapeAHit() throws {
        func energy(_ samples: [Float], _ range: Range<Int>) -> Double {
            samples[range].map { Double($0 * $0) }.reduce(0, +)
        }
        let plain = try hit(46)
        let short = try hit(46) { try $0.setParameter(SynthDrum.openHat.parameter(.decay), value: 0.2) }
        let quiet = try hit(46) { try $0.setParameter(SynthDrum.openHat.parameter(.level), value: -20) }
        #expect(energy(short, 9600..<24_000) < energy(plain, 9600..<24_000) / 100)
        let ratio = energy(quiet, 0..<24_000) / energy(plain, 0..<24_000)
        #expect(abs(10 * log10(ratio) + 20) < 0.1, "\(10 * log10(ratio)) dB")
    }

    /// A closed hat cuts an open hat ringing on the same channel.
    @Test func closedHatChokesTheOpenHat() throws {
        func tail(closing: Bool) throws -> Double {
            let rig = try InstrumentRig(synth)
            rig.scheduler.schedule(.noteOn(channel: 9, note: 46, velocity: 110), at: 0)
            if closing { rig.scheduler.schedule(.noteOn(channel: 9, note: 42, velocity: 1), at: 4800) }
            let (left, _) = rig.render(24_000, slice: 512)
            return left[12_000..<24_000].map { Double($0 * $0) }.reduce(0, +)
        }
        #expect(try tail(closing: true) < tail(closing: false) / 1000)
    }

    /// The drum channels are a property: channel 16 as the kit, channel 10 as an ordinary synth channel.
    @Test func theDrumChannelIsConfigurable() throws {
        let configure: (AudioUnit) throws -> Void = {
            try $0.setProperty(
                OscillatorSynthUnit.drumChannelsProperty, scope: .global, element: 0, value: UInt32(1 << 15))
        }
        let onSixteen = try hit(36, channel: 15, configure: configure)
        let onTen = try hit(36, channel: 9, configure: configure)
        #expect(abs(measuredFrequency(onSixteen[4800..<14_400], sampleRate: 48_000) - 50) < 2)
        // Key 36 on an ordinary channel is C2 on the synth's patch, not a kick.
        #expect(onTen[..<2000].map(abs).max()! > 0.01)
        #expect(abs(measuredFrequency(onTen[4800..<14_400], sampleRate: 48_000) - 50) > 5)
        #expect(
            throws: AudioUnitError.self,
            performing: {
                try OscillatorSynthUnit().setProperty(
                    OscillatorSynthUnit.drumChannelsProperty, scope: .global, element: 0, value: UInt32(1 << 16))
            })
    }

    /// Every key of the kit struck in a run (bursts, warbles, stopped whistles, chokes among them) gives the
    /// same bits whatever the slice size, and each hit starts at its frame: frame k is silent before a
    /// lone hit at k, sounding at k.
    @Test func theWholeKitIsSliceIndependentAndSampleExact() throws {
        func run(slice: Int) throws -> [Float] {
            let rig = try InstrumentRig(synth)
            for key in 35...81 {
                rig.scheduler.schedule(
                    .noteOn(channel: 9, note: UInt8(key), velocity: UInt8(40 + key)), at: Int64((key - 35) * 1_531))
            }
            return rig.render(80_000, slice: slice).0
        }
        let whole = try run(slice: 4096)
        for slice in [17, 64, 1000] { #expect(try run(slice: slice) == whole, "slice \(slice)") }
        for key in [54, 58, 71, 73, 81] {
            let rig = try InstrumentRig(synth)
            rig.scheduler.schedule(.noteOn(channel: 9, note: UInt8(key), velocity: 100), at: 333)
            let (left, _) = rig.render(1024, slice: 256)
            #expect(left[..<333].allSatisfy { $0 == 0 } && left[333] != 0, "key \(key)")
        }
    }
}

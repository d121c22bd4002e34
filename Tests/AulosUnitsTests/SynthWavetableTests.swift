import AulosCore
import AulosDSP
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The wavetable waveform: band-limited cycles, morphing by position (a parameter or the matrix).
@Suite struct SynthWavetableTests {
    typealias P = OscillatorSynthUnit.Parameter
    let synth = OscillatorSynthUnit.componentDescription

    /// A cycle of `n` samples of the given harmonics (amplitude 1/h each).
    func cycle(_ harmonics: [Int], length n: Int = 2048) -> [Float] {
        (0..<n).map { i in
            harmonics.map { Float(sin(2 * Double.pi * Double($0 * i) / Double(n))) / Float($0) }.reduce(0, +)
        }
    }

    /// The sine patch with osc 1 on the wavetable `table` at `position`, note `note` for 16,384 + 4,800 frames.
    func play(_ table: MorphingWavetable, note: UInt8 = 69, values: [P: Float] = [:]) throws -> [Float] {
        let rig = try InstrumentRig(synth) { unit in
            try setSynth(unit, pureSine)
            try setSynth(unit, [.osc1Waveform: 5])
            try setSynth(unit, values)
            try (unit as! OscillatorSynthUnit).setWavetable(table)
        }
        rig.scheduler.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: 0)
        return rig.render(4800 + 16_384, slice: 256).0
    }

    func magnitudes(_ samples: [Float]) -> [Double] {
        let n = 16_384
        var real = (0..<n).map { i -> Double in
            let x = 2 * Double.pi * Double(i) / Double(n)
            let w = 0.35875 - 0.48829 * cos(x) + 0.14128 * cos(2 * x) - 0.01168 * cos(3 * x)
            return Double(samples[4800 + i]) * w
        }
        var imaginary = [Double](repeating: 0, count: n)
        FFT.forward(real: &real, imaginary: &imaginary)
        return (0..<(n / 2)).map { (real[$0] * real[$0] + imaginary[$0] * imaginary[$0]).squareRoot() }
    }

    /// A naive saw cycle (every harmonic up to 1023) played at 5 kHz: the table keeps only what stays below
    /// Nyquist, so nothing but harmonics rises above −60 dB.
    @Test func aSharpCycleDoesNotAliasHigh() throws {
        let saw = (0..<2048).map { Float($0) / 1024 - 1 }
        let table = try MorphingWavetable(cycles: [saw], sampleRate: 48_000)
        let magnitude = magnitudes(try play(table, note: 111))
        let f0 = 440 * pow(2, 42.0 / 12)
        let binWidth = 48_000.0 / 16_384
        let loudest = magnitude.max()!
        var worst = 0.0
        for bin in 20..<magnitude.count {
            let harmonic = (Double(bin) * binWidth / f0).rounded()
            if harmonic >= 1 && abs(Double(bin) * binWidth - harmonic * f0) < 8 * binWidth { continue }
            worst = max(worst, magnitude[bin])
        }
        #expect(20 * log10(worst / loudest) < -60)
    }

    /// Two frames — a sine, then its third harmonic — morph by position: at 0 the fundamental, at 1 the
    /// third, halfway both at half; the matrix moves the position too.
    @Test func positionMorphsBetweenFrames() throws {
        let table = try MorphingWavetable(cycles: [cycle([1]), cycle([3])], sampleRate: 48_000)
        let binWidth = 48_000.0 / 16_384
        func levels(_ values: [P: Float]) throws -> (Double, Double) {
            let magnitude = magnitudes(try play(table, values: values))
            let fundamental = magnitude[Int((440 / binWidth).rounded())]
            let third = magnitude[Int((1320 / binWidth).rounded())]
            return (fundamental, third)
        }
        let start = try levels([.wavetablePosition: 0])
        let end = try levels([.wavetablePosition: 1])
        let middle = try levels([.wavetablePosition: 0.5])
        #expect(start.1 < start.0 / 1000 && end.0 < end.1 / 1000)
        #expect(abs(middle.0 / start.0 - 0.5) < 0.01 && abs(middle.1 / end.1 - 0.5) < 0.01)
        let moved = try levels([
            .mod1Source: Float(ModulationSource.velocity.rawValue),
            .mod1Destination: Float(ModulationDestination.wavetablePosition.rawValue), .mod1Amount: 1,
        ])
        // Velocity 100 of 127 moves the position to 0.787.
        #expect(abs(moved.1 / end.1 - 100.0 / 127) < 0.01 && abs(moved.0 / start.0 - 27.0 / 127) < 0.01)
    }

    /// Cycles must be one power-of-two length; more than 64 are thinned to 64; without a table the
    /// waveform plays a saw.
    @Test func tableShapesAndLimits() throws {
        #expect(throws: MorphingWavetable.Problem.cycleLength(1000)) {
            try MorphingWavetable(cycles: [[Float](repeating: 0, count: 1000)], sampleRate: 48_000)
        }
        #expect(throws: MorphingWavetable.Problem.empty) { try MorphingWavetable(cycles: [], sampleRate: 48_000) }
        let many = try MorphingWavetable(cycles: (0..<200).map { _ in cycle([1], length: 256) }, sampleRate: 48_000)
        #expect(many.frameCount == MorphingWavetable.maximumFrames)
        let rig = try InstrumentRig(synth) { unit in
            try setSynth(unit, pureSine)
            try setSynth(unit, [.osc1Waveform: 5])
        }
        rig.scheduler.schedule(.noteOn(channel: 0, note: 69, velocity: 100), at: 0)
        let (plain, _) = rig.render(9600, slice: 256)
        let saw = try InstrumentRig(synth) { unit in
            try setSynth(unit, pureSine)
            try setSynth(unit, [.osc1Waveform: 0])
        }
        saw.scheduler.schedule(.noteOn(channel: 0, note: 69, velocity: 100), at: 0)
        #expect(plain == saw.render(9600, slice: 256).0)
    }
}

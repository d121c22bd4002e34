import AulosCore
import AulosDSP
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The synth's General MIDI against FluidR3_GM on FluidSynth (issue 30): every program within ±3 dB of
/// FluidR3's loudness at velocities 64 and 100; every drum key 35–81 sounding and unlike its neighbours,
/// the kit about as loud as FluidR3's; the choke groups GM implies; pianos and plucked instruments dying
/// away under the pedal while organs and strings hold.
///
/// With `AULOS_RECORD_GM_LEVELS=1` the loudness test also calibrates from what it measured (`recordLevels`):
/// it rewrites the volume and velocity sensitivity of each factory preset measured on its own program, and
/// the trims of the programs that borrow one in `Sources/AulosUnits/Instruments/SynthProgramLevels.swift`;
/// build and run it again to check. With `AULOS_GM_REPORT=1` it prints every figure.
///
/// Threads: the test's thread.
@Suite(.serialized) struct GeneralMIDIConformanceTests {
    typealias Measure = GeneralMIDIMeasurement

    @Test func everyProgramIsAsLoudAsFluidR3() throws {
        let clock = ContinuousClock()
        let started = clock.now
        let reference = Measure.programLoudness(on: try Measure.reference())
        let referenced = clock.now
        let synth = Measure.programLoudness(on: try Measure.synth())
        var report: [String] = []
        for program in 0..<128 {
            let errors = zip(synth[program], reference[program]).map { $0 - $1 }
            let line = String(
                format: "program %3d: FluidR3 %6.1f / %6.1f LUFS, synth %+5.1f / %+5.1f dB", program,
                reference[program][0], reference[program][1], errors[0], errors[1])
            report.append(line)
            #expect(errors.allSatisfy { abs($0) <= 3 }, "\(line)")
        }
        if ProcessInfo.processInfo.environment["AULOS_RECORD_GM_LEVELS"] == "1" {
            try recordLevels(synth: synth, reference: reference)
        }
        if ProcessInfo.processInfo.environment["AULOS_GM_REPORT"] == "1" {
            print(report.joined(separator: "\n"))
            print("rendered FluidR3 in \(referenced - started), the synth in \(clock.now - referenced)")
        }
    }

    /// Every key 35–81 of the synth's kit sounds, unlike the keys beside it (spectrum and how it dies away),
    /// and about as loud as FluidR3's: each key within ±6 dB, the whole kit within ±3 dB.
    @Test func everyDrumKeySoundsUnlikeItsNeighboursAsLoudAsFluidR3() throws {
        let reference = Measure.drumHits(on: try Measure.reference(rate: Measure.drumRate))
        let synth = Measure.drumHits(on: try Measure.synth(rate: Measure.drumRate))
        var prints: [Int: [Double]] = [:]
        var (synthPower, referencePower) = (0.0, 0.0)
        for key in 35...81 {
            let (left, right) = synth[key]!
            let peak = max(left.map(abs).max()!, right.map(abs).max()!)
            #expect(peak > 0.01, "key \(key) is silent (peak \(peak))")
            prints[key] = fingerprint(zip(left, right).map { $0 + $1 })
            let ours = LoudnessMeter.integratedLoudness(left: left, right: right, sampleRate: Measure.drumRate)
            let theirs = LoudnessMeter.integratedLoudness(
                left: reference[key]!.0, right: reference[key]!.1, sampleRate: Measure.drumRate)
            #expect(abs(ours - theirs) <= 6, "key \(key): \(ours) LUFS, FluidR3 \(theirs) LUFS")
            synthPower += pow(10, ours / 10)
            referencePower += pow(10, theirs / 10)
            if ProcessInfo.processInfo.environment["AULOS_GM_REPORT"] == "1" {
                print(String(format: "key %d: FluidR3 %.1f LUFS, synth %+.1f dB", key, theirs, ours - theirs))
            }
        }
        let kit = 10 * log10(synthPower / referencePower)
        #expect(abs(kit) <= 3, "the kit is \(kit) dB from FluidR3's")
        for key in 35...80 {
            let distance = zip(prints[key]!, prints[key + 1]!).map { abs($0 - $1) }.reduce(0, +)
            #expect(distance > 0.1, "keys \(key) and \(key + 1) sound alike: \(distance)")
            if ProcessInfo.processInfo.environment["AULOS_GM_REPORT"] == "1" {
                print(String(format: "keys %d-%d: fingerprints %.2f apart", key, key + 1, distance))
            }
        }
    }

    /// A hit's fingerprint: its energy in 16 half-octave bands from 40 Hz, then in 8 successive 60 ms
    /// windows, each set summed to 1 — what it sounds like and how it dies away.
    func fingerprint(_ samples: [Float]) -> [Double] {
        let n = 16_384
        var real = (0..<n).map { Double(samples[$0]) }
        var imaginary = [Double](repeating: 0, count: n)
        FFT.forward(real: &real, imaginary: &imaginary)
        let binWidth = Measure.drumRate / Double(n)
        let spectrum = (0..<16).map { band -> Double in
            let low = 40 * pow(2, Double(band) / 2)
            return (Int(low / binWidth)..<min(n / 2, Int(low * pow(2, 0.5) / binWidth)))
                .map { real[$0] * real[$0] + imaginary[$0] * imaginary[$0] }.reduce(0, +)
        }
        let window = Int(0.06 * Measure.drumRate)
        let envelope = (0..<8).map { index in
            samples[(index * window)..<((index + 1) * window)].map { Double($0 * $0) }.reduce(0, +)
        }
        let (spectrumTotal, envelopeTotal) = (spectrum.reduce(0, +), envelope.reduce(0, +))
        return spectrum.map { $0 / spectrumTotal } + envelope.map { $0 / envelopeTotal }
    }

    /// General MIDI's exclusive pairs: a closed or pedal hat stops the open one, a short whistle, guiro,
    /// mute cuica or mute triangle stops the long one ringing — at least 20 dB less left after it. (One
    /// synth for every pair, each hit silenced before the next: making a synth is the slow part.)
    @Test func chokeGroupsChoke() throws {
        let rig = try Measure.synth()
        let rate = Measure.rate
        /// The energy left 0.35…0.5 s after `ringing` is struck, with `stopper` struck at 0.1 s or not.
        func tail(_ ringing: Int, stoppedBy stopper: Int?) -> Double {
            let start = rig.time
            var messages = [
                ScheduledMessage(sampleTime: start, message: .noteOn(channel: 9, note: UInt8(ringing), velocity: 100))
            ]
            if let stopper {
                messages.append(
                    .init(
                        sampleTime: start + Int64(0.1 * rate),
                        message: .noteOn(channel: 9, note: UInt8(stopper), velocity: 100)))
            }
            messages.append(
                .init(
                    sampleTime: start + Int64(0.5 * rate),
                    message: .controlChange(channel: 9, controller: 120, value: 0)))
            let (left, _) = Measure.play(messages, on: rig, frames: Int(0.6 * rate))
            return left[Int(0.35 * rate)..<Int(0.5 * rate)].map { Double($0 * $0) }.reduce(0, +)
        }
        for (ringing, stopper) in [(46, 42), (46, 44), (72, 71), (74, 73), (79, 78), (81, 80)] {
            let ringingOn = tail(ringing, stoppedBy: nil)
            let choked = tail(ringing, stoppedBy: stopper)
            #expect(ringingOn > 0, "key \(ringing) does not ring")
            #expect(
                choked < ringingOn / 100, "key \(stopper) leaves \(10 * log10(choked / ringingOn)) dB of \(ringing)")
        }
    }

    /// Under the sustain pedal pianos, mallets, guitars, basses, harp, pizzicato, timpani and plucked ethnic
    /// instruments die away (at least 20 dB down 5 s after the key, as a piano's middle register does)
    /// while organs, strings, brass, reeds, pipes, leads and pads hold (within 6 dB).
    @Test func pedalledPianosAndPluckedDieAwayWhileOrgansAndStringsHold() throws {
        let decaying = [0, 1, 2, 4, 5, 8, 11, 14, 24, 25, 29, 30, 32, 33, 34, 45, 46, 47, 104, 112]
        let holding = [16, 18, 19, 40, 48, 50, 56, 61, 65, 68, 73, 81, 89, 90, 109]
        // At 8 kHz: how a note dies away does not depend on the rate, and this is five seconds per program.
        let rate = 8_000.0
        let rig = try Measure.synth(rate: rate)
        func level(_ samples: ArraySlice<Float>) -> Double {
            10 * log10(samples.map { Double($0 * $0) }.reduce(0, +) / Double(samples.count))
        }
        for program in decaying + holding {
            let start = rig.time
            let messages: [ScheduledMessage] = [
                .init(sampleTime: start, message: .programChange(channel: 0, program: UInt8(program))),
                .init(sampleTime: start, message: .controlChange(channel: 0, controller: 64, value: 127)),
                .init(sampleTime: start, message: .noteOn(channel: 0, note: 60, velocity: 100)),
                .init(sampleTime: start + Int64(0.3 * rate), message: .noteOff(channel: 0, note: 60, velocity: 0)),
                .init(
                    sampleTime: start + Int64(5.5 * rate),
                    message: .controlChange(channel: 0, controller: 64, value: 0)),
                .init(
                    sampleTime: start + Int64(5.5 * rate),
                    message: .controlChange(channel: 0, controller: 120, value: 0)),
            ]
            let (left, _) = Measure.play(messages, on: rig, frames: Int(5.6 * rate))
            let early = level(left[Int(0.2 * rate)..<Int(0.7 * rate)])
            let late = level(left[Int(5.0 * rate)..<Int(5.5 * rate)])
            if decaying.contains(program) {
                #expect(late <= early - 20, "program \(program) falls only \(early - late) dB in 5 s under the pedal")
            } else {
                #expect(late >= early - 6, "program \(program) falls \(early - late) dB in 5 s held")
            }
        }
    }

    /// Calibrates from one measurement: for each program, the velocity sensitivity that makes its soft
    /// phrase fall as far below its loud one as FluidR3's does (within 0…1), then the level that centres
    /// both on FluidR3's. A preset measured on its own program gets them in its file; a program borrowing a
    /// preset gets them as a trim in `SynthProgramLevels.swift`, relative to the preset's new volume. The
    /// synth's gain at velocity v is 1 − s + s · (v/127)², so both moves are computed, not searched for.
    func recordLevels(synth: [[Double]], reference: [[Double]]) throws {
        let folder = TestFiles.presets + "/synth"
        let presets = try SynthPresetLibrary.load(from: folder)
        let table = SynthPreset.programTable(presets)
        let sensitivityID = OscillatorSynthUnit.Parameter.velocitySensitivity.id
        let volumeID = OscillatorSynthUnit.Parameter.volume.id
        func gain(_ s: Double, _ velocity: UInt8) -> Double {
            let v = Double(velocity) / 127
            return 20 * log10(max(1e-6, 1 - s + s * v * v))
        }
        /// The new sensitivity and the preset volume + trim, in dB, that put `program` on FluidR3's level.
        func calibrate(_ program: Int, preset: SynthPreset) -> (sensitivity: Double, volume: Double)? {
            let own = SynthProgramLevels.trim(program: program, preset: preset.name)
            let now = Double(own?.velocitySensitivity ?? preset.values[sensitivityID] ?? 0.7)
            let volume = Double(preset.values[volumeID] ?? -6) + Double(own?.decibels ?? 0)
            guard (synth[program] + reference[program]).allSatisfy(\.isFinite) else { return nil }
            let (soft, loud) = (Measure.velocities[0], Measure.velocities[1])
            let wanted = reference[program][1] - reference[program][0]
            let spreadWithout = synth[program][1] - synth[program][0] - (gain(now, loud) - gain(now, soft))
            let best = (0...100).map { Double($0) / 100 }.min { a, b in
                abs(spreadWithout + gain(a, loud) - gain(a, soft) - wanted)
                    < abs(spreadWithout + gain(b, loud) - gain(b, soft) - wanted)
            }!
            let errors = Measure.velocities.indices.map { index in
                let velocity = Measure.velocities[index]
                return synth[program][index] + gain(best, velocity) - gain(now, velocity) - reference[program][index]
            }
            return (best, volume - errors.reduce(0, +) / Double(errors.count))
        }
        var newVolume: [String: Double] = [:]
        for preset in presets where preset.bank == 0 {
            guard let (sensitivity, volume) = calibrate(preset.program, preset: preset) else { continue }
            newVolume[preset.name] = min(6, max(-60, (volume * 10).rounded() / 10))
            try rewrite(
                preset: folder, program: preset.program, volume: newVolume[preset.name]!,
                sensitivity: (sensitivity * 100).rounded() / 100)
        }
        var lines: [String] = []
        for program in 0..<128 where table[program] >= 0 {
            let preset = presets[Int(table[program])]
            guard preset.program != program, let base = newVolume[preset.name],
                let (sensitivity, volume) = calibrate(program, preset: preset)
            else { continue }
            lines.append(
                "        .init(\(program), \"\(preset.name)\", \(String(format: "%.1f", volume - base)), velocity: "
                    + "\(String(format: "%.2f", sensitivity))),")
        }
        let path = TestFiles.repositoryRoot + "/Sources/AulosUnits/Instruments/SynthProgramLevels.swift"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let head = try #require(text.range(of: "    static let trims: [Trim] = [\n"))
        let tail = try #require(text[head.upperBound...].range(of: "    ]\n"))
        try (String(text[..<head.upperBound]) + lines.map { $0 + "\n" }.joined() + String(text[tail.lowerBound...]))
            .write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Sets `"volume"` and `"velocitySensitivity"` in the preset file of `program` (adding the second
    /// before the first where the file leaves it out), keeping the rest of the file as it is.
    func rewrite(preset folder: String, program: Int, volume: Double, sensitivity: Double) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        let name = try #require(names.first { $0.hasPrefix(String(format: "%03d-", program)) && $0.hasSuffix(".json") })
        var lines = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func set(_ key: String, _ value: Double) -> Bool {
            guard let index = lines.firstIndex(where: { $0.contains("\"\(key)\":") }) else { return false }
            let line = lines[index]
            let prefix = line[..<line.range(of: "\"\(key)\":")!.upperBound]
            lines[index] = prefix + " \(value)" + (line.hasSuffix(",") ? "," : "")
            return true
        }
        try #require(set("volume", volume), "\(name) has no volume")
        if !set("velocitySensitivity", sensitivity) {
            let index = lines.firstIndex { $0.contains("\"volume\":") }!
            let indent = lines[index].prefix { $0 == " " }
            lines.insert(indent + "\"velocitySensitivity\": \(sensitivity),", at: index)
        }
        try lines.joined(separator: "\n").write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
    }
}

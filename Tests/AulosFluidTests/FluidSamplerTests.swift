import AulosCore
import AulosFluid
import AulosMIDI
import AulosSoundFont
import AulosTestSupport
import AulosUnits
import CFluidSynth
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The bundled font, from the source tree.
let bundledFont = TestFiles.bundledFont

func samplerRig(slice: Int, configure: (FluidSynthSamplerUnit) throws -> Void = { _ in }) throws -> InstrumentRig {
    try InstrumentRig(
        FluidSynthSamplerUnit.componentDescription, maximumFrames: UInt32(max(slice, 64)), registry: samplerRegistry()
    ) { unit in
        let sampler = unit as! FluidSynthSamplerUnit
        try sampler.loadSoundFont(bundledFont)
        try sampler.setParameter(FluidSynthSamplerUnit.Parameter.reverbEnabled.id, value: 0)
        try sampler.setParameter(FluidSynthSamplerUnit.Parameter.chorusEnabled.id, value: 0)
        try configure(sampler)
    }
}

func samplerRegistry() -> ComponentRegistry {
    let registry = BuiltInUnits.registry()
    registry.register(
        Component(FluidSynthSamplerUnit.componentDescription, name: "Aulos: FluidSynth Sampler") {
            FluidSynthSamplerUnit()
        })
    return registry
}

/// Bare libfluidsynth with the sampler's settings: events applied just before the 64-frame block that
/// contains them, rendered block by block. What the sampler must reproduce.
func bareFluidSynth(_ messages: [ScheduledMessage], frames: Int, gain: Float = 0.2) -> ([Float], [Float]) {
    let settings = new_fluid_settings()!
    fluid_settings_setnum(settings, "synth.sample-rate", 48_000)
    fluid_settings_setint(settings, "synth.threadsafe-api", 0)
    fluid_settings_setint(settings, "synth.polyphony", 512)
    fluid_settings_setint(settings, "synth.cpu-cores", 1)
    let synth = new_fluid_synth(settings)!
    defer {
        delete_fluid_synth(synth)
        delete_fluid_settings(settings)
    }
    _ = fluid_synth_sfload(synth, bundledFont, 1)
    fluid_synth_set_gain(synth, gain)
    _ = fluid_synth_reverb_on(synth, -1, 0)
    _ = fluid_synth_chorus_on(synth, -1, 0)
    var left = [Float](repeating: 0, count: frames)
    var right = [Float](repeating: 0, count: frames)
    var next = 0
    left.withUnsafeMutableBufferPointer { l in
        right.withUnsafeMutableBufferPointer { r in
            var out: [UnsafeMutablePointer<Float>?] = [nil, nil]
            var fx: [UnsafeMutablePointer<Float>?] = [nil, nil, nil, nil]
            for block in stride(from: 0, to: frames, by: 64) {
                while next < messages.count && messages[next].sampleTime < Int64(block + 64) {
                    let (status, d1, d2) = messages[next].message.channelBytes!
                    let ch = Int32(status & 0x0F)
                    switch status & 0xF0 {
                    case 0x90:
                        _ =
                            d2 > 0
                            ? fluid_synth_noteon(synth, ch, Int32(d1), Int32(d2))
                            : fluid_synth_noteoff(synth, ch, Int32(d1))
                    case 0x80: _ = fluid_synth_noteoff(synth, ch, Int32(d1))
                    case 0xB0: _ = fluid_synth_cc(synth, ch, Int32(d1), Int32(d2))
                    case 0xC0: _ = fluid_synth_program_change(synth, ch, Int32(d1))
                    case 0xE0: _ = fluid_synth_pitch_bend(synth, ch, Int32(d1) | Int32(d2) << 7)
                    default: break
                    }
                    next += 1
                }
                let length = min(64, frames - block)
                out[0] = l.baseAddress! + block
                out[1] = r.baseAddress! + block
                fx = [out[0], out[1], out[0], out[1]]
                _ = fluid_synth_process(synth, Int32(length), 4, &fx, 2, &out)
            }
        }
    }
    return (left, right)
}

@Suite(.serialized) struct FluidSamplerTests {
    let song: [ScheduledMessage] = {
        let text = """
            0f program 0
            0f note C4 0.4s vel=100
            0f note E4 0.4s
            300f note G4 0.3s
            9000f program 24 ch=2
            9100f note E3 0.5s ch=2
            20000f note C2 0.2s ch=10
            20500f note D2 0.2s ch=10
            21000f cc 7 70
            21000f bend 2000
            24000f note C5 0.3s vel=60
            """
        return try! Score(text: text).scheduledMessages(sampleRate: 48_000).messages
    }()

    @Test(arguments: [64, 4096])
    func matchesBareLibFluidSynthBitForBit(slice: Int) throws {
        let rig = try samplerRig(slice: slice)
        rig.schedule(song)
        let (left, right) = rig.render(48_000, slice: slice)
        let reference = bareFluidSynth(song, frames: 48_000)
        #expect(left.contains { $0 != 0 })
        #expect(left == reference.0)
        #expect(right == reference.1)
    }

    /// An idle sampler skips FluidSynth (whole blocks of exact silence); after a long gap it must still
    /// sound exactly as bare libfluidsynth, which computed every block, does.
    @Test(arguments: [64, 256, 100])
    func idleSkippingIsInaudible(slice: Int) throws {
        let score = "0f note C4 0.2s vel=100\n60000f note E4 0.2s\n60010f cc 7 90\n100000f note G4 0.1s\n"
        let messages = try Score(text: score).scheduledMessages(sampleRate: 48_000).messages
        let rig = try samplerRig(slice: slice)
        rig.schedule(messages)
        let (left, right) = rig.render(120_000, slice: slice)
        let reference = bareFluidSynth(messages, frames: 120_000)
        #expect(left[0..<60_000].contains { $0 != 0 } && left[60_000...].contains { $0 != 0 })
        if slice % 64 == 0 {
            #expect(left == reference.0 && right == reference.1)
        } else {
            // Slices that cut blocks never skip: still what they were before (onsets within a block).
            #expect(left[..<30_000].map(abs).max() == reference.0[..<30_000].map(abs).max())
        }
    }

    /// With slices that cut FluidSynth's blocks, every note still starts within 63 frames of its time.
    @Test(arguments: [1, 17, 100, 1000])
    func onsetsAreWithinOneFluidSynthBlock(slice: Int) throws {
        for onset in [0, 5, 63, 64, 130, 1001] {
            let rig = try samplerRig(slice: slice)
            rig.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 110), at: Int64(onset))
            let (left, _) = rig.render(onset + 2048, slice: slice)
            let first = try #require(left.firstIndex { $0 != 0 }, "slice \(slice), onset \(onset)")
            #expect(abs(first - onset) <= 63, "slice \(slice): onset \(onset) sounded at \(first)")
        }
    }

    @Test func aNoteOnAndOffInOneSliceStillSounds() throws {
        let rig = try samplerRig(slice: 1024)
        rig.scheduler.schedule(.noteOn(channel: 0, note: 64, velocity: 100), at: 100)
        rig.scheduler.schedule(.noteOff(channel: 0, note: 64, velocity: 0), at: 110)
        let (left, _) = rig.render(4096, slice: 1024)
        #expect(left.map(abs).max()! > 0.01)
    }

    @Test func programChangeAudiblyChangesTimbre() throws {
        func spectrum(program: UInt8) throws -> [Double] {
            let rig = try samplerRig(slice: 256)
            rig.scheduler.schedule(.programChange(channel: 0, program: program), at: 0)
            rig.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: 0)
            let (left, _) = rig.render(8192, slice: 256)
            // Energy in 16 octave-ish bands over the first 8192 frames.
            return (0..<16).map { band -> Double in
                let frequency = 130.0 * pow(2, Double(band) / 2)
                var re = 0.0
                var im = 0.0
                for (n, x) in left.enumerated() {
                    re += Double(x) * cos(2 * .pi * frequency * Double(n) / 48_000)
                    im += Double(x) * sin(2 * .pi * frequency * Double(n) / 48_000)
                }
                return (re * re + im * im).squareRoot()
            }
        }
        let piano = try spectrum(program: 0)
        let organ = try spectrum(program: 16)
        let normalize = { (v: [Double]) in v.map { $0 / v.reduce(0, +) } }
        let distance = zip(normalize(piano), normalize(organ)).map { abs($0 - $1) }.reduce(0, +)
        #expect(distance > 0.3, "spectral distance \(distance)")
    }

    @Test func gainScalesTheOutput() throws {
        func peak(_ gain: Float) throws -> Float {
            let rig = try samplerRig(slice: 256) {
                try $0.setParameter(FluidSynthSamplerUnit.Parameter.gain.id, value: gain)
            }
            rig.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: 0)
            return rig.render(4096, slice: 256).0.map(abs).max()!
        }
        let quiet = try peak(0.3)
        let loud = try peak(1.2)
        #expect(abs(loud / quiet - 4) < 0.05)
    }

    @Test func badSoundFontsAreClearErrors() throws {
        let folder = "/tmp/aulos-fonts-\(getpid())"
        mkdir(folder, 0o755)
        defer { system("rm -rf \(folder)") }
        func write(_ name: String, _ bytes: [UInt8]) -> String {
            let path = folder + "/" + name
            let file = fopen(path, "wb")!
            _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            return path
        }
        let good = AulosGMSoundFont.make().encode()
        var corrupt = Array(good.prefix(5000))
        for i in 100..<200 { corrupt[i] = 0xFF }
        let cases = [
            (folder + "/missing.sf2", "No such file"),
            (write("text.sf2", Array("hello, not a font".utf8)), "not a SoundFont"),
            (write("wave.sf2", Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8)), "not a SoundFont"),
            (write("corrupt.sf2", corrupt), "has no preset data"),
        ]
        for (path, expected) in cases {
            let sampler = FluidSynthSamplerUnit()
            do {
                try sampler.loadSoundFont(path)
                try sampler.initialize()
                Issue.record("expected an error for \(path)")
            } catch {
                #expect(error.code == .invalidFile, "\(path)")
                #expect(error.detail.contains(expected), "\(error.detail)")
            }
        }
        let empty = FluidSynthSamplerUnit()
        expectError(.failedInitialization) { try empty.initialize() }
    }

    @Test func aNewSoundFontLoadsWhileInitialized() throws {
        let rig = try samplerRig(slice: 256)
        let sampler = rig.instrument as! FluidSynthSamplerUnit
        rig.scheduler.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: 0)
        _ = rig.render(2048, slice: 256)
        try sampler.loadSoundFont(bundledFont)
        rig.scheduler.schedule(.noteOn(channel: 0, note: 67, velocity: 100), at: rig.time + 10)
        let (left, _) = rig.render(4096, slice: 256)
        #expect(left[256...].map(abs).max()! > 0.01)
        #expect(
            try sampler.getProperty(FluidSynthSamplerUnit.soundFontProperty, scope: .global, element: 0) as? String
                == bundledFont)
    }

    @Test func effectsAreOffByDefault() throws {
        let sampler = FluidSynthSamplerUnit()
        #expect(try sampler.getParameter(FluidSynthSamplerUnit.Parameter.reverbEnabled.id) == 0)
        #expect(try sampler.getParameter(FluidSynthSamplerUnit.Parameter.chorusEnabled.id) == 0)
    }

    @Test func rendersWithoutAllocating() throws {
        let rig = try samplerRig(slice: 64)
        for cycle in 0..<10_000 {
            if cycle % 8 == 0 {
                let at = rig.time + 17
                rig.scheduler.schedule(
                    .noteOn(channel: UInt8(cycle % 2), note: UInt8(48 + cycle % 30), velocity: 100), at: at)
                rig.scheduler.schedule(
                    .noteOff(channel: UInt8(cycle % 2), note: UInt8(48 + cycle % 30), velocity: 0), at: at + 700)
                rig.scheduler.schedule(.controlChange(channel: 0, controller: 7, value: UInt8(cycle % 128)), at: at)
            }
            rig.harness.renderSlice(64, counting: true)
        }
        try expectNoAllocations(rig.harness.allocations)
    }
}

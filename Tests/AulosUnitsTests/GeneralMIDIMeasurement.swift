import AulosCore
import AulosDSP
import AulosFluid
import AulosMIDI
import AulosTestSupport
import AulosUnits
import Foundation
import Testing

/// How the synth's General MIDI is measured against the reference: FluidR3_GM (Debian's
/// `fluid-soundfont-gm`) on the FluidSynth sampler at FluidSynth's own gain 0.2, reverb and chorus off,
/// and the synth with its factory presets, both rendered offline in this process at `rate` and played the
/// same phrase. Loudness is BS.1770's integrated loudness (`LoudnessMeter`).
///
/// Threads: the test's thread.
enum GeneralMIDIMeasurement {
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
    /// The programs are measured at 16 kHz to keep the suite inside its budget (the synth renders slowly
    /// in a debug build): loudness hardly depends on the band above 8 kHz. The kit, with its cymbals, at
    /// 24 kHz.
    static let rate = 16_000.0
    static let drumRate = 24_000.0
    static let velocities: [UInt8] = [64, 100]

    /// The phrase: C3, C4, E4, G4 entering 0.1 s apart (a bass note and a chord, so both registers count),
    /// all released at 0.8 s, everything silenced at 1 s; one such segment per velocity.
    static let phraseKeys: [UInt8] = [48, 60, 64, 67]
    static var segmentFrames: Int { Int(1.1 * rate) }
    /// The frames of a segment that are measured (up to the all-sound-off).
    static var measuredFrames: Int { Int(1.0 * rate) }

    /// The phrase's messages for one segment starting at `start`, on channel 1 (0-based 0), after a
    /// program change to `program`.
    static func phrase(program: UInt8, velocity: UInt8, start: Int64) -> [ScheduledMessage] {
        var messages = [ScheduledMessage(sampleTime: start, message: .programChange(channel: 0, program: program))]
        for (index, key) in phraseKeys.enumerated() {
            let on = start + Int64(Double(index) * 0.1 * rate)
            messages.append(.init(sampleTime: on, message: .noteOn(channel: 0, note: key, velocity: velocity)))
            messages.append(
                .init(sampleTime: start + Int64(0.8 * rate), message: .noteOff(channel: 0, note: key, velocity: 0)))
        }
        messages.append(
            .init(
                sampleTime: start + Int64(measuredFrames),
                message: .controlChange(channel: 0, controller: 120, value: 0)))
        messages.append(
            .init(
                sampleTime: start + Int64(measuredFrames),
                message: .controlChange(channel: 0, controller: 121, value: 0)))
        return messages
    }

    /// A registry with the sampler beside the built-in units (the synth with its factory presets).
    static func registry() throws -> ComponentRegistry {
        let registry = BuiltInUnits.registry()
        let presets = try SynthPresetLibrary.load(from: TestFiles.presets + "/synth")
        registry.register(
            Component(OscillatorSynthUnit.componentDescription, name: "Aulos: Oscillator Synth") {
                OscillatorSynthUnit(presets: presets)
            })
        registry.register(
            Component(FluidSynthSamplerUnit.componentDescription, name: "Aulos: FluidSynth Sampler") {
                FluidSynthSamplerUnit()
            })
        return registry
    }

    /// FluidR3 on the sampler, or a failure naming the set-up that installs it.
    static func reference(rate: Double = rate, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> InstrumentRig
    {
        try #require(
            FileManager.default.fileExists(atPath: fluidR3),
            "\(fluidR3) is not installed: scripts/setup.sh --tests installs fluid-soundfont-gm",
            sourceLocation: sourceLocation)
        return try InstrumentRig(
            FluidSynthSamplerUnit.componentDescription, sampleRate: rate, registry: registry()
        ) { unit in
            let sampler = unit as! FluidSynthSamplerUnit
            try sampler.loadSoundFont(fluidR3)
            try sampler.setParameter(FluidSynthSamplerUnit.Parameter.gain.id, value: 0.2)
            try sampler.setParameter(FluidSynthSamplerUnit.Parameter.reverbEnabled.id, value: 0)
            try sampler.setParameter(FluidSynthSamplerUnit.Parameter.chorusEnabled.id, value: 0)
        }
    }

    /// The synth with its factory presets.
    static func synth(rate: Double = rate) throws -> InstrumentRig {
        try InstrumentRig(OscillatorSynthUnit.componentDescription, sampleRate: rate, registry: registry())
    }

    /// Plays `messages` (sorted by time) on `rig` and returns the next `frames` frames.
    static func play(_ messages: [ScheduledMessage], on rig: InstrumentRig, frames: Int) -> ([Float], [Float]) {
        rig.schedule(messages)
        return rig.render(frames, slice: 4096)
    }

    /// The loudness (LUFS) of every program at each velocity on one instrument: `[program][velocity]`.
    static func programLoudness(on rig: InstrumentRig) -> [[Double]] {
        (0..<128).map { program in
            velocities.map { velocity in
                let (left, right) = play(
                    phrase(program: UInt8(program), velocity: velocity, start: rig.time), on: rig,
                    frames: segmentFrames)
                return LoudnessMeter.integratedLoudness(
                    left: Array(left[..<measuredFrames]), right: Array(right[..<measuredFrames]), sampleRate: rate)
            }
        }
    }

    /// One hit of each drum key 35…81 at velocity 100 on channel 10, a second apart (silenced after 0.9 s):
    /// each key's left and right channels.
    static func drumHits(on rig: InstrumentRig, keys: ClosedRange<Int> = 35...81) -> [Int: ([Float], [Float])] {
        let rate = drumRate
        var hits: [Int: ([Float], [Float])] = [:]
        for key in keys {
            let start = rig.time
            let messages: [ScheduledMessage] = [
                .init(sampleTime: start, message: .noteOn(channel: 9, note: UInt8(key), velocity: 100)),
                .init(
                    sampleTime: start + Int64(0.1 * rate),
                    message: .noteOff(channel: 9, note: UInt8(key), velocity: 0)),
                .init(
                    sampleTime: start + Int64(0.9 * rate),
                    message: .controlChange(channel: 9, controller: 120, value: 0)),
            ]
            hits[key] = play(messages, on: rig, frames: Int(rate))
        }
        return hits
    }
}

import AulosSFZ
import Foundation
import Testing

/// The same events rendered in slices of 64, 1,000 and 1 frames give the same frames, bit for bit, with every
/// moving part in play: envelopes, LFOs, filters, controller inputs, releases, a choke, stealing, a stereo
/// sample, transpositions up and down; and an event at offset k changes the output first at frame k.
@Suite struct VoiceSliceTests {
    static func script(_ rig: VoiceRig) -> [(frame: Int, event: VoiceEvent)] {
        var a = rig.parameters("mono.wav")
        a.loopMode = .loopContinuous
        a.pitchCents = -250
        a.filterType = .lowPass2Pole
        a.cutoff = 1500
        a.resonance = 12
        a.filterEnvelope = SFZEnvelopeTimes(attack: 0.05, decay: 0.2, sustain: 0.3, release: 0.1)
        a.filterEnvelopeDepth = 2400
        a.amplitudeEnvelope = SFZEnvelopeTimes(attack: 0.01, decay: 0.1, sustain: 0.7, release: 0.05)
        a.pitchLFO = SFZLFO(frequency: 5.5, depth: 30, delay: 0.02, fade: 0.05)
        var b = rig.parameters("stereo.wav")
        b.pitchCents = 1370
        b.width = 0.5
        b.position = -0.3
        b.filterType = .bandPass2Pole
        b.cutoff = 3000
        b.amplitudeLFO = SFZLFO(frequency: 3, depth: 6)
        b.filterLFO = SFZLFO(frequency: 2, depth: 600)
        b.pitchEnvelope = SFZEnvelopeTimes(attack: 0.02, decay: 0.1, sustain: 0)
        b.pitchEnvelopeDepth = -200
        b.group = 3
        var c = a
        c.filterType = .highPass1Pole
        c.cutoff = 400
        c.pan = 0.6
        c.loopMode = .loopSustain
        return [
            (0, .start(id: 0, a)), (37, .start(id: 1, b)),
            (1003, .inputs(id: 0, SFZVoiceInputs(volume: -6, pan: -0.5))),
            (1500, .start(id: 2, c)), (2222, .inputs(id: 2, SFZVoiceInputs(cutoff: 1200, pitch: 150))),
            (3001, .release(id: 0)), (3500, .start(id: 3, b)), (3500, .start(id: 4, a)),
            (4100, .choke(group: 3, .fast)),
            (4100, .start(id: 5, c)), (6000, .release(id: 2)), (7001, .release(id: 5)),
        ]
    }

    static func samples() -> [(name: String, frames: [Float], channels: Int, rate: Int, loop: ClosedRange<Int>?)] {
        let mono = SampleFixtures.sine(220, frames: 20000).enumerated().map {
            $0.element + 0.1 * Float(sin(Double($0.offset) * 0.31))
        }
        let stereo = SampleFixtures.stereo(
            SampleFixtures.sine(330, rate: 44100, frames: 30000), SampleFixtures.sine(331, rate: 44100, frames: 30000))
        return [("mono.wav", mono, 1, 48000, 2000...17999), ("stereo.wav", stereo, 2, 44100, nil)]
    }

    @Test func slicesOf64And1000And1GiveTheSameFrames() throws {
        var outputs: [[Float]] = []
        for slice in [64, 1000, 1] {
            // Polyphony 4: the starts at 3,500 and 4,100 steal.
            let rig = try VoiceRig(samples: Self.samples(), polyphony: 4)
            let (left, right) = rig.render(frames: 12000, slice: slice, events: Self.script(rig))
            outputs.append(left + right)
        }
        #expect(outputs[0].contains { abs($0) > 0.1 }, "it sounds")
        for (other, slice) in [(1, 1000), (2, 1)] {
            let first = outputs[0].indices.first { outputs[0][$0] != outputs[other][$0] }
            #expect(
                first == nil,
                "64-frame and \(slice)-frame slices differ first at frame \(first ?? 0) of 24,000 (L then R)")
        }
    }

    /// A start at offset k within a slice: silence before frame k, sound at k.
    @Test func aStartAtOffsetKSoundsFromFrameK() throws {
        let rig = try VoiceRig(samples: [("dc.wav", [Float](repeating: 0.5, count: 4000), 1, 48000, nil)])
        let (left, _) = rig.render(frames: 256, slice: 256, events: [(77, .start(id: 0, rig.parameters("dc.wav")))])
        #expect(left[0..<77].allSatisfy { $0 == 0 })
        #expect(abs(left[77] - 0.5) < 1e-4)
    }
}

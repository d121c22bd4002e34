import AulosAudioFile
import AulosCore
import AulosPlayback
import AulosRig
import AulosTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A rig whose parts send to a reverb return renders with the reverb's tail; with its sends at zero it
/// renders like the rig without returns.
@Suite struct ReturnBusRenderTests {
    static let score = "0b tempo 120\n0b note C4 0.5b vel=110\n0.5b note G4 0.5b vel=110\n1b end\n"

    static func rig(sends: Float?) throws -> Rig {
        var text = "name: R\nparts:\n  - name: Lead\n    instrument: synth\n    channels: [1]\n"
        if let sends {
            text += "    sends: {hall: \(sends)}\n"
            text += "returns:\n  - name: hall\n    effects:\n      - unit: reverb\n        preset: Hall\n"
        }
        return try Rig(yaml: text)
    }

    /// Float samples of the score rendered through `rig`, 3 s long.
    static func render(_ rig: Rig) throws -> [Float] {
        var options = PlaybackOptions()
        options.rig = rig
        options.tail = 2.5
        return try renderedSamples(Array(score.utf8), named: "song.score", options)
    }

    static func energy(_ samples: ArraySlice<Float>) -> Double {
        samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    }

    @Test func aSendToAReverbReturnAddsItsTail() throws {
        let dry = try Self.render(Self.rig(sends: nil))
        let wet = try Self.render(Self.rig(sends: 0.5))
        #expect(dry.count == wet.count)
        // The synth's release is over well within a second after the last note (at 1 s): what sounds from
        // 2 s on is the reverb (stereo interleaved: 2 samples a frame at 48 kHz).
        let tail = (2 * 96_000)..<(3 * 96_000)
        let dryTail = Self.energy(dry[tail])
        let wetTail = Self.energy(wet[tail])
        #expect(wetTail > 1e-4 && wetTail > 1000 * max(dryTail, 1e-12), "tail energy dry \(dryTail), wet \(wetTail)")
    }

    @Test func sendsAtZeroRenderLikeNoReturns() throws {
        let dry = try Self.render(Self.rig(sends: nil))
        let zero = try Self.render(Self.rig(sends: 0))
        #expect(dry.count == zero.count)
        let difference = zip(dry, zero).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
        #expect(difference < 1e-6, "largest difference \(difference)")
    }
}

import AulosDSP
import AulosTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The reverberator on its own, sample by sample: its decay time is the one asked for, its channels are
/// decorrelated, and its tail rings down without ever computing with denormal numbers.
@Suite struct FeedbackDelayNetworkTests {
    /// The impulse response (wet) of a network with `settings`, `seconds` long, at 48 kHz.
    static func impulseResponse(_ settings: FeedbackDelayNetwork.Settings, seconds: Double) -> (
        left: [Float], right: [Float]
    ) {
        var network = FeedbackDelayNetwork(sampleRate: 48_000)
        defer { network.deallocate() }
        network.configure(settings, immediately: true)
        var left: [Float] = []
        var right: [Float] = []
        for frame in 0..<Int(seconds * 48_000) {
            let input: Float = frame == 0 ? 1 : 0
            let out = network.process(input, input)
            left.append(out.left)
            right.append(out.right)
        }
        return (left, right)
    }

    @Test(arguments: [0.3, 1, 3, 10])
    func theDecayTimeIsTheOneAskedFor(decay: Double) {
        var settings = FeedbackDelayNetwork.Settings()
        settings.decay = decay
        settings.damping = 1  // a broadband decay: damping shortens only the highs
        settings.preDelay = 0
        let response = Self.impulseResponse(settings, seconds: min(12, decay * 0.75 + 0.5))
        let measured = reverberationTime(zip(response.left, response.right).map { $0 + $1 })
        #expect(abs(measured - decay) / decay < 0.1, "decay \(decay) s measured \(measured) s")
    }

    @Test func dampingShortensTheHighsOnly() {
        var settings = FeedbackDelayNetwork.Settings()
        settings.decay = 2
        settings.damping = 0.25
        let response = Self.impulseResponse(settings, seconds: 2)
        // The low band (a crude two-pole low-pass at about 300 Hz) keeps the full decay time.
        var low: [Float] = []
        var (a, b): (Float, Float) = (0, 0)
        for sample in zip(response.left, response.right).map({ $0 + $1 }) {
            a += 0.04 * (sample - a)
            b += 0.04 * (a - b)
            low.append(b)
        }
        let lowDecay = reverberationTime(low)
        let broadDecay = reverberationTime(zip(response.left, response.right).map { $0 + $1 })
        #expect(abs(lowDecay - 2) / 2 < 0.15, "low band \(lowDecay) s")
        #expect(broadDecay < lowDecay * 0.9, "broadband \(broadDecay) s, low band \(lowDecay) s")
    }

    @Test func leftAndRightAreDecorrelated() {
        var settings = FeedbackDelayNetwork.Settings()
        settings.decay = 2
        let response = Self.impulseResponse(settings, seconds: 1.5)
        let correlation = correlation(response.left, response.right)
        #expect(abs(correlation) < 0.3, "correlation \(correlation)")
    }

    /// The tail falls steadily below −120 dB and no value in the network ever becomes subnormal (what would
    /// make a silent tail cost hundreds of times more to compute on x86).
    @Test func theTailRingsDownWithoutDenormals() {
        var settings = FeedbackDelayNetwork.Settings()
        settings.decay = 1
        var network = FeedbackDelayNetwork(sampleRate: 48_000)
        defer { network.deallocate() }
        network.configure(settings, immediately: true)
        var windows: [Double] = []
        var energy = 0.0
        for frame in 0..<(48_000 * 20) {
            let input: Float = frame < 480 ? Float(sin(Double(frame) * 0.3)) : 0
            let out = network.process(input, input)
            energy += Double(out.left) * Double(out.left) + Double(out.right) * Double(out.right)
            if frame % 4800 == 4799 {
                windows.append(10 * log10(max(energy / 4800, 1e-300)))
                energy = 0
            }
            if frame % 96_000 == 0 { #expect(network.subnormalCount() == 0, "at \(frame / 48_000) s") }
        }
        #expect(network.subnormalCount() == 0)
        let peak = windows.max()!
        let floorAt = windows.firstIndex { $0 < peak - 120 }
        #expect(floorAt != nil, "the tail never fell 120 dB: \(windows.suffix(5))")
        // Monotonic (in 100 ms windows) from the peak until it is 120 dB down.
        let peakAt = windows.firstIndex(of: peak)!
        for index in (peakAt + 1)..<(floorAt ?? windows.count) {
            let (before, now) = (windows[index - 1], windows[index])
            #expect(now < before + 0.5, "window \(index): \(before) → \(now) dB")
        }
    }
}

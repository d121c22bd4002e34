import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Generic Output ← mixer ← callbacks (one per bus, with the given channel counts).
final class MixerRig {
    let graph: AudioGraph
    let mixer: MultichannelMixerUnit
    let signals: UnsafeMutablePointer<Float>
    private(set) var harness: RenderHarness!

    init(buses: [UInt32], signals values: [Float], slice: UInt32 = 512) throws {
        signals = .allocate(capacity: values.count)
        signals.initialize(from: values, count: values.count)
        graph = AudioGraph(registry: BuiltInUnits.registry())
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let node = try graph.addNode(MultichannelMixerUnit.componentDescription)
        graph.open()
        mixer = try graph.unit(for: node) as! MultichannelMixerUnit
        try mixer.set(.elementCount, UInt32(buses.count), scope: .input)
        for (bus, channels) in buses.enumerated() {
            try mixer.set(
                .streamFormat, .canonical(channels: channels, sampleRate: 48_000), scope: .input, element: Element(bus))
            try graph.setNodeInputCallback(
                node, destinationInput: Element(bus), RenderCallbackStruct(signalCallback(), refCon: signals + bus))
        }
        for id in [output, node] { try graph.unit(for: id).set(.maximumFramesPerSlice, slice) }
        try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
        try graph.initialize()
        try graph.start()
        harness = RenderHarness(graph.renderEntry!)
    }

    deinit { signals.deallocate() }

    func render(_ frames: Int, slice: Int = 512) -> ([Float], [Float]) {
        let channels = harness.render(frames, slice: slice)
        return (channels[0], channels[1])
    }
}

@Suite struct MixerTests {
    typealias P = MultichannelMixerUnit.Parameter

    @Test func monoPanLawIsConstantPowerWithCentreAtMinusThreeDecibels() throws {
        let rig = try MixerRig(buses: [1], signals: [1])
        for (pan, left, right) in [(Float(0), Float(0.707_106_8), Float(0.707_106_8)), (-1, 1, 0), (1, 0, 1)] {
            try rig.mixer.setParameter(P.pan, scope: .input, element: 0, value: pan)
            let (l, r) = rig.render(2048)
            #expect(abs(l.last! - left) < 1e-5, "pan \(pan)")
            #expect(abs(r.last! - right) < 1e-5, "pan \(pan)")
            #expect(abs(l.last! * l.last! + r.last! * r.last! - 1) < 1e-5)
        }
        #expect(abs(20 * log10(0.707_106_8) - -3.0103) < 1e-3)
    }

    @Test func stereoBusesBalanceWithUnityCentre() throws {
        let rig = try MixerRig(buses: [2], signals: [0.5])
        let (l, r) = rig.render(1024)
        #expect(abs(l.last! - 0.5) < 1e-6 && abs(r.last! - 0.5) < 1e-6)
        try rig.mixer.setParameter(P.pan, scope: .input, element: 0, value: -1)
        let (l2, r2) = rig.render(2048)
        #expect(abs(l2.last! - 0.5) < 1e-6 && r2.last! == 0)
    }

    @Test func volumeEnableAndOutputVolume() throws {
        let rig = try MixerRig(buses: [1, 1], signals: [0.2, 0.4])
        try rig.mixer.setParameter(P.pan, scope: .input, element: 0, value: -1)
        try rig.mixer.setParameter(P.pan, scope: .input, element: 1, value: -1)
        var (l, _) = rig.render(1024)
        #expect(abs(l.last! - 0.6) < 1e-5)
        try rig.mixer.setParameter(P.volume, scope: .input, element: 1, value: 0.5)
        (l, _) = rig.render(1024)
        #expect(abs(l.last! - 0.4) < 1e-5)
        try rig.mixer.setParameter(P.enable, scope: .input, element: 0, value: 0)
        (l, _) = rig.render(1024)
        #expect(abs(l.last! - 0.2) < 1e-5)
        try rig.mixer.setParameter(P.volume, scope: .output, element: 0, value: 0.25)
        (l, _) = rig.render(1024)
        #expect(abs(l.last! - 0.05) < 1e-5)
        expectError(.invalidScope) { try rig.mixer.setParameter(P.enable, scope: .output, element: 0, value: 0) }
        expectError(.invalidElement) { try rig.mixer.setParameter(P.pan, scope: .input, element: 2, value: 0) }
    }

    /// Toggling enable or jumping volume mid-note never steps the output by more than a sine's own slope
    /// plus the 5 ms ramp.
    @Test func changesWhileRenderingNeverClick() throws {
        let rig = try MixerRig(buses: [1], signals: [-220], slice: 64)
        var output: [Float] = []
        for step in 0..<40 {
            if step % 5 == 0 {
                try rig.mixer.setParameter(P.enable, scope: .input, element: 0, value: step % 10 == 0 ? 0 : 1)
            }
            if step % 7 == 0 {
                try rig.mixer.setParameter(P.volume, scope: .input, element: 0, value: step % 14 == 0 ? 0.1 : 1)
            }
            if step % 3 == 0 {
                try rig.mixer.setParameter(P.pan, scope: .input, element: 0, value: step % 6 == 0 ? -1 : 1)
            }
            output += rig.render(64, slice: 64).0
        }
        let largest = zip(output.dropFirst(), output).map { abs($0 - $1) }.max()!
        let sineSlope = Float(2 * Double.pi * 220 / 48_000)
        #expect(largest < sineSlope + 1.0 / 240 + 0.01)
    }

    @Test func metersReadAFullScaleSineAsMinusThreeDecibels() throws {
        let rig = try MixerRig(buses: [1], signals: [-1000])
        try rig.mixer.set(.meteringMode, 1)
        try rig.mixer.setParameter(P.volume, scope: .input, element: 0, value: 0.5)
        _ = rig.render(96_000)
        let input = try rig.mixer.levels(scope: .input, element: 0)
        #expect(abs(input.preAverage[0] - -3.01) < 0.05)
        #expect(abs(input.prePeak[0]) < 0.01)
        #expect(abs(input.postAverage[0] - (-3.01 - 6.02)) < 0.05)
        let output = try rig.mixer.levels(scope: .output, element: 0)
        // Centre pan: −3.01 dB more per side on the mix.
        #expect(abs(output.postAverage[0] - (-3.01 - 6.02 - 3.01)) < 0.05)
        #expect(
            abs(try rig.mixer.getParameter(P.preAveragePower, scope: .input, element: 0) - input.preAverage[0]) < 1e-6)
        #expect(
            abs(try rig.mixer.getParameter(ParameterID(4001), scope: .output, element: 0) - output.postPeak[1]) < 1e-6)
        expectError(.invalidScope) { _ = try rig.mixer.levels(scope: .global, element: 0) }
    }

    @Test func busFormatsAndCounts() throws {
        let mixer = MultichannelMixerUnit()
        #expect(try mixer.get(.elementCount, scope: .input) == 2)
        try mixer.set(.elementCount, 16, scope: .input)
        #expect(mixer.inputBusCount == 16)
        try mixer.setParameter(P.volume, scope: .input, element: 15, value: 0.3)
        // Output elements are the mix and its sends (MixerSendTests).
        try mixer.set(.elementCount, 3, scope: .output)
        #expect(mixer.sendCount == 2)
        try mixer.set(.elementCount, 1, scope: .output)
        expectError(.formatNotSupported) {
            try mixer.set(.streamFormat, .canonical(channels: 3, sampleRate: 48_000), scope: .input, element: 0)
        }
        expectError(.formatNotSupported) {
            try mixer.set(.streamFormat, .canonical(channels: 1, sampleRate: 48_000), scope: .output)
        }
        try mixer.set(.sampleRate, 44_100, scope: .output)
        #expect(try mixer.get(.streamFormat, scope: .output).channelsPerFrame == 2)
    }

    @Test func mixingAllocatesNothing() throws {
        let rig = try MixerRig(buses: [1, 2, 1], signals: [-440, 0.3, -660], slice: 64)
        try rig.mixer.set(.meteringMode, 1)
        for cycle in 0..<10_000 {
            if cycle % 50 == 0 {
                try rig.mixer.setParameter(P.pan, scope: .input, element: 0, value: Float(cycle % 200) / 100 - 1)
                try rig.mixer.setParameter(P.enable, scope: .input, element: 1, value: Float(cycle / 50 % 2))
                try rig.mixer.scheduleParameters([
                    .ramp(P.volume, scope: .input, element: 2, startOffset: 10, duration: 500, from: 0, to: 1)
                ])
            }
            rig.harness.renderSlice(64, counting: true)
        }
        try expectNoAllocations(rig.harness.allocations)
    }
}

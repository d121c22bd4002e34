import AulosCore
import AulosGraph
import AulosTestSupport
import AulosUnits
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A constant source and how often it was pulled (the sends test checks each input is pulled once a cycle).
struct CountedSource {
    var value: Float
    var pulls: Int
    /// Each channel's value is `value` × its scale (a four-channel side bus with two levels).
    var channelScale: (Float, Float, Float, Float) = (1, 1, 1, 1)
}

/// Generic Output ← master mixer ← (parts mixer outputs: the mix, send 1, send 2) ← constant sources. The
/// master's inputs pick what is heard: the mix, or one send.
final class SendRig {
    let graph: AudioGraph
    let parts: MultichannelMixerUnit
    let master: MultichannelMixerUnit
    let signals: UnsafeMutablePointer<CountedSource>
    private(set) var harness: RenderHarness!

    /// `configure` sets the parts mixer up further before the graph is initialized.
    init(
        signals values: [Float], sends: Int = 2, configure: (MultichannelMixerUnit) throws -> Void = { _ in }
    ) throws {
        signals = .allocate(capacity: values.count)
        signals.initialize(from: values.map { CountedSource(value: $0, pulls: 0) }, count: values.count)
        graph = AudioGraph(registry: BuiltInUnits.registry())
        let output = try graph.addNode(GenericOutputUnit.componentDescription)
        let masterNode = try graph.addNode(MultichannelMixerUnit.componentDescription)
        let partsNode = try graph.addNode(MultichannelMixerUnit.componentDescription)
        graph.open()
        parts = try graph.unit(for: partsNode) as! MultichannelMixerUnit
        master = try graph.unit(for: masterNode) as! MultichannelMixerUnit
        try parts.set(.elementCount, UInt32(values.count), scope: .input)
        try parts.set(.elementCount, UInt32(1 + sends), scope: .output)
        try master.set(.elementCount, UInt32(1 + sends), scope: .input)
        try configure(parts)
        let callback: RenderCallback = { refCon, _, _, _, frames, io in
            let source = refCon!.assumingMemoryBound(to: CountedSource.self)
            source.pointee.pulls += 1
            let scale = source.pointee.channelScale
            for channel in 0..<Int(io.pointee.bufferCount) {
                let factor = channel == 0 ? scale.0 : channel == 1 ? scale.1 : channel == 2 ? scale.2 : scale.3
                io.pointee.floatChannel(channel).update(repeating: source.pointee.value * factor, count: Int(frames))
            }
            return 0
        }
        for bus in 0..<values.count {
            try graph.setNodeInputCallback(
                partsNode, destinationInput: Element(bus), RenderCallbackStruct(callback, refCon: signals + bus))
        }
        for output in 0...sends {
            try graph.connectNodeInput(
                partsNode, sourceOutput: Element(output), masterNode, destinationInput: Element(output))
        }
        try graph.connectNodeInput(masterNode, sourceOutput: 0, output, destinationInput: 0)
        try graph.initialize()
        try graph.start()
        harness = RenderHarness(graph.renderEntry!)
    }

    deinit { signals.deallocate() }

    /// Sets input 1's four channel values (a side bus).
    func setSide(_ values: (Float, Float, Float, Float)) {
        signals[1].value = 1
        signals[1].channelScale = values
    }

    /// Pulls of every source so far.
    var pulls: Int { (0..<parts.inputBusCount).reduce(0) { $0 + signals[$1].pulls } }

    /// Hears only master input `heard` (0: the mix, k: send k).
    func listen(to heard: Int) throws {
        for input in 0..<master.inputBusCount {
            try master.setParameter(
                MultichannelMixerUnit.Parameter.enable, scope: .input, element: Element(input),
                value: input == heard ? 1 : 0)
        }
    }

    func level(after frames: Int = 4096) -> (Float, Float) {
        let channels = harness.render(frames, slice: 256)
        return (channels[0].last!, channels[1].last!)
    }
}

@Suite struct MixerSendTests {
    typealias P = MultichannelMixerUnit.Parameter

    @Test func sendsCarryTheInputAfterOrBeforeTheFader() throws {
        let rig = try SendRig(signals: [0.5, 0.25])
        // Input 0: fader 0.5, send 1 at 0.4 (post-fader), send 2 at 0.8 pre-fader; input 1 sends 1.0 to send 2.
        try rig.parts.setParameter(P.volume, scope: .input, element: 0, value: 0.5)
        try rig.parts.setParameter(P.sendLevel(0), scope: .input, element: 0, value: 0.4)
        try rig.parts.setParameter(P.sendLevel(1), scope: .input, element: 0, value: 0.8)
        try rig.parts.setParameter(P.sendPreFader(1), scope: .input, element: 0, value: 1)
        try rig.parts.setParameter(P.sendLevel(1), scope: .input, element: 1, value: 1)
        // Stereo sources at centre pass unchanged (the balance law), so the numbers are plain products.
        try rig.listen(to: 0)
        var (left, right) = rig.level()
        #expect(abs(left - (0.5 * 0.5 + 0.25)) < 1e-5 && abs(right - left) < 1e-6)
        try rig.listen(to: 1)
        (left, _) = rig.level()
        #expect(abs(left - 0.5 * 0.5 * 0.4) < 1e-5, "send 1: \(left)")
        try rig.listen(to: 2)
        (left, _) = rig.level()
        #expect(abs(left - (0.5 * 0.8 + 0.25)) < 1e-5, "send 2: \(left)")
        // A disabled input sends nothing, before or after its fader.
        try rig.parts.setParameter(P.enable, scope: .input, element: 0, value: 0)
        (left, _) = rig.level()
        #expect(abs(left - 0.25) < 1e-5, "send 2 with input 0 off: \(left)")
    }

    /// Three outputs pulled, each input rendered once per cycle: the mix and the sends are computed together.
    @Test func everyInputIsPulledOncePerCycle() throws {
        let rig = try SendRig(signals: [0.5, 0.25])
        _ = rig.level(after: 256)
        let before = rig.pulls
        _ = rig.level(after: 256 * 10)
        #expect(rig.pulls - before == 2 * 10)
    }

    @Test func sendsAreMetered() throws {
        let rig = try SendRig(signals: [0.5])
        try rig.parts.set(.meteringMode, UInt32(1))
        try rig.parts.setParameter(P.sendLevel(0), scope: .input, element: 0, value: 0.5)
        _ = rig.level(after: 48_000)
        let send = try rig.parts.levels(scope: .output, element: 1)
        let silent = try rig.parts.levels(scope: .output, element: 2)
        #expect(abs(send.postPeak[0] - 20 * log10(0.25)) < 0.1, "\(send)")
        #expect(silent.postPeak[0] == -120)
    }

    @Test func aSendLevelChangeGlides() throws {
        let rig = try SendRig(signals: [1])
        try rig.listen(to: 1)
        _ = rig.level()
        try rig.parts.setParameter(P.sendLevel(0), scope: .input, element: 0, value: 1)
        let channels = rig.harness.render(1024, slice: 256)
        let steps = zip(channels[0], channels[0].dropFirst()).map { abs($1 - $0) }
        #expect(steps.max()! < 0.01, "largest step \(steps.max()!)")
        #expect(abs(channels[0].last! - 1) < 1e-5)
    }

    @Test func moreThanEightSendsIsAnError() throws {
        let mixer = MultichannelMixerUnit()
        try mixer.set(.elementCount, UInt32(10), scope: .output)
        expectError(.invalidPropertyValue) { try mixer.initialize() }
    }

    @Test func mixingWithSendsAllocatesNothing() throws {
        let rig = try SendRig(signals: [0.5, 0.25, 0.1])
        for cycle in 0..<10_000 {
            if cycle % 20 == 0 {
                try rig.parts.setParameter(
                    P.sendLevel(cycle / 20 % 2), scope: .input, element: 0, value: Float(cycle % 100) / 100)
                try rig.parts.setParameter(P.volume, scope: .input, element: 1, value: Float(cycle % 7) / 7)
            }
            rig.harness.renderSlice(64, counting: true)
        }
        try expectNoAllocations(rig.harness.allocations)
    }
}

/// Side buses: an input's sends taken from another input's channel pairs (an instrument's CC 91/93 output).
@Suite struct MixerSideBusTests {
    typealias P = MultichannelMixerUnit.Parameter

    /// Parts mixer inputs: 0 a stereo source at 1.0, 1 its four-channel side bus (0.5, 0.5, 0.25, 0.25).
    static func rig() throws -> SendRig {
        try SendRig(signals: [1, 0.5]) { parts in
            try parts.set(
                .streamFormat, StreamFormat.canonical(channels: 4, sampleRate: 48_000), scope: .input, element: 1)
            try parts.setSendSource(0, of: 0, side: 1, pair: 0)
            try parts.setSendSource(1, of: 0, side: 1, pair: 1)
        }
    }

    @Test func sendsComeFromTheSideBusWithTheMainInputsFader() throws {
        let rig = try Self.rig()
        rig.setSide((0.5, 0.5, 0.25, 0.25))
        try rig.parts.setParameter(P.volume, scope: .input, element: 0, value: 0.5)
        try rig.parts.setParameter(P.sendLevel(0), scope: .input, element: 0, value: 1)
        try rig.parts.setParameter(P.sendLevel(1), scope: .input, element: 0, value: 0.8)
        try rig.listen(to: 0)
        var (left, _) = rig.level()
        #expect(abs(left - 0.5) < 1e-5, "the mix: input 0 at its fader, the side bus not mixed: \(left)")
        try rig.listen(to: 1)
        (left, _) = rig.level()
        #expect(abs(left - 0.5 * 0.5) < 1e-5, "send 1: the side's first pair × fader: \(left)")
        try rig.listen(to: 2)
        (left, _) = rig.level()
        #expect(abs(left - 0.25 * 0.5 * 0.8) < 1e-5, "send 2: the side's second pair × fader × level: \(left)")
        try rig.parts.setParameter(P.enable, scope: .input, element: 0, value: 0)
        (left, _) = rig.level()
        #expect(left == 0, "muting the part mutes what its channels send")
    }

    @Test func aSideBusServesOneInputOnly() throws {
        let mixer = MultichannelMixerUnit(inputs: 3)
        try mixer.set(.elementCount, UInt32(2), scope: .output)
        try mixer.setSendSource(0, of: 0, side: 2, pair: 0)
        try mixer.setSendSource(0, of: 1, side: 2, pair: 0)
        expectError(.invalidPropertyValue) { try mixer.initialize() }
        expectError(.invalidElement) { try MultichannelMixerUnit(inputs: 2).setSendSource(0, of: 0, side: 5, pair: 0) }
    }

    @Test func sideBusSendsAllocateNothing() throws {
        let rig = try Self.rig()
        rig.setSide((0.5, 0.5, 0.25, 0.25))
        for cycle in 0..<10_000 {
            if cycle % 20 == 0 {
                try rig.parts.setParameter(P.sendLevel(cycle / 20 % 2), scope: .input, element: 0, value: 0.5)
            }
            rig.harness.renderSlice(64, counting: true)
        }
        try expectNoAllocations(rig.harness.allocations)
    }
}

import AulosCore
import AulosDSP
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Aulos's Multichannel Mixer (`aumx/mcmx/Auls`; Core Audio's `aumx/mcmx/appl` finds it): any number of mono or stereo
/// input buses (ElementCount on the input scope), one stereo output. Per input: Enable, Volume and Pan; on the output:
/// Volume. Every change is smoothed (volume and pan glide over 5 ms, enable ramps over 5 ms), so nothing clicks. With
/// MeteringMode on, peak and average levels per channel, before and after the fader, are readable at any time (Core
/// Audio's read-only parameters 1000/2000/3000/4000, +1 for the right channel).
///
/// Sends: with more than one output element (ElementCount on the output scope, 1 + up to `maximumSends`), output
/// k ≥ 1 is aux send k: every input adds its panned signal × Send Level k, after its fader or, with Send k
/// Pre-fader on, before it (enable applies to both). Send levels glide like the faders. A return effect chain
/// pulls a send output; the mix and every send are computed once per render cycle, whichever output is pulled
/// first, and metered (`levels(scope: .output, element: k)`). With one output the mixer works as it always did.
///
/// Side buses: an instrument that weighs each MIDI channel's signal by its CC 91/93 has a second, four-channel
/// output (`ChannelEffectSends`); connected to an input marked as another input's side bus
/// (`setSendSource`), it is not mixed itself but feeds that input's sends in place of its main signal — one
/// channel pair per send — with the main input's fader, pan and enable, so turning a part down turns its
/// reverb down with it.
///
/// Pan law: a mono bus is placed with constant power, θ = (pan + 1)·π/4, left = cos θ, right = sin θ
/// (centre −3.01 dB per side; hard left silences the right). A stereo bus is balanced with the same curve
/// scaled by √2 and capped at unity (centre passes unchanged; hard left keeps the left and drops the right).
///
/// Threads: control side as for every unit; `MixerKernel` runs on the render thread.
public final class MultichannelMixerUnit: AudioUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(
        type: .mixer, subtype: .multiChannelMixer, manufacturer: .aulos)
    /// Core Audio's description of the unit this reimplements: it finds this one too.
    public static let coreAudioAlias = ComponentDescription(
        type: .mixer, subtype: .multiChannelMixer, manufacturer: .apple)

    public enum Parameter {
        public static let volume = ParameterID(0)
        public static let enable = ParameterID(1)
        public static let pan = ParameterID(2)
        // Read-only meters (dB), left channel; the right channel is the ID + 1.
        public static let preAveragePower = ParameterID(1000)
        public static let prePeakHoldLevel = ParameterID(2000)
        public static let postAveragePower = ParameterID(3000)
        public static let postPeakHoldLevel = ParameterID(4000)
        /// Send level to send output k + 1 (input scope), linear gain 0…1.
        public static func sendLevel(_ send: Int) -> ParameterID { ParameterID(100 + UInt32(send)) }
        /// Whether send k + 1 takes the signal before the fader (input scope).
        public static func sendPreFader(_ send: Int) -> ParameterID { ParameterID(200 + UInt32(send)) }
    }

    /// The most sends a mixer has (output elements 1…8).
    public static let maximumSends = 8

    /// The number of sends: output elements after the first.
    public var sendCount: Int { outputBusCount - 1 }

    /// Sends taken from a side bus: (input, send) → (side input, channel pair). Set before initialize.
    private var sendSources: [SendKey: (side: Int, pair: Int)] = [:]
    private struct SendKey: Hashable {
        var bus: Int
        var send: Int
    }

    /// Makes input `bus`'s send `send` take channel pair `pair` (0: channels 1–2, 1: channels 3–4) of input
    /// `side`, a side bus, instead of `bus`'s own signal. The side bus is then not mixed itself. Before
    /// initialize.
    public func setSendSource(_ send: Int, of bus: Element, side: Element, pair: Int) throws(AudioUnitError) {
        guard !isInitialized else {
            throw AudioUnitError(.cannotDoInCurrentContext, "\(name): send sources are set before initialize")
        }
        guard Int(bus) < inputBusCount, Int(side) < inputBusCount, bus != side else {
            throw AudioUnitError(.invalidElement, "\(name): no inputs \(bus) and \(side) to take a send from")
        }
        guard (0..<Self.maximumSends).contains(send), (0...1).contains(pair) else {
            throw AudioUnitError(.invalidPropertyValue, "\(name): send \(send), pair \(pair) out of range")
        }
        sendSources[SendKey(bus: Int(bus), send: send)] = (Int(side), pair)
    }

    /// Linear levels written by the render thread: per bus (inputs, then the output) × pre/post ×
    /// peak/mean-square × 2 channels.
    private let meters: UnsafeMutablePointer<Atomic<UInt32>>
    private let meterCapacity = (1024 + 1 + MultichannelMixerUnit.maximumSends) * 8
    private let metering = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: 1)

    public init(inputs: Int = 2) {
        meters = .allocate(capacity: meterCapacity)
        for index in 0..<meterCapacity { (meters + index).initialize(to: Atomic(0)) }
        metering.initialize(to: Atomic(0))
        super.init(
            description: Self.componentDescription, aliases: [Self.coreAudioAlias], name: "Aulos: Multichannel Mixer",
            inputs: inputs, outputs: 1,
            parameters: [
                ParameterInfo(
                    id: Parameter.volume, name: "Volume", unit: .linearGain, range: 0...2, defaultValue: 1,
                    scope: .input),
                ParameterInfo(
                    id: Parameter.enable, name: "Enable", unit: .boolean, range: 0...1, defaultValue: 1, scope: .input),
                ParameterInfo(
                    id: Parameter.pan, name: "Pan", unit: .pan, range: -1...1, defaultValue: 0, scope: .input),
                ParameterInfo(
                    id: Parameter.volume, name: "Output Volume", unit: .linearGain, range: 0...2, defaultValue: 1,
                    scope: .output),
            ]
                + (0..<Self.maximumSends).flatMap { send in
                    [
                        ParameterInfo(
                            id: Parameter.sendLevel(send), name: "Send \(send + 1) Level", unit: .linearGain,
                            range: 0...1, defaultValue: 0, scope: .input),
                        ParameterInfo(
                            id: Parameter.sendPreFader(send), name: "Send \(send + 1) Pre-fader", unit: .boolean,
                            range: 0...1, defaultValue: 0, scope: .input),
                    ]
                })
    }

    deinit {
        meters.deinitialize(count: meterCapacity)
        meters.deallocate()
        metering.deinitialize(count: 1)
        metering.deallocate()
    }

    public override func canChangeElementCount(_ scope: Scope) -> Bool { scope == .input || scope == .output }

    /// Inputs may be mono or stereo (or four channels: a side bus of effect sends); the output is stereo. All
    /// Float32 non-interleaved.
    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        try super.validateFormat(format, scope: scope, element: element)
        if scope == .input && ![1, 2, 4].contains(format.channelsPerFrame) {
            throw AudioUnitError(
                .formatNotSupported,
                "\(name) input \(element) must be mono or stereo (or a four-channel side bus), not "
                    + "\(format.channelsPerFrame) channels")
        }
        if scope == .output && format.channelsPerFrame != 2 {
            throw AudioUnitError(
                .formatNotSupported, "\(name) output is stereo, not \(format.channelsPerFrame) channels")
        }
    }

    // MARK: State

    public override var stateProperties: [String: String] {
        super.stateProperties.merging([
            "inputs": String(inputBusCount), "outputs": String(outputBusCount),
            "metering": String(metering.pointee.load(ordering: .relaxed)),
        ]) { $1 }
    }

    public override func restoreStateProperties(_ properties: [String: String]) throws(AudioUnitError) {
        try super.restoreStateProperties(properties)
        if let text = properties["inputs"], let count = UInt32(text), Int(count) != inputBusCount {
            try set(.elementCount, count, scope: .input)
        }
        if let text = properties["outputs"], let count = UInt32(text), Int(count) != outputBusCount {
            try set(.elementCount, count, scope: .output)
        }
        if let text = properties["metering"], let flag = UInt32(text) { try set(.meteringMode, flag) }
    }

    // MARK: Metering

    public override func customPropertyInfo(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> PropertyInfo?
    {
        guard id == .meteringMode else { return nil }
        try requireScope(id, scope, element, [.global])
        return PropertyInfo(dataSize: 4, isWritable: true, isWritableWhileInitialized: true)
    }

    public override func customGetProperty(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> Any?
    {
        id == .meteringMode ? metering.pointee.load(ordering: .relaxed) : nil
    }

    public override func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any)
        throws(AudioUnitError) -> Bool
    {
        guard id == .meteringMode else { return false }
        guard let flag = value as? UInt32, flag <= 1 else {
            throw AudioUnitError(.invalidPropertyValue, "MeteringMode takes 0 or 1")
        }
        metering.pointee.store(flag, ordering: .relaxed)
        return true
    }

    /// Levels of one bus in dBFS (−120 for silence): input buses on the input scope, the mix on the output.
    public struct Levels: Equatable, Sendable {
        public var prePeak: [Float]
        public var preAverage: [Float]
        public var postPeak: [Float]
        public var postAverage: [Float]
    }

    public func levels(scope: Scope, element: Element) throws(AudioUnitError) -> Levels {
        let bus = try meterBus(scope: scope, element: element)
        func decibels(_ index: Int, power: Bool) -> Float {
            let value = Float(bitPattern: meters[index].load(ordering: .relaxed))
            guard value > 1e-12 else { return -120 }
            return power ? 10 * log10(value) : 20 * log10(value)
        }
        let base = bus * 8
        return Levels(
            prePeak: [decibels(base, power: false), decibels(base + 1, power: false)],
            preAverage: [decibels(base + 2, power: true), decibels(base + 3, power: true)],
            postPeak: [decibels(base + 4, power: false), decibels(base + 5, power: false)],
            postAverage: [decibels(base + 6, power: true), decibels(base + 7, power: true)])
    }

    private func meterBus(scope: Scope, element: Element) throws(AudioUnitError) -> Int {
        switch scope {
        case .input where Int(element) < inputBusCount: return Int(element)
        case .output where Int(element) < outputBusCount: return inputBusCount + Int(element)
        case .global: throw AudioUnitError(.invalidScope, "mixer meters are on the input and output scopes")
        default: throw AudioUnitError(.invalidElement, "\(name) has no \(scope) element \(element)")
        }
    }

    public override func readOnlyParameter(_ id: ParameterID, scope: Scope, element: Element) throws(AudioUnitError)
        -> Float?
    {
        let channel = Int(id.rawValue % 1000)
        guard (1000...4001).contains(id.rawValue), channel <= 1 else { return nil }
        let levels = try levels(scope: scope, element: element)
        switch id.rawValue / 1000 {
        case 1: return levels.preAverage[channel]
        case 2: return levels.prePeak[channel]
        case 3: return levels.postAverage[channel]
        default: return levels.postPeak[channel]
        }
    }

    // MARK: Kernel

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let count = inputBusCount
        guard count <= 1024 else { throw AudioUnitError(.invalidPropertyValue, "at most 1024 mixer inputs") }
        let sends = sendCount
        guard sends <= Self.maximumSends else {
            throw AudioUnitError(
                .invalidPropertyValue, "\(name) has at most \(Self.maximumSends) sends (outputs 1…8), not \(sends)")
        }
        // Everything that can fail is worked out in arrays first, so a failure leaks nothing; then copied into
        // the kernel's memory.
        // Slots: volume, enable, pan per input; the output volume; then per input a level and a pre-fader flag
        // for each send.
        var slotValues = [Int](repeating: 0, count: 3 * count + 1 + 2 * count * sends)
        for bus in 0..<count {
            slotValues[bus] = try parameters.slot(Parameter.volume, scope: .input, element: Element(bus))
            slotValues[count + bus] = try parameters.slot(Parameter.enable, scope: .input, element: Element(bus))
            slotValues[2 * count + bus] = try parameters.slot(Parameter.pan, scope: .input, element: Element(bus))
        }
        slotValues[3 * count] = try parameters.slot(Parameter.volume, scope: .output, element: 0)
        for bus in 0..<count {
            for send in 0..<sends {
                let base = 3 * count + 1 + 2 * (bus * sends + send)
                slotValues[base] = try parameters.slot(
                    Parameter.sendLevel(send), scope: .input, element: Element(bus))
                slotValues[base + 1] = try parameters.slot(
                    Parameter.sendPreFader(send), scope: .input, element: Element(bus))
            }
        }
        // Side buses: each input's side bus (−1: none), whether an input is one, and per (input, send) the
        // side bus's channel pair the send takes (−1: the input's own signal).
        var routingValues = [Int](repeating: -1, count: 2 * count + count * max(1, sends))
        for bus in 0..<count { routingValues[count + bus] = 0 }
        for (key, source) in sendSources where key.bus < count && source.side < count && key.send < sends {
            let owners = Set(sendSources.filter { $0.value.side == source.side }.map(\.key.bus))
            guard owners.count == 1, sendSources[SendKey(bus: source.side, send: key.send)] == nil,
                !sendSources.values.contains(where: { $0.side == key.bus }),
                routingValues[key.bus] == -1 || routingValues[key.bus] == source.side
            else {
                throw AudioUnitError(
                    .invalidPropertyValue, "\(name): input \(source.side) may be the side bus of one input only")
            }
            guard inputFormat(source.side).channelsPerFrame >= UInt32(2 * source.pair + 2) else {
                throw AudioUnitError(
                    .formatNotSupported, "\(name): side bus \(source.side) has no channel pair \(source.pair + 1)")
            }
            routingValues[key.bus] = source.side
            routingValues[count + source.side] = 1
            routingValues[2 * count + key.bus * sends + key.send] = source.pair
        }
        let slots = UnsafeMutablePointer<Int>.allocate(capacity: max(1, slotValues.count))
        slots.initialize(from: slotValues, count: slotValues.count)
        let routing = UnsafeMutablePointer<Int>.allocate(capacity: max(1, routingValues.count))
        routing.initialize(from: routingValues, count: routingValues.count)
        let sideSources = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2 * Self.maximumSends)
        sideSources.initialize(repeating: nil, count: 2 * Self.maximumSends)
        let channels = UnsafeMutablePointer<Int>.allocate(capacity: count)
        var storages: [AudioBufferListStorage] = []
        let lists = UnsafeMutablePointer<UnsafeMutablePointer<AudioBufferList>>.allocate(capacity: count)
        for bus in 0..<count {
            let format = inputFormat(bus)
            channels[bus] = Int(format.channelsPerFrame)
            let storage = AudioBufferListStorage(format: format, maximumFrames: maximumFramesPerSlice)
            storages.append(storage)
            lists[bus] = storage.list
        }
        for storage in storages { retainForKernel(storage) }
        let state = UnsafeMutablePointer<MixerBusState>.allocate(capacity: count + 1 + sends)
        state.initialize(repeating: MixerBusState(), count: count + 1 + sends)
        // With sends: the mix and each send are computed into these (two channels each), then copied out.
        let frames = Int(maximumFramesPerSlice)
        let mixes = UnsafeMutablePointer<Float>.allocate(capacity: sends == 0 ? 1 : 2 * (1 + sends) * frames)
        let sendCycle = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        sendCycle.initialize(to: .max)
        let rate = outputFormat(0).sampleRate
        let kernel = MixerKernel(
            parameters: renderParameters, busCount: count, sendCount: sends, slots: slots, routing: routing,
            sideSources: sideSources, channels: channels, inputs: lists, state: state, meters: meters,
            metering: metering, mixes: mixes,
            mixFrames: frames,
            computedCycle: sendCycle, rampStep: Float(1 / (0.005 * rate)),
            peakDecay: Float(FastMath.exp(-1 / (1.5 * rate))),
            averageCoefficient: Float(1 - FastMath.exp(-1 / (0.3 * rate))))
        return UnitKernel.make(kernel, render: MixerKernel.render) { kernel in
            kernel.slots.deallocate()
            kernel.routing.deallocate()
            kernel.sideSources.deallocate()
            kernel.channels.deallocate()
            kernel.inputs.deallocate()
            kernel.state.deallocate()
            kernel.mixes.deallocate()
            kernel.computedCycle.deallocate()
        }
    }
}

/// Per-bus render state: enable ramp, cached pan gains, meter integrators.
struct MixerBusState: BitwiseCopyable {
    var enableGain: Float = -1  // −1: not yet set (jump to the first value instead of ramping)
    var lastPan: Float = .nan
    var panLeft: Float = 0
    var panRight: Float = 0
    var prePeak: (Float, Float) = (0, 0)
    var preSquare: (Float, Float) = (0, 0)
    var postPeak: (Float, Float) = (0, 0)
    var postSquare: (Float, Float) = (0, 0)
    /// This slice's input was flagged silent.
    var inputSilent = false

    /// One step of the enable ramp toward `target` (0 or 1).
    @inline(__always) @_noAllocation @_noLocks
    mutating func rampEnable(toward target: Float, by step: Float) {
        enableGain = target > enableGain ? min(target, enableGain + step) : max(target, enableGain - step)
    }

    /// Caches the pan gains for `pan` (see the pan law on `MultichannelMixerUnit`).
    @inline(__always) @_noAllocation @_noLocks
    mutating func setPan(_ pan: Float, stereo: Bool) {
        lastPan = pan
        let angle = Double(pan + 1) / 8  // θ/2π with θ = (pan + 1)·π/4
        let cosine = Float(FastMath.sine(angle + 0.25))
        let sine = Float(FastMath.sine(angle))
        panLeft = stereo ? min(1, cosine * 1.414_213_5) : cosine
        panRight = stereo ? min(1, sine * 1.414_213_5) : sine
    }
}

/// Render side of the mixer.
///
/// Threads: render thread only. Holds no class references.
struct MixerKernel {
    let parameters: ParameterKernel
    let busCount: Int
    /// Sends: output elements after the first.
    let sendCount: Int
    let slots: UnsafeMutablePointer<Int>
    /// [busCount] each input's side bus or −1; [busCount] 1 where an input is a side bus (not mixed);
    /// [busCount × sendCount] the side bus's channel pair each send takes, or −1 for the input's own signal.
    let routing: UnsafeMutablePointer<Int>
    /// Scratch: the side-bus channels each send of the input being mixed takes (left, right), or nil.
    let sideSources: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    let channels: UnsafeMutablePointer<Int>
    let inputs: UnsafeMutablePointer<UnsafeMutablePointer<AudioBufferList>>
    let state: UnsafeMutablePointer<MixerBusState>
    let meters: UnsafeMutablePointer<Atomic<UInt32>>
    let metering: UnsafeMutablePointer<Atomic<UInt32>>
    /// When there are sends, the mix and the sends (left then right, `mixFrames` each) computed once per
    /// cycle (`computedCycle`).
    let mixes: UnsafeMutablePointer<Float>
    let mixFrames: Int
    let computedCycle: UnsafeMutablePointer<UInt64>
    let rampStep: Float
    let peakDecay: Float
    let averageCoefficient: Float

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, bus, frameCount, io in
        state.assumingMemoryBound(to: MixerKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, bus: bus, frameCount: Int(frameCount), io: io)
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, bus: UInt32,
        frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        // Without sends the mix is made straight into the caller's buffers, as it always was.
        guard sendCount > 0 else {
            return mixAll(
                inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: frameCount,
                left: io.pointee.floatChannel(0), right: io.pointee.floatChannel(1), outputMeters: io)
        }
        // With sends: everything once per cycle, whichever output is pulled first; then this output's copy.
        let cycle = RenderInputs.cycle(inputs)
        if computedCycle.pointee != cycle {
            computedCycle.pointee = cycle
            var mixFlags = RenderActionFlags(rawValue: 0)
            let status = mixAll(
                inputs: inputs, flags: &mixFlags, timeStamp: timeStamp, frameCount: frameCount,
                left: mixes, right: mixes + mixFrames, outputMeters: nil)
            if status != 0 { return status }
            // The output bus's own "input silent" field holds whether the whole mix was silent this cycle.
            state[busCount].inputSilent = mixFlags.contains(.outputIsSilence)
        }
        let source = mixes + 2 * Int(bus) * mixFrames
        io.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
        let outLeft = io.pointee.floatChannel(0)
        let outRight = io.pointee.floatChannel(1)
        for index in 0..<frameCount {
            outLeft[index] = source[index]
            outRight[index] = source[mixFrames + index]
        }
        if state[busCount].inputSilent { flags.pointee.insert(.outputIsSilence) }
        return 0
    }

    /// Pulls every input and mixes them into `left`/`right` (and, with sends, each send into `mixes`),
    /// applying the output fader to the mix; meters when metering is on (`outputMeters`: the buffer list to
    /// meter as the output, nil to meter `left`/`right` and the sends).
    @_noAllocation @_noLocks
    func mixAll(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: Int, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>, outputMeters: UnsafeMutablePointer<AudioBufferList>?
    ) -> AulosStatus {
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
        for send in 0..<sendCount {
            let base = mixes + 2 * (1 + send) * mixFrames
            base.update(repeating: 0, count: frameCount)
            (base + mixFrames).update(repeating: 0, count: frameCount)
        }
        let metered = metering.pointee.load(ordering: .relaxed) == 1
        parameters.beginSlice()
        // Pull every input first (each into its own buffer), then mix in segments split at parameter events.
        var anySound = false
        for bus in 0..<busCount {
            let list = self.inputs[bus]
            list.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
            var busFlags = RenderActionFlags(rawValue: 0)
            let status = RenderInputs.pull(
                inputs, bus: UInt32(bus), flags: &busFlags, timeStamp: timeStamp,
                frameCount: UInt32(frameCount), into: list)
            if status != 0 && status != RenderStatus.noConnection { return status }
            if !busFlags.contains(.outputIsSilence) { anySound = true }
            state[bus].inputSilent = busFlags.contains(.outputIsSilence)
            if metered { meter(bus, list: list, channels: channels[bus], frameCount: frameCount, pre: true) }
        }
        var frame = 0
        while frame < frameCount {
            parameters.applyEvents(dueAt: frame)
            let end = parameters.nextEventOffset(after: frame, frameCount: frameCount)
            for bus in 0..<busCount where routing[busCount + bus] == 0 {
                if sendCount == 0 {
                    mix(bus, from: frame, to: end, left: left, right: right)
                } else {
                    mixWithSends(bus, from: frame, to: end, left: left, right: right)
                }
            }
            // The output fader, metering the mix before it.
            let outputSlot = slots[3 * busCount]
            var s = state[busCount]
            for index in frame..<end {
                let x = left[index]
                let y = right[index]
                if metered {
                    s.prePeak.0 = max(abs(x), s.prePeak.0 * peakDecay)
                    s.prePeak.1 = max(abs(y), s.prePeak.1 * peakDecay)
                    s.preSquare.0 += (x * x - s.preSquare.0) * averageCoefficient
                    s.preSquare.1 += (y * y - s.preSquare.1) * averageCoefficient
                }
                let gain = parameters.next(outputSlot)
                left[index] = x * gain
                right[index] = y * gain
            }
            state[busCount] = s
            frame = end
        }
        parameters.endSlice(frameCount: frameCount)
        if metered {
            publish(busCount, offset: 0, peak: state[busCount].prePeak, square: state[busCount].preSquare)
            if let outputMeters {
                meter(busCount, list: outputMeters, channels: 2, frameCount: frameCount, pre: false)
            } else {
                meter(busCount, left: left, right: right, frameCount: frameCount, pre: false)
                for send in 0..<sendCount {
                    let base = mixes + 2 * (1 + send) * mixFrames
                    meter(busCount + 1 + send, left: base, right: base + mixFrames, frameCount: frameCount, pre: false)
                }
            }
        }
        if !anySound { flags.pointee.insert(.outputIsSilence) }
        return 0
    }

    /// Adds frames [from, to) of one input bus to the mix with its enable ramp, volume and pan.
    @_noAllocation @_noLocks
    func mix(_ bus: Int, from: Int, to: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        let list = inputs[bus]
        let stereo = channels[bus] == 2
        let inLeft = list.pointee.floatChannel(0)
        let inRight = stereo ? list.pointee.floatChannel(1) : inLeft
        let volumeSlot = slots[bus]
        let panSlot = slots[2 * busCount + bus]
        let target: Float = parameters.value(slots[busCount + bus]) >= 0.5 ? 1 : 0
        var s = state[bus]
        if s.enableGain < 0 { s.enableGain = target }
        // A silent bus with its faders at rest and its meters fallen to zero adds nothing and changes no
        // state: skip it (what keeps a rig of many idle parts cheap).
        if s.inputSilent && s.enableGain == target && parameters.isSteady(volumeSlot) && parameters.isSteady(panSlot)
            && s.postPeak == (0, 0) && s.postSquare == (0, 0)
        {
            state[bus] = s
            return
        }
        var postPeak = s.postPeak
        var postSquare = s.postSquare
        for index in from..<to {
            let volume = parameters.next(volumeSlot)
            let pan = parameters.next(panSlot)
            if pan != s.lastPan { s.setPan(pan, stereo: stereo) }
            if s.enableGain != target { s.rampEnable(toward: target, by: rampStep) }
            let gain = volume * s.enableGain
            let a = inLeft[index] * gain
            let b = inRight[index] * gain
            left[index] += a * s.panLeft
            right[index] += b * s.panRight
            meterStep(&postPeak, &postSquare, a, b)
        }
        finishPost(bus, &s, postPeak, postSquare)
    }

    /// One sample into a bus's post-fader meters: the peak with its decay, the mean square.
    @inline(__always) @_noAllocation @_noLocks
    func meterStep(_ peak: inout (Float, Float), _ square: inout (Float, Float), _ a: Float, _ b: Float) {
        peak.0 = max(abs(a), peak.0 * peakDecay)
        peak.1 = max(abs(b), peak.1 * peakDecay)
        square.0 += (a * a - square.0) * averageCoefficient
        square.1 += (b * b - square.1) * averageCoefficient
    }

    /// Stores a bus's state and post-fader meters after a segment and publishes them. Meters that have
    /// fallen below −240 dB are zero (and let a silent bus be skipped).
    @_noAllocation @_noLocks
    func finishPost(_ bus: Int, _ s: inout MixerBusState, _ peak: (Float, Float), _ square: (Float, Float)) {
        var (peak, square) = (peak, square)
        if peak.0 < 1e-12 && peak.1 < 1e-12 && square.0 < 1e-24 && square.1 < 1e-24 {
            peak = (0, 0)
            square = (0, 0)
        }
        s.postPeak = peak
        s.postSquare = square
        state[bus] = s
        publish(bus, offset: 4, peak: peak, square: square)
    }

    /// Adds frames [from, to) of one input bus to the mix and to every send: the send takes the panned signal
    /// after the fader, or before it when its pre-fader flag is on; enable applies to both.
    @_noAllocation @_noLocks
    func mixWithSends(
        _ bus: Int, from: Int, to: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    ) {
        let list = inputs[bus]
        let stereo = channels[bus] == 2
        let inLeft = list.pointee.floatChannel(0)
        let inRight = stereo ? list.pointee.floatChannel(1) : inLeft
        let volumeSlot = slots[bus]
        let panSlot = slots[2 * busCount + bus]
        let sendSlots = slots + 3 * busCount + 1 + 2 * bus * sendCount
        let target: Float = parameters.value(slots[busCount + bus]) >= 0.5 ? 1 : 0
        var s = state[bus]
        if s.enableGain < 0 { s.enableGain = target }
        var postPeak = s.postPeak
        var postSquare = s.postSquare
        // Each send's side-bus channels (nil: the send takes this input's own panned signal), looked up once.
        let side = routing[bus]
        let pairs = routing + 2 * busCount + bus * sendCount
        for send in 0..<sendCount {
            let pair = pairs[send]
            let sideList = side >= 0 && pair >= 0 ? inputs[side] : nil
            sideSources[2 * send] = sideList?.pointee.floatChannel(2 * pair)
            sideSources[2 * send + 1] = sideList?.pointee.floatChannel(2 * pair + 1)
        }
        for index in from..<to {
            let volume = parameters.next(volumeSlot)
            let pan = parameters.next(panSlot)
            if pan != s.lastPan { s.setPan(pan, stereo: stereo) }
            if s.enableGain != target { s.rampEnable(toward: target, by: rampStep) }
            let pannedLeft = inLeft[index] * s.enableGain * s.panLeft
            let pannedRight = inRight[index] * s.enableGain * s.panRight
            left[index] += pannedLeft * volume
            right[index] += pannedRight * volume
            for send in 0..<sendCount {
                let level = parameters.next(sendSlots[2 * send])
                let preFader = parameters.next(sendSlots[2 * send + 1]) >= 0.5
                let gain = preFader ? level : level * volume
                let base = mixes + 2 * (1 + send) * mixFrames
                if let sideLeft = sideSources[2 * send], let sideRight = sideSources[2 * send + 1] {
                    let sideGain = s.enableGain * gain
                    base[index] += sideLeft[index] * sideGain * s.panLeft
                    base[mixFrames + index] += sideRight[index] * sideGain * s.panRight
                } else {
                    base[index] += pannedLeft * gain
                    base[mixFrames + index] += pannedRight * gain
                }
            }
            let a = inLeft[index] * volume * s.enableGain
            let b = inRight[index] * volume * s.enableGain
            meterStep(&postPeak, &postSquare, a, b)
        }
        finishPost(bus, &s, postPeak, postSquare)
    }

    /// Meters a whole buffer: an input bus before its fader (`pre`), or the output after its fader.
    @_noAllocation @_noLocks
    func meter(_ bus: Int, list: UnsafeMutablePointer<AudioBufferList>, channels: Int, frameCount: Int, pre: Bool) {
        let a = list.pointee.floatChannel(0)
        meter(bus, left: a, right: channels == 2 ? list.pointee.floatChannel(1) : a, frameCount: frameCount, pre: pre)
    }

    /// Meters two channels of samples: as `meter(_:list:…)`, for the mix and sends the mixer holds itself.
    @_noAllocation @_noLocks
    func meter(
        _ bus: Int, left a: UnsafeMutablePointer<Float>, right b: UnsafeMutablePointer<Float>, frameCount: Int,
        pre: Bool
    ) {
        var s = state[bus]
        var peak = pre ? s.prePeak : s.postPeak
        var square = pre ? s.preSquare : s.postSquare
        for index in 0..<frameCount {
            let x = a[index]
            let y = b[index]
            peak.0 = max(abs(x), peak.0 * peakDecay)
            peak.1 = max(abs(y), peak.1 * peakDecay)
            square.0 += (x * x - square.0) * averageCoefficient
            square.1 += (y * y - square.1) * averageCoefficient
        }
        if pre {
            s.prePeak = peak
            s.preSquare = square
        } else {
            s.postPeak = peak
            s.postSquare = square
        }
        state[bus] = s
        publish(bus, offset: pre ? 0 : 4, peak: peak, square: square)
    }

    @inline(__always) @_noAllocation @_noLocks
    func publish(_ bus: Int, offset: Int, peak: (Float, Float), square: (Float, Float)) {
        let base = bus * 8 + offset
        meters[base].store(peak.0.bitPattern, ordering: .relaxed)
        meters[base + 1].store(peak.1.bitPattern, ordering: .relaxed)
        meters[base + 2].store(square.0.bitPattern, ordering: .relaxed)
        meters[base + 3].store(square.1.bitPattern, ordering: .relaxed)
    }
}

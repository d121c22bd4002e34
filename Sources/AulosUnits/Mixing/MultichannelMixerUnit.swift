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
    }

    /// Linear levels written by the render thread: per bus (inputs, then the output) × pre/post ×
    /// peak/mean-square × 2 channels.
    private let meters: UnsafeMutablePointer<Atomic<UInt32>>
    private let meterCapacity = 1025 * 8
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
            ])
    }

    deinit {
        meters.deinitialize(count: meterCapacity)
        meters.deallocate()
        metering.deinitialize(count: 1)
        metering.deallocate()
    }

    public override func canChangeElementCount(_ scope: Scope) -> Bool { scope == .input }

    /// Inputs may be mono or stereo; the output is stereo. All Float32 non-interleaved.
    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        try super.validateFormat(format, scope: scope, element: element)
        if scope == .input && !(1...2).contains(format.channelsPerFrame) {
            throw AudioUnitError(
                .formatNotSupported,
                "\(name) input \(element) must be mono or stereo, not \(format.channelsPerFrame) channels")
        }
        if scope == .output && format.channelsPerFrame != 2 {
            throw AudioUnitError(
                .formatNotSupported, "\(name) output is stereo, not \(format.channelsPerFrame) channels")
        }
    }

    // MARK: State

    public override var stateProperties: [String: String] {
        super.stateProperties.merging([
            "inputs": String(inputBusCount), "metering": String(metering.pointee.load(ordering: .relaxed)),
        ]) { $1 }
    }

    public override func restoreStateProperties(_ properties: [String: String]) throws(AudioUnitError) {
        try super.restoreStateProperties(properties)
        if let text = properties["inputs"], let count = UInt32(text), Int(count) != inputBusCount {
            try set(.elementCount, count, scope: .input)
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
        case .output where element == 0: return inputBusCount
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
        let slots = UnsafeMutablePointer<Int>.allocate(capacity: 3 * count + 1)
        for bus in 0..<count {
            slots[bus] = try parameters.slot(Parameter.volume, scope: .input, element: Element(bus))
            slots[count + bus] = try parameters.slot(Parameter.enable, scope: .input, element: Element(bus))
            slots[2 * count + bus] = try parameters.slot(Parameter.pan, scope: .input, element: Element(bus))
        }
        slots[3 * count] = try parameters.slot(Parameter.volume, scope: .output, element: 0)
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
        let state = UnsafeMutablePointer<MixerBusState>.allocate(capacity: count + 1)
        state.initialize(repeating: MixerBusState(), count: count + 1)
        let rate = outputFormat(0).sampleRate
        let kernel = MixerKernel(
            parameters: renderParameters, busCount: count, slots: slots, channels: channels, inputs: lists,
            state: state,
            meters: meters, metering: metering, rampStep: Float(1 / (0.005 * rate)),
            peakDecay: Float(FastMath.exp(-1 / (1.5 * rate))),
            averageCoefficient: Float(1 - FastMath.exp(-1 / (0.3 * rate))))
        return UnitKernel.make(kernel, render: MixerKernel.render) { kernel in
            kernel.slots.deallocate()
            kernel.channels.deallocate()
            kernel.inputs.deallocate()
            kernel.state.deallocate()
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
}

/// Render side of the mixer.
///
/// Threads: render thread only. Holds no class references.
struct MixerKernel {
    let parameters: ParameterKernel
    let busCount: Int
    let slots: UnsafeMutablePointer<Int>
    let channels: UnsafeMutablePointer<Int>
    let inputs: UnsafeMutablePointer<UnsafeMutablePointer<AudioBufferList>>
    let state: UnsafeMutablePointer<MixerBusState>
    let meters: UnsafeMutablePointer<Atomic<UInt32>>
    let metering: UnsafeMutablePointer<Atomic<UInt32>>
    let rampStep: Float
    let peakDecay: Float
    let averageCoefficient: Float

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: MixerKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>,
        frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        let left = io.pointee.floatChannel(0)
        let right = io.pointee.floatChannel(1)
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
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
            for bus in 0..<busCount { mix(bus, from: frame, to: end, left: left, right: right) }
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
            meter(busCount, list: io, channels: 2, frameCount: frameCount, pre: false)
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
            if pan != s.lastPan {
                s.lastPan = pan
                let angle = Double(pan + 1) / 8  // θ/2π with θ = (pan + 1)·π/4
                let cosine = Float(FastMath.sine(angle + 0.25))
                let sine = Float(FastMath.sine(angle))
                s.panLeft = stereo ? min(1, cosine * 1.414_213_5) : cosine
                s.panRight = stereo ? min(1, sine * 1.414_213_5) : sine
            }
            if s.enableGain != target {
                s.enableGain =
                    target > s.enableGain ? min(target, s.enableGain + rampStep) : max(target, s.enableGain - rampStep)
            }
            let gain = volume * s.enableGain
            let a = inLeft[index] * gain
            let b = inRight[index] * gain
            left[index] += a * s.panLeft
            right[index] += b * s.panRight
            postPeak.0 = max(abs(a), postPeak.0 * peakDecay)
            postPeak.1 = max(abs(b), postPeak.1 * peakDecay)
            postSquare.0 += (a * a - postSquare.0) * averageCoefficient
            postSquare.1 += (b * b - postSquare.1) * averageCoefficient
        }
        // Meters that have fallen below −240 dB are zero (and let a silent bus be skipped).
        if postPeak.0 < 1e-12 && postPeak.1 < 1e-12 && postSquare.0 < 1e-24 && postSquare.1 < 1e-24 {
            postPeak = (0, 0)
            postSquare = (0, 0)
        }
        s.postPeak = postPeak
        s.postSquare = postSquare
        state[bus] = s
        publish(bus, offset: 4, peak: postPeak, square: postSquare)
    }

    /// Meters a whole buffer: an input bus before its fader (`pre`), or the output after its fader.
    @_noAllocation @_noLocks
    func meter(_ bus: Int, list: UnsafeMutablePointer<AudioBufferList>, channels: Int, frameCount: Int, pre: Bool) {
        var s = state[bus]
        var peak = pre ? s.prePeak : s.postPeak
        var square = pre ? s.preSquare : s.postSquare
        let a = list.pointee.floatChannel(0)
        let b = channels == 2 ? list.pointee.floatChannel(1) : a
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

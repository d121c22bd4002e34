import AulosCore
import AulosDSP
import Synchronization

/// Aulos's iPod EQ (`aufx/ipeq/Auls`; Core Audio's `aufx/ipeq/appl` finds it): no parameters, a list of named factory
/// curves (FactoryPresets) and the one in use (PresentPreset), which may change while audio runs — the switch glides
/// over 30 ms, so it never clicks. The curves are this project's own (docs/eq-presets.md): gains at ten octave-spaced
/// band centres. Band filters overlap, so the gains actually used are fitted on the control thread until the measured
/// response at every centre is within 0.1 dB of the table. Input and output must have the same full format, as the
/// seeds require.
///
/// Threads: control side as for every unit; `IPodEQKernel` runs on the render thread.
public final class IPodEQUnit: AudioUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .effect, subtype: .iPodEQ, manufacturer: .aulos)
    /// Core Audio's description of the unit this reimplements: it finds this one too.
    public static let coreAudioAlias = ComponentDescription(type: .effect, subtype: .iPodEQ, manufacturer: .apple)

    public static let bandCenters: [Double] = [32, 64, 125, 250, 500, 1000, 2000, 4000, 8000, 16_000]
    static let bandQ = 1.41

    /// Whether a band is played at `sampleRate`: only below 0.45 × the rate (a little under Nyquist). A bell
    /// centred on or above Nyquist cannot be built, and fitting the others to it drove their gains far off —
    /// at 32 kHz "Treble Booster" left the output 52 dB down, at 16 kHz silent. Bands left out are flat:
    /// at 8 kHz the 4, 8 and 16 kHz bands; at 16 kHz the 8 and 16 kHz bands; at 32 kHz the 16 kHz band.
    public static func isPlayed(center: Double, sampleRate: Double) -> Bool {
        IPodEQKernel.isPlayed(center: center, sampleRate: sampleRate)
    }

    /// The factory curves: name and gain in dB at each band centre. Preset numbers are the indices.
    public static let curves: [(name: String, gains: [Double])] = [
        ("Acoustic", [4, 4, 3, 1, 1, 1, 2, 3, 3, 2]),
        ("Bass Booster", [6, 5, 4, 2, 1, 0, 0, 0, 0, 0]),
        ("Bass Reducer", [-6, -5, -4, -2, -1, 0, 0, 0, 0, 0]),
        ("Classical", [4, 3, 2, 1, -1, -1, 0, 2, 3, 4]),
        ("Dance", [4, 6, 4, 0, 1, 2, 4, 4, 3, 0]),
        ("Deep", [5, 4, 2, 1, 2, 1, -1, -2, -4, -5]),
        ("Electronic", [4, 4, 1, 0, -2, 2, 1, 1, 4, 5]),
        ("Flat", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        ("Hip-Hop", [5, 4, 1, 3, -1, -1, 1, -1, 2, 3]),
        ("Jazz", [4, 3, 1, 2, -2, -2, 0, 1, 3, 4]),
        ("Latin", [4, 3, 0, 0, -2, -2, -2, 0, 3, 4]),
        ("Loudness", [6, 4, 0, 0, -2, 0, -1, -5, 5, 1]),
        ("Lounge", [-3, -2, -1, 1, 4, 3, 0, -2, 2, 1]),
        ("Piano", [3, 2, 0, 2, 3, 1, 3, 4, 3, 3]),
        ("Pop", [-2, -1, 0, 2, 4, 4, 2, 0, -1, -2]),
        ("R&B", [3, 7, 6, 1, -2, -2, 2, 3, 3, 4]),
        ("Rock", [5, 4, 3, 1, -1, -1, 1, 3, 4, 5]),
        ("Small Speakers", [6, 4, 4, 2, 1, 0, -1, -2, -3, -4]),
        ("Spoken Word", [-4, -2, 0, 1, 3, 5, 5, 4, 2, 0]),
        ("Treble Booster", [0, 0, 0, 0, 0, 1, 2, 4, 5, 6]),
        ("Treble Reducer", [0, 0, 0, 0, 0, -1, -2, -4, -5, -6]),
        ("Vocal Booster", [-2, -3, -3, 1, 4, 4, 3, 1, 0, -2]),
    ]
    public static let flat = 7

    private var selected = IPodEQUnit.flat
    /// Fitted band gains per preset for the current sample rate (control side), and their render-side copy.
    private var fitted: [[Double]] = []
    private var shared: IPodEQShared?

    public init() {
        super.init(
            description: Self.componentDescription, aliases: [Self.coreAudioAlias], name: "Aulos: iPod EQ", inputs: 1,
            outputs: 1)
    }

    public override var factoryPresets: [Preset] {
        Self.curves.enumerated().map { Preset(number: Int32($0.offset), name: $0.element.name) }
    }

    public override var currentPreset: Preset? { Preset(number: Int32(selected), name: Self.curves[selected].name) }

    public override func applyPreset(_ preset: Preset) throws(AudioUnitError) {
        selected = Int(preset.number)
        shared?.select(selected)
    }

    /// Selects a curve by name (case-insensitive) or number, at any time.
    /// The curve a name (any case) or number names, if any: how rigs, `aulos set` and this unit look one up.
    public static func curveIndex(_ nameOrNumber: String) -> Int? {
        curves.firstIndex { $0.name.lowercased() == nameOrNumber.lowercased() }
            ?? Int(nameOrNumber).flatMap { curves.indices.contains($0) ? $0 : nil }
    }

    public func selectPreset(_ nameOrNumber: String) throws(AudioUnitError) {
        guard let index = Self.curveIndex(nameOrNumber) else {
            throw AudioUnitError(
                .invalidPropertyValue,
                "no EQ preset '\(nameOrNumber)' (presets: \(Self.curves.map(\.name).joined(separator: ", ")))")
        }
        try set(.presentPreset, Preset(number: Int32(index), name: Self.curves[index].name))
    }

    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        try super.validateFormat(format, scope: scope, element: element)
        guard format.channelsPerFrame <= 8 else {
            throw AudioUnitError(.formatNotSupported, "\(name) takes up to 8 channels, not \(format.channelsPerFrame)")
        }
    }

    /// Fitted gains of every curve at a sample rate, computed once per rate (fitting takes a few
    /// milliseconds, and a live insertion should not pay for it every time).
    private static let fitCache = Mutex<[Double: [[Double]]]>([:])

    static func fittedCurves(sampleRate: Double) -> [[Double]] {
        if let cached = fitCache.withLock({ $0[sampleRate] }) { return cached }
        let fitted = curves.map { fit($0.gains, sampleRate: sampleRate) }
        fitCache.withLock { $0[sampleRate] = fitted }
        return fitted
    }

    /// The gains to give the band filters so that the cascade's response at each centre equals `targets`.
    /// Jacobi iteration on the dB error: a few dozen steps converge to well under 0.1 dB for these curves.
    /// Bands not played at this rate (`isPlayed`) are left out of the fit and get 0 dB.
    public static func fit(_ targets: [Double], sampleRate: Double) -> [Double] {
        let played = bandCenters.indices.filter { isPlayed(center: bandCenters[$0], sampleRate: sampleRate) }
        var gains = bandCenters.indices.map { played.contains($0) ? targets[$0] : 0 }
        for _ in 0..<60 {
            let response = bandCenters.map { frequency in
                played.reduce(0.0) { sum, band in
                    sum
                        + BiquadCoefficients.design(
                            .bell, frequency: bandCenters[band], gain: gains[band], q: bandQ, sampleRate: sampleRate
                        )
                        .magnitude(at: frequency, sampleRate: sampleRate)
                }
            }
            var worst = 0.0
            for index in played {
                let error = targets[index] - response[index]
                worst = max(worst, abs(error))
                gains[index] += 0.8 * error
            }
            if worst < 0.01 { break }
        }
        return gains
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = inputFormat(0)
        guard input == outputFormat(0) else {
            throw AudioUnitError(
                .formatNotSupported,
                "\(name) needs the same full format on input and output (input \(input.compactDescription), output "
                    + "\(outputFormat(0).compactDescription))"
            )
        }
        let rate = input.sampleRate
        fitted = Self.fittedCurves(sampleRate: rate)
        let shared = IPodEQShared(fitted: fitted, selected: selected)
        self.shared = shared
        retainForKernel(shared)
        let storage = AudioBufferListStorage(format: input, maximumFrames: maximumFramesPerSlice)
        retainForKernel(storage)
        let channels = Int(input.channelsPerFrame)
        let filters = UnsafeMutablePointer<Biquad>.allocate(capacity: channels * Self.bandCenters.count)
        filters.initialize(repeating: Biquad(), count: channels * Self.bandCenters.count)
        let gains = UnsafeMutablePointer<Float>.allocate(capacity: Self.bandCenters.count)
        for band in 0..<Self.bandCenters.count { gains[band] = Float(fitted[selected][band]) }
        let resting = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        resting.initialize(to: false)
        let kernel = IPodEQKernel(
            shared: shared.pointer, filters: filters, gains: gains, channels: channels, sampleRate: rate,
            step: 1 / (0.03 * rate / 16), resting: resting)
        kernel.design(glide: false)
        return UnitKernel.make(kernel, render: IPodEQKernel.render) { kernel in
            kernel.filters.deallocate()
            kernel.gains.deallocate()
            kernel.resting.deallocate()
        }
    }
}

/// The fitted gains of every preset and the selected index, shared with the render thread.
final class IPodEQShared: @unchecked Sendable {
    struct Memory {
        var gains: UnsafeMutablePointer<Float>  // presets × 10
        var selected: UnsafeMutablePointer<Int>  // written by the control thread (one word: atomic enough on
        // every platform Swift runs on; read once per tick)
    }
    let pointer: UnsafeMutablePointer<Memory>

    init(fitted: [[Double]], selected: Int) {
        let gains = UnsafeMutablePointer<Float>.allocate(capacity: fitted.count * 10)
        for (preset, values) in fitted.enumerated() {
            for (band, value) in values.enumerated() { gains[preset * 10 + band] = Float(value) }
        }
        let index = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        index.initialize(to: selected)
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: Memory(gains: gains, selected: index))
    }

    func select(_ preset: Int) {
        UnsafeMutableRawPointer(pointer.pointee.selected).storeBytes(of: preset, as: Int.self)
    }

    deinit {
        pointer.pointee.gains.deallocate()
        pointer.pointee.selected.deallocate()
        pointer.deallocate()
    }
}

/// Render side of the iPod EQ: ten bells per channel; on a preset change the band gains glide to the new
/// curve (redesigned every 16 frames of absolute time).
///
/// Threads: render thread only.
struct IPodEQKernel {
    let shared: UnsafeMutablePointer<IPodEQShared.Memory>
    let filters: UnsafeMutablePointer<Biquad>
    /// The band gains in use now (dB), gliding toward the selected curve.
    let gains: UnsafeMutablePointer<Float>
    let channels: Int
    let sampleRate: Double
    /// Fraction of the way to the target per 16-frame tick.
    let step: Double
    /// Silent input and the filters rung out: slices pass silence through without filtering (the gain
    /// glide still runs on its grid, so a preset change made meanwhile lands as it would have).
    let resting: UnsafeMutablePointer<Bool>

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: IPodEQKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    /// Moves the band gains toward the selected curve (or jumps) and redesigns the filters.
    @_noAllocation @_noLocks
    func design(glide: Bool) {
        let selected = shared.pointee.selected.pointee
        let targets = shared.pointee.gains + selected * 10
        var changed = false
        for band in 0..<10 {
            let current = gains[band]
            let target = targets[band]
            if current == target { continue }
            changed = true
            let maximum = Float(step * 24)  // dB per tick: the full range in 30 ms
            gains[band] =
                glide
                ? (abs(target - current) <= maximum ? target : current + (target > current ? maximum : -maximum))
                : target
        }
        if !changed && glide { return }
        for band in 0..<10 {
            let frequency = IPodEQKernel.center(band)
            let coefficients =
                IPodEQKernel.isPlayed(center: frequency, sampleRate: sampleRate)
                ? BiquadCoefficients.design(
                    .bell, frequency: frequency, gain: Double(gains[band]), q: 1.41, sampleRate: sampleRate)
                : BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
            for channel in 0..<channels { filters[channel * 10 + band].setCoefficients(coefficients) }
        }
    }

    /// See `IPodEQUnit.isPlayed` (here for the render side, which cannot touch the class).
    @inline(__always) @_noAllocation @_noLocks
    static func isPlayed(center: Double, sampleRate: Double) -> Bool { center < 0.45 * sampleRate }

    /// Band centres as a switch (the render-side checker cannot read the static array).
    @inline(__always) @_noAllocation @_noLocks
    static func center(_ band: Int) -> Double {
        switch band {
        case 0: 32
        case 1: 64
        case 2: 125
        case 3: 250
        case 4: 500
        case 5: 1000
        case 6: 2000
        case 7: 4000
        case 8: 8000
        default: 16_000
        }
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>,
        frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        io.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
        let status = RenderInputs.pull(
            inputs, bus: 0, flags: flags, timeStamp: timeStamp, frameCount: UInt32(frameCount), into: io)
        if status != 0 { return status }
        let silentInput = flags.pointee.contains(.outputIsSilence)
        if !silentInput { resting.pointee = false }
        let start = timeStamp.pointee.sampleTime
        var frame = 0
        while frame < frameCount {
            let intoTick = Int((start + Int64(frame)) & 15)
            if intoTick == 0 { design(glide: true) }
            let end = min(frameCount, frame + 16 - intoTick)
            if !resting.pointee {
                for channel in 0..<channels {
                    BiquadBank.process(
                        filters + channel * 10, count: 10, samples: io.pointee.floatChannel(channel), from: frame,
                        to: end)
                }
            }
            frame = end
        }
        guard silentInput, !resting.pointee else { return 0 }
        // Silent input: the output is the filters ringing out. Below −140 dB it is silence — clear the
        // filters' memory and rest; until then the output is not silent, whatever the input said.
        var peak: Float = 0
        for channel in 0..<channels {
            let samples = io.pointee.floatChannel(channel)
            for index in 0..<frameCount { peak = max(peak, abs(samples[index])) }
        }
        if peak < 1e-7 {
            for index in 0..<(channels * 10) { filters[index].reset() }
            for channel in 0..<channels { io.pointee.floatChannel(channel).update(repeating: 0, count: frameCount) }
            resting.pointee = true
        } else {
            flags.pointee.remove(.outputIsSilence)
        }
        return 0
    }
}

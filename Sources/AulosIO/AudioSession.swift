import AulosCore
import AulosRealtime

/// Core Audio's audio session, on Linux: what the host would like from the sound device (sample rate,
/// I/O buffer duration, period count), negotiated once on activation; what it actually got; and the
/// notices that matter to a live instrument (interruptions, route changes).
///
/// There is no system arbiter on Linux: "activating" opens the device for this process. What is particular to
/// the system's driver (which I/O unit heads a live graph, the sound cards, whether a capture stream opens)
/// comes from the `AudioDriver` the host supplies, so the session itself is driver-neutral. The seeds'
/// rule carries over unchanged: every unit's MaximumFramesPerSlice must cover the slice the device will
/// ask for *before* the graph initializes, so `activate` raises it on every node.
///
/// Threads: control thread only. Events from the I/O thread arrive through `dispatchEvents()`.
public final class AudioSession {
    /// Presets for the trade between latency and power, as the seeds describe for a locked screen.
    public enum Profile: String, CaseIterable, Sendable {
        /// Small slices for playing: 64 frames × 3 periods (4 ms of buffer at 48 kHz).
        case live
        /// Large slices for background playback: 2048 frames × 2 periods; fewer wake-ups.
        case powersave

        var ioBufferFrames: UInt32 { self == .live ? 64 : 2048 }
        var periods: UInt32 { self == .live ? 3 : 2 }
    }

    public enum Interruption: Sendable, Equatable { case began, ended }

    /// Why the route changed (Core Audio's AVAudioSessionRouteChangeReason, the cases Linux can see).
    public enum RouteChangeReason: Sendable, Equatable {
        /// The device went away (USB interface unplugged); `errno` is alsa-lib's error.
        case deviceLost(errno: Int32)
        /// The device is back and audio resumed.
        case deviceBack
        /// Sound cards appeared or went away (a USB interface plugged in or out): the default device
        /// may now be another one. Names as ALSA reports them (`/proc/asound/cards`).
        case cardsChanged(added: [String], removed: [String])
    }

    public var device: String
    /// An ALSA configuration to find `device` in, instead of the system's.
    public var configuration: String?
    /// The capture PCM for the I/O unit's input element, when not the same name as `device`.
    public var inputDevice: String?
    public private(set) var preferredSampleRate: Double = 48_000
    public private(set) var preferredIOBufferFrames: UInt32 = 256
    public private(set) var preferredPeriods: UInt32 = 3
    /// The format asked for first (the device may grant another; the I/O unit converts).
    public var preferredFormat: SampleFormat = .float32
    /// A device that takes audio faster than real time is paced by the clock (see `PCMRequest`).
    public var pacesUnpacedDevices = true

    /// The driver the session was made for (its I/O unit, cards and capture check).
    public let driver: AudioDriver
    /// The I/O unit live graphs are headed by: the driver's, or another one's (the JACK unit, made with its
    /// settings by the host that chose it).
    public var outputComponent: Component
    /// The output component's unit has a MIDI input of its own (JACK's `midi_in`): a MIDI source besides the
    /// sequencer, which is then welcome but not required. Set with `outputComponent` by the host.
    public var outputHasMIDIInput = false
    /// The slice the graph is sized for at least, beyond what the device grants: a driver whose slice can
    /// grow while playing (JACK's buffer size) renders a larger one in pieces of this size.
    public var minimumSliceCapacity: UInt32 = 0

    public private(set) var isActive = false
    /// What the device granted, while active.
    public private(set) var grant: PCMGrant?
    private weak var outputUnit: (any LiveIOUnit)?
    private var interruptionListeners: [(Interruption) -> Void] = []
    private var routeListeners: [(RouteChangeReason) -> Void] = []
    /// The sound cards seen at the last check, and when that was (cards are polled at most twice a second).
    private var knownCards: [String]?
    private var lastCardCheck: Int64 = 0
    /// Lists the system's sound cards (the driver's list; tests replace it: there are none to plug in here).
    public var listCards: () -> [String]
    /// CLOCK_MONOTONIC nanoseconds, for the card poll's half-second spacing; tests inject their own.
    public var clock: () -> Int64 = monotonicNanoseconds

    public init(
        driver: AudioDriver, device: String = "default", configuration: String? = nil, profile: Profile? = nil
    ) {
        self.driver = driver
        outputComponent = driver.outputComponent
        outputHasMIDIInput = driver.hasMIDIInput
        minimumSliceCapacity = driver.minimumSliceCapacity
        listCards = driver.listCards
        self.device = device
        self.configuration = configuration
        if let profile { apply(profile) }
    }

    // MARK: Preferences (set before activation)

    public func setPreferredSampleRate(_ rate: Double) throws(AudioUnitError) {
        try requireInactive()
        guard rate >= 8_000 && rate <= 192_000 else {
            throw AudioUnitError(.invalidPropertyValue, "preferred sample rate must be 8000…192000 Hz, not \(rate)")
        }
        preferredSampleRate = rate
    }

    /// The slice, in frames (16…4096).
    public func setPreferredIOBufferFrames(_ frames: UInt32) throws(AudioUnitError) {
        try requireInactive()
        guard (16...4096).contains(frames) else {
            throw AudioUnitError(.invalidPropertyValue, "preferred I/O buffer must be 16…4096 frames, not \(frames)")
        }
        preferredIOBufferFrames = frames
    }

    /// The slice, in seconds (Core Audio's PreferredHardwareIOBufferDuration), at the preferred rate.
    public func setPreferredIOBufferDuration(_ seconds: Double) throws(AudioUnitError) {
        try setPreferredIOBufferFrames(UInt32(max(1, min(1e6, (seconds * preferredSampleRate).rounded()))))
    }

    public func setPreferredPeriods(_ periods: UInt32) throws(AudioUnitError) {
        try requireInactive()
        guard (2...16).contains(periods) else {
            throw AudioUnitError(.invalidPropertyValue, "preferred period count must be 2…16, not \(periods)")
        }
        preferredPeriods = periods
    }

    public func apply(_ profile: Profile) {
        preferredIOBufferFrames = profile.ioBufferFrames
        preferredPeriods = profile.periods
    }

    public var request: PCMRequest {
        var request = PCMRequest(
            device: device, configuration: configuration, sampleRate: preferredSampleRate,
            period: preferredIOBufferFrames, periods: preferredPeriods, format: preferredFormat)
        request.inputDevice = inputDevice
        request.pacesUnpacedDevices = pacesUnpacedDevices
        return request
    }

    private func requireInactive() throws(AudioUnitError) {
        guard !isActive else {
            throw AudioUnitError(.cannotDoInCurrentContext, "set audio session preferences before activating it")
        }
    }

    // MARK: Activation

    /// Opens the device for `io` (an I/O unit of `outputComponent`'s kind, not yet initialized), negotiates,
    /// and raises the MaximumFramesPerSlice of `io` and of every unit in `units` (the rest of its graph) to the
    /// granted slice (or `minimumSliceCapacity`), as the seeds require before a graph initializes. Returns
    /// what was granted. Throws a `DeviceError` when the device cannot be used, an `AudioUnitError` when
    /// called out of order.
    @discardableResult
    public func activate(for io: any LiveIOUnit, sizing units: [AudioUnit] = []) throws -> PCMGrant {
        guard !isActive else { throw AudioUnitError(.cannotDoInCurrentContext, "the audio session is already active") }
        guard !io.isInitialized, !units.contains(where: \.isInitialized) else {
            throw AudioUnitError(
                .initialized,
                "activate the audio session before initializing the graph: slice sizes are set before initialize")
        }
        io.request = request
        let granted = try io.openDevice()
        guard granted.period <= 4096 else {
            io.closeDevice()
            throw DeviceError(
                .refused,
                "'\(granted.device)' granted a \(granted.period)-frame period; Aulos renders at most 4096 frames "
                    + "per slice (ask for a smaller slice)"
            )
        }
        let capacity = max(granted.period, minimumSliceCapacity)
        for unit in [io] + units where unit.maximumFramesPerSlice < capacity {
            try unit.set(.maximumFramesPerSlice, capacity)
        }
        outputUnit = io
        grant = granted
        isActive = true
        io.addListener { [weak self] event in self?.relay(event) }
        return granted
    }

    /// Releases the device (the graph must be stopped and uninitialized first, as in Core Audio).
    public func deactivate() throws(AudioUnitError) {
        guard isActive else { return }
        if let io = outputUnit {
            guard !io.isRunning else {
                throw AudioUnitError(.cannotDoInCurrentContext, "stop the graph before deactivating the session")
            }
            io.closeDevice()
        }
        isActive = false
        grant = nil
        outputUnit = nil
    }

    // MARK: What was granted (Core Audio's CurrentHardware… queries)

    public var sampleRate: Double? { grant?.sampleRate }
    public var ioBufferFrames: UInt32? { grant?.period }
    public var ioBufferDuration: Double? { grant.map { Double($0.period) / $0.sampleRate } }
    public var outputLatency: Double? { grant?.outputLatency }

    /// Whether the device can capture (Core Audio's InputAvailable): a capture stream opens on it.
    public var isInputAvailable: Bool { driver.isInputAvailable(device, configuration) }

    // MARK: Notices

    public func addInterruptionListener(_ listener: @escaping (Interruption) -> Void) {
        interruptionListeners.append(listener)
    }
    public func addRouteChangeListener(_ listener: @escaping (RouteChangeReason) -> Void) {
        routeListeners.append(listener)
    }

    /// Delivers what the I/O thread reported since the last call, and notices cards coming and going; call
    /// from the control loop.
    public func dispatchEvents() {
        outputUnit?.dispatchEvents()
        let now = clock()
        guard now - lastCardCheck >= 500_000_000 || knownCards == nil else { return }
        lastCardCheck = now
        let cards = listCards()
        defer { knownCards = cards }
        guard let known = knownCards, known != cards else { return }
        let added = cards.filter { !known.contains($0) }
        let removed = known.filter { !cards.contains($0) }
        for listener in routeListeners { listener(.cardsChanged(added: added, removed: removed)) }
    }

    private func relay(_ event: IOEvent) {
        switch event {
        case .interruptionBegan(let error):
            for listener in interruptionListeners { listener(.began) }
            for listener in routeListeners { listener(.deviceLost(errno: error)) }
        case .interruptionEnded:
            for listener in routeListeners { listener(.deviceBack) }
            for listener in interruptionListeners { listener(.ended) }
        case .underrun, .overrun, .suspendedAndResumed, .bufferSizeChanged, .sampleRateChanged:
            break
        }
    }
}

/// What an audio session needs of the system's sound driver beyond its I/O unit: the unit itself, the sound
/// cards it sees (polled for route changes), and whether a device can capture. AulosALSA supplies the ALSA
/// one (`AudioDriver.alsa`); `DummyDriver` one for tests.
///
/// Threads: the control thread.
public struct AudioDriver {
    /// A name for messages ("ALSA").
    public var name: String
    /// The I/O unit live graphs are headed by.
    public var outputComponent: Component
    /// The system's sound cards, as "index: name".
    public var listCards: () -> [String]
    /// Whether `device` (found in `configuration`, when given) opens for capture.
    public var isInputAvailable: (_ device: String, _ configuration: String?) -> Bool
    /// The I/O unit has a MIDI input of its own (the session's `outputHasMIDIInput`).
    public var hasMIDIInput = false
    /// The slice the graph is sized for at least (the session's `minimumSliceCapacity`).
    public var minimumSliceCapacity: UInt32 = 0

    public init(
        name: String, outputComponent: Component, listCards: @escaping () -> [String] = { [] },
        isInputAvailable: @escaping (_ device: String, _ configuration: String?) -> Bool = { _, _ in false }
    ) {
        self.name = name
        self.outputComponent = outputComponent
        self.listCards = listCards
        self.isInputAvailable = isInputAvailable
    }
}

import AulosCore
import AulosMIDI

/// What a live session needs of the I/O unit at the head of its graph, whichever driver moves the audio:
/// the ALSA unit (its own I/O thread, paced by the device) or the JACK unit (JACK's process callback, paced
/// by the JACK server). The audio session opens it, the live session starts it, reads its statistics and
/// relays its events; neither needs to know which it is.
///
/// Threads: the control thread, for every member.
public protocol LiveIOUnit: IOUnit {
    /// What to ask for (the audio session sets it while the unit is uninitialized).
    var request: PCMRequest { get set }
    /// What was granted, once open.
    var grant: PCMGrant? { get }
    /// Opens the device (or connects to the server) and negotiates, so the host can size every unit first.
    @discardableResult func openDevice() throws(DeviceError) -> PCMGrant
    func closeDevice()
    /// One-line warnings from the last start, each naming its fix.
    var warnings: [String] { get }
    var statistics: IOStatistics { get }
    func addListener(_ listener: @escaping (IOEvent) -> Void)
    /// Delivers what the render side reported since the last call (control loop).
    func dispatchEvents()
    /// Renders no more than `frames` from the next start (0: no limit).
    func stopRendering(after frames: Int64)
    var hasReachedFrameLimit: Bool { get }
    /// The input element's audio as a render callback (silence while input is off).
    var inputCallback: RenderCallbackStruct { get }
    /// Set when the unit cannot go on by itself: the live session then rebuilds the rig, or ends the run.
    var restartNeeded: IORestart? { get }
    /// A part's own output beside the mix, where the driver offers one (JACK's per-part ports): the callback
    /// a side-output unit after the part's chain feeds. Nil: the part plays in the mix only.
    func partOutput(named name: String) -> RenderCallbackStruct?

    // MARK: Capabilities (nil or empty where the driver has none: the host asks, never casts)

    /// The driver's own MIDI input (JACK's `midi_in`): the host hands it the receiver before the start. A
    /// driver with one still welcomes the sequencer beside it, but does not need it.
    var midiInput: (any DriverMIDIInput)? { get }
    /// The driver's transport (JACK's), which the host transport follows or drives.
    var transport: (any DriverTransport)? { get }
    /// One line for the log once started (the client, its buffer, its connections), if the driver has one.
    var startSummary: String? { get }
    /// Fault injection (`make realtime-test`, `AULOS_INJECT_OVERRUN`): every render sleeps this long (0 to
    /// stop), a real overrun on a paced device. A driver that cannot ignores it.
    func injectRenderDelay(microseconds: Int)
}

extension LiveIOUnit {
    public var midiInput: (any DriverMIDIInput)? { nil }
    public var transport: (any DriverTransport)? { nil }
    public var startSummary: String? { nil }
    public func injectRenderDelay(microseconds: Int) {}
}

/// A driver's own MIDI port: MIDI that arrives with the audio (JACK MIDI). Its channel messages are played
/// in the cycle they arrive in, through the live input's frame-stamped entry; system messages (and the
/// channel messages, for its records) go to a receiver.
///
/// Threads: the control thread, before the start (the entry and the receiver) and at any time (the count).
public protocol DriverMIDIInput: AnyObject {
    /// Where the port's channel messages are played, at their frame of the cycle; set before the start.
    var framedMIDI: FramedMIDIInput? { get set }
    /// Who hears of the port's MIDI off the process thread; set before the start (nil, or no `framedMIDI`:
    /// no MIDI port is opened).
    var midiReceiver: (any MIDIReceiver)? { get set }
    /// Events read from the port since the start.
    var midiEventsRead: Int { get }
}

/// A driver's transport (JACK's): the host transport follows it, and play, stop and locate requests go to
/// it while it drives the host transport, so every client of the server follows them too.
///
/// Threads: the control thread.
public protocol DriverTransport: AnyObject {
    /// The host transport the driver's transport drives; set before the start.
    var hostTransport: HostTransport? { get set }
    /// Whether requests go to the driver's transport (following or master, open, with a host transport).
    var drivesHostTransport: Bool { get }
    func startTransport()
    func stopTransport()
    /// Moves the driver's transport to `beat` (quarter notes) at `bpm` from frame 0.
    func locateTransport(beat: Double, bpm: Double)
}

/// Why an I/O unit cannot go on by itself (a JACK server's doing: an ALSA device that goes away is reopened
/// by its I/O thread).
public enum IORestart: Sendable, Equatable {
    /// The server shut down or threw the client out: unattended, the rig is rebuilt once it is back.
    case serverGone
    /// The server now runs at another rate: the rig is rebuilt at it.
    case sampleRateChanged(hertz: UInt32)

    /// One line for the log.
    public var message: String {
        switch self {
        case .serverGone: "the JACK server stopped (jackd quit or was killed)"
        case .sampleRateChanged(let hertz): "the JACK server now runs at \(hertz) Hz"
        }
    }
}

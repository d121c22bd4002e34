import AulosCore

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

extension ALSAOutputUnit: LiveIOUnit {
    public var restartNeeded: IORestart? { nil }
    /// An ALSA PCM is the master output alone.
    public func partOutput(named name: String) -> RenderCallbackStruct? { nil }
}

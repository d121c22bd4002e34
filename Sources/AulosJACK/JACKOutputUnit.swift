import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import CJACK
import Glibc

/// The JACK I/O unit (`auou/jack/Auls`): the head of a live graph played by a JACK server — jackd, or
/// PipeWire through pipewire-jack. A JACK client named after the rig with two output ports (`out_1`,
/// `out_2`), two input ports for the input element (`in_1`, `in_2`, when enabled), and a JACK MIDI input
/// (`midi_in`) when the host gives it a MIDI input: its events are routed and played at their frame in the
/// cycle they arrive in. JACK's process callback pulls the graph straight into
/// the output ports' buffers, slice by slice, as the ALSA unit's I/O thread pulls it into a period: no
/// queue between them, nothing allocated, nothing locked. The slice is JACK's buffer size; a new buffer
/// size takes effect on the next cycle (a buffer longer than the graph's slice is rendered in several
/// slices), and a new sample rate silences the unit until the host rebuilds the rig.
///
/// Threads: the control thread for everything public; JACK's process thread owns `JACKProcessState`
/// while the client is active; JACK's notification thread writes the counters.
public final class JACKOutputUnit: IOUnit, LiveIOUnit, DriverMIDIInput, DriverTransport, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .output, subtype: "jack", manufacturer: .aulos)
    /// The slice the graph is sized for, whatever the server's buffer size: JACK buffers up to this are one
    /// render, longer ones several.
    public static let sliceCapacity: UInt32 = 1024

    public let settings: JACKSettings
    /// The audio session's request: JACK decides rate and buffer size, so only its shape is kept.
    public var request = PCMRequest()
    public private(set) var grant: PCMGrant?
    public private(set) var warnings: [String] = []
    /// Where JACK MIDI is played: the live input's frame-stamped entry, which the process callback fills
    /// in the cycle the events arrive and the render thread routes before that cycle's slices render. Set
    /// by the live host before the start (nil: no MIDI port).
    public var framedMIDI: FramedMIDIInput?
    /// Who hears of JACK MIDI off the process thread: system messages (clock, transport, SysEx) to play,
    /// channel messages for its records, and the port's end. Set with `framedMIDI`.
    public var midiReceiver: (any MIDIReceiver)?
    /// The host transport JACK's transport drives (and, as master, is published from); set before the start.
    public var hostTransport: HostTransport?
    /// The name the server gave the client (JACK appends -01 … when the asked-for name is taken).
    public private(set) var clientName: String?
    /// Frames from the output ports to the speakers, as the server reports it once connected.
    public private(set) var playbackLatency: ClosedRange<UInt32>?
    /// What the outputs, inputs and MIDI port were connected to at the start.
    public private(set) var connections: [String] = []
    /// Set when the unit cannot go on by itself.
    public private(set) var restartNeeded: IORestart?

    private var client: OpaquePointer?
    private var outputs: (OpaquePointer, OpaquePointer)?
    private var inputs: (OpaquePointer, OpaquePointer)?
    private var midiPort: OpaquePointer?
    private let counters: UnsafeMutablePointer<JACKCounters>
    private let capture: UnsafeMutablePointer<JACKCapture>
    private var process: UnsafeMutablePointer<JACKProcessState>?
    private var buffers: AudioBufferListStorage?
    private var midiReader: JACKMIDIReader?
    private var midiRecord: UnsafeMutableRawPointer?
    private var isTimebaseMaster = false
    /// The parts' own outputs, in the order the rig asked for them (freed with the unit).
    private var partOutputs: [UnsafeMutablePointer<JACKPartOutput>] = []
    private var partOutputList: UnsafeMutablePointer<UnsafeMutablePointer<JACKPartOutput>>?
    private var listeners: [(IOEvent) -> Void] = []
    /// The counters as the control thread last saw them, to turn their changes into events.
    private var seen = (xruns: 0, bufferSizeChanges: 0, sampleRateChanges: 0, portRegistrations: 0)

    public init(settings: JACKSettings) {
        self.settings = settings
        counters = .allocate(capacity: 1)
        counters.initialize(to: JACKCounters())
        capture = .allocate(capacity: 1)
        capture.initialize(to: JACKCapture())
        super.init(description: Self.componentDescription, name: "Aulos: JACK I/O", hasInputElement: true)
    }

    deinit {
        if isRunning { try? stop() }
        closeClient()
        for output in partOutputs { output.deallocate() }
        capture.deinitialize(count: 1)
        capture.deallocate()
        counters.deinitialize(count: 1)
        counters.deallocate()
    }

    // MARK: Opening

    /// Connects to the server (never starting one) and reads its rate and buffer size.
    @discardableResult
    public func openDevice() throws(DeviceError) -> PCMGrant {
        if let grant, client != nil { return grant }
        // libjack prints its own errors on stderr ("Cannot connect to server socket …"); aulos reports each
        // failure in one line of its own, so they are dropped.
        jack_set_error_function { _ in }
        jack_set_info_function { _ in }
        var status = jack_status_t(rawValue: 0)
        guard let opened = aulos_jack_client_open(settings.clientName, JackNoStartServer, &status, settings.serverName)
        else {
            throw DeviceError(
                .missing,
                "no JACK server to connect to (\(Self.describe(status))): start one (jackd, or PipeWire with "
                    + "pipewire-jack), or play through ALSA without --driver jack")
        }
        client = opened
        clientName = String(cString: jack_get_client_name(opened))
        counters.pointee.sampleRate.store(jack_get_sample_rate(opened), ordering: .relaxed)
        counters.pointee.bufferSize.store(jack_get_buffer_size(opened), ordering: .relaxed)
        counters.pointee.serverGone.store(false, ordering: .relaxed)
        let raw = UnsafeMutableRawPointer(counters)
        jack_set_buffer_size_callback(opened, JACKProcess.bufferSizeChanged, raw)
        jack_set_sample_rate_callback(opened, JACKProcess.sampleRateChanged, raw)
        jack_set_xrun_callback(opened, JACKProcess.xrun, raw)
        jack_set_port_registration_callback(opened, JACKProcess.portRegistered, raw)
        jack_on_info_shutdown(opened, JACKProcess.shutdown, raw)
        // JACK creates the process thread itself: FTZ/DAZ is set there, once, before the first cycle.
        jack_set_thread_init_callback(opened, { _ in FlushToZero.enable() }, nil)
        learnRunningRate(opened)
        let rate = counters.pointee.sampleRate.load(ordering: .relaxed)
        let frames = counters.pointee.bufferSize.load(ordering: .relaxed)
        guard let left = register("out_1", JACKPort.audioType, JackPortIsOutput),
            let right = register("out_2", JACKPort.audioType, JackPortIsOutput)
        else {
            closeClient()
            throw DeviceError(.refused, "JACK would not register output ports for '\(settings.clientName)'")
        }
        outputs = (left, right)
        let granted = PCMGrant(
            device: "jack:\(clientName!)", sampleRate: Double(rate), period: frames, periods: 2,
            bufferFrames: 2 * frames, format: .float32, channels: 2)
        grant = granted
        return granted
    }

    /// PipeWire tells a client its default rate and quantum until the client joins the graph; the graph may
    /// run at another (`clock.force-rate`, another application's). A graph built for the default would be
    /// rebuilt as soon as it started, again and again. So the unit joins for one silent cycle first: the
    /// server's rate and buffer-size callbacks then give what it really runs at (jackd's answers do not change).
    private func learnRunningRate(_ client: OpaquePointer) {
        counters.pointee.probeCycles.store(0, ordering: .relaxed)
        jack_set_process_callback(client, JACKProcess.probe, UnsafeMutableRawPointer(counters))
        guard jack_activate(client) == 0 else { return }
        for _ in 0..<100 where counters.pointee.probeCycles.load(ordering: .acquiring) < 2 { usleep(5_000) }
        jack_deactivate(client)
        // Those were the unit opening, not changes while playing.
        counters.pointee.bufferSizeChanges.store(0, ordering: .relaxed)
        counters.pointee.sampleRateChanges.store(0, ordering: .relaxed)
        counters.pointee.xruns.store(0, ordering: .relaxed)
    }

    public func closeDevice() {
        guard !isRunning else { return }
        closeClient()
    }

    private func closeClient() {
        if let client { jack_client_close(client) }
        client = nil
        outputs = nil
        inputs = nil
        midiPort = nil
        grant = nil
    }

    private func register(_ name: String, _ type: String, _ flags: JackPortFlags) -> OpaquePointer? {
        guard let client else { return nil }
        return jack_port_register(client, name, type, UInt(flags.rawValue), 0)
    }

    /// JACK's ports take the graph's canonical format (32-bit float, one buffer per channel) at the server's
    /// rate: the kernel only pulls.
    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let grant: PCMGrant
        do { grant = try openDevice() } catch { throw error.unitError }
        guard inputFormat(0).channelsPerFrame == 2 else {
            throw AudioUnitError(
                .formatNotSupported,
                "the JACK unit plays stereo; the graph has \(inputFormat(0).channelsPerFrame) channels")
        }
        try set(.streamFormat, StreamFormat.canonical(channels: 2, sampleRate: grant.sampleRate), scope: .output)
        return try ConvertingPullKernel.make(for: self)
    }

    // MARK: Part outputs

    /// With `partOutputs` set: registers `NAME_L` and `NAME_R` for a part and returns the callback its side
    /// output unit feeds them through. Nil when not asked for, or when JACK refuses the ports. Call while the
    /// rig is built (before the start).
    public func partOutput(named name: String) -> RenderCallbackStruct? {
        guard settings.partOutputs, !isRunning else { return nil }
        let base = String(name.map { $0 == ":" || $0.isNewline ? "-" : $0 }.prefix(40))
        guard let left = register(base + "_L", JACKPort.audioType, JackPortIsOutput),
            let right = register(base + "_R", JACKPort.audioType, JackPortIsOutput)
        else {
            warnings.append("JACK would not register ports for part '\(name)': it plays in the mix only")
            return nil
        }
        let output = UnsafeMutablePointer<JACKPartOutput>.allocate(capacity: 1)
        output.initialize(to: JACKPartOutput(ports: (left, right), capture: capture))
        partOutputs.append(output)
        return RenderCallbackStruct(JACKProcess.partOutputCallback, refCon: UnsafeMutableRawPointer(output))
    }

    // MARK: Running

    public override func startIO() throws(AudioUnitError) {
        if client == nil, restartNeeded == nil {
            do { try openDevice() } catch { throw error.unitError }
        }
        guard let client, let outputs, let grant, let entry = renderEntry else {
            throw AudioUnitError(.uninitialized, "\(name) must head an initialized graph before it starts")
        }
        warnings = []
        if isInputEnabled && inputs == nil {
            if let left = register("in_1", JACKPort.audioType, JackPortIsInput),
                let right = register("in_2", JACKPort.audioType, JackPortIsInput)
            {
                inputs = (left, right)
            }
        }
        if framedMIDI != nil && midiReceiver != nil && settings.midiInput && midiPort == nil {
            midiPort = register("midi_in", JACKPort.midiType, JackPortIsInput)
        }
        let reader = midiPort == nil ? nil : midiReceiver.map(JACKMIDIReader.init(receiver:))
        midiReader = reader
        let record = UnsafeMutableRawPointer.allocate(byteCount: 8 + JACKProcess.largestMIDIMessage, alignment: 8)
        midiRecord = record
        let storage = AudioBufferListStorage(
            format: .canonical(channels: 2, sampleRate: grant.sampleRate), maximumFrames: 1)
        buffers = storage
        let following = settings.transport != .off ? hostTransport : nil
        let master = settings.transport == .master ? hostTransport?.tempoMap : nil
        capture.pointee = JACKCapture()
        if !partOutputs.isEmpty {
            let list = UnsafeMutablePointer<UnsafeMutablePointer<JACKPartOutput>>.allocate(capacity: partOutputs.count)
            list.initialize(from: partOutputs, count: partOutputs.count)
            partOutputList = list
        }
        let state = UnsafeMutablePointer<JACKProcessState>.allocate(capacity: 1)
        state.initialize(
            to: JACKProcessState(
                client: client, entry: entry, counters: counters, outputs: outputs, inputs: inputs,
                midiPort: reader == nil ? nil : midiPort, list: storage.list, sliceLimit: Int(maximumFramesPerSlice),
                graphRate: UInt32(grant.sampleRate), capture: capture, framedMIDI: framedMIDI, midi: reader?.ring,
                midiRecord: record, midiWake: reader?.wake,
                transport: following?.externalPosition, tempoMap: master, partOutputs: partOutputList,
                partOutputCount: partOutputs.count))
        process = state
        counters.pointee.meter.reset()
        counters.pointee.framesPlayed.store(0, ordering: .relaxed)
        counters.pointee.reachedFrameLimit.store(false, ordering: .relaxed)
        jack_set_process_callback(client, JACKProcess.process, UnsafeMutableRawPointer(state))
        if master != nil {
            // Conditional: a DAW that is already the timebase master stays it, and Aulos says so.
            isTimebaseMaster =
                jack_set_timebase_callback(client, 1, JACKProcess.timebase, UnsafeMutableRawPointer(state)) == 0
            if !isTimebaseMaster {
                warnings.append("another JACK client is the timebase master: aulos follows its tempo instead")
            }
        }
        following?.followExternal(true)
        reader?.start()
        counters.pointee.running.store(true, ordering: .releasing)
        guard jack_activate(client) == 0 else {
            counters.pointee.running.store(false, ordering: .releasing)
            reader?.stop()
            following?.followExternal(false)
            freeState()
            throw AudioUnitError(.cannotDoInCurrentContext, "JACK would not activate the client '\(clientName ?? "")'")
        }
        connectPorts()
        refreshLatency()
        if jack_is_realtime(client) == 0 {
            warnings.append(
                "the JACK server runs without real-time scheduling: start jackd with -R (the default) and an rtprio "
                    + "limit, or it may glitch under load")
        }
    }

    public override func stopIO() throws(AudioUnitError) {
        counters.pointee.running.store(false, ordering: .releasing)
        if counters.pointee.serverGone.load(ordering: .acquiring) {
            // No server to deactivate with: closing the client joins libjack's threads, the process thread
            // included, before its state is freed.
            closeClient()
        } else if let client {
            if isTimebaseMaster { jack_release_timebase(client) }
            // Returns once the process thread has left the callback: only then may its state go.
            jack_deactivate(client)
        }
        isTimebaseMaster = false
        midiReader?.stop()
        hostTransport?.followExternal(false)
        freeState()
    }

    private func freeState() {
        process?.deinitialize(count: 1)
        process?.deallocate()
        process = nil
        partOutputList?.deallocate()
        partOutputList = nil
        midiRecord?.deallocate()
        midiRecord = nil
        midiReader = nil
        buffers = nil
        capture.pointee = JACKCapture()
    }

    // MARK: Connections

    /// Outputs to the asked-for ports or the physical playback ports, inputs from the asked-for or physical
    /// capture ports, and every hardware MIDI output (plus names asked for) to `midi_in`. A port that cannot
    /// be connected is a warning: the client runs, and can be connected by hand (qjackctl, jack_connect).
    private func connectPorts() {
        guard let client, let outputs else { return }
        connections = []
        let playback =
            settings.outputConnections
            ?? JACKPort.names(client, type: JACKPort.audioType, JackPortIsPhysical.rawValue | JackPortIsInput.rawValue)
        for (port, target) in zip([outputs.0, outputs.1], playback) {
            connect(from: String(cString: jack_port_name(port)), to: target)
        }
        if let inputs {
            let sources =
                settings.inputConnections
                ?? JACKPort.names(
                    client, type: JACKPort.audioType, JackPortIsPhysical.rawValue | JackPortIsOutput.rawValue)
            for (port, source) in zip([inputs.0, inputs.1], sources) {
                connect(from: source, to: String(cString: jack_port_name(port)))
            }
        }
        connectMIDI()
    }

    /// Hardware MIDI outputs and the names asked for, to `midi_in` (again when ports come and go).
    private func connectMIDI() {
        guard let client, let midiPort, midiReader != nil else { return }
        let own = String(cString: jack_port_name(midiPort))
        var sources =
            settings.midiAutoconnect
            ? JACKPort.names(client, type: JACKPort.midiType, JackPortIsPhysical.rawValue | JackPortIsOutput.rawValue)
            : []
        if !settings.midiConnections.isEmpty {
            sources += JACKPort.names(client, type: JACKPort.midiType, JackPortIsOutput.rawValue).filter { name in
                settings.midiConnections.contains { name.contains($0) }
            }
        }
        for source in sources where jack_port_connected_to(midiPort, source) == 0 {
            connect(from: source, to: own)
        }
    }

    private func connect(from source: String, to destination: String) {
        guard let client else { return }
        let result = jack_connect(client, source, destination)
        if result == 0 || result == EEXIST {
            connections.append("\(source) → \(destination)")
        } else {
            warnings.append("cannot connect \(source) to \(destination) (no such port?): connect it with jack_connect")
        }
    }

    /// The latency from out_1 to the speakers, as the server reports it once connected (unconnected, the
    /// ports report none, and the server's two buffers stand in), kept in the grant as its buffer.
    private func refreshLatency() {
        guard let outputs, let period = grant?.period else { return }
        var range = jack_latency_range_t()
        jack_port_get_latency_range(outputs.0, JackPlaybackLatency, &range)
        playbackLatency = range.min...max(range.min, range.max)
        let frames = range.max > 0 ? range.max : 2 * period
        grant?.bufferFrames = frames
        grant?.periods = max(1, frames / max(1, period))
    }

    /// One line for the log once started: the client, its buffer, where its ports go, the latency to the
    /// speakers as the server reports it.
    public var startSummary: String? {
        guard let grant else { return "JACK client not open" }
        let rate = grant.sampleRate
        var line = "JACK client '\(clientName ?? settings.clientName)', \(Int(rate)) Hz, \(grant.period)-frame buffer"
        line += connections.isEmpty ? "; ports not connected" : "; " + connections.joined(separator: ", ")
        if let latency = playbackLatency, latency.upperBound > 0 {
            let milliseconds = Double(latency.upperBound) / rate * 1000
            line +=
                "; \(latency.upperBound) frames (\((milliseconds * 10).rounded() / 10) ms) from out_1 to the speakers"
        }
        return line
    }

    // MARK: Statistics and events

    public var statistics: IOStatistics {
        counters.pointee.meter.statistics(
            xruns: counters.pointee.xruns.load(ordering: .relaxed),
            framesPlayed: counters.pointee.framesPlayed.load(ordering: .relaxed), sampleRate: grant?.sampleRate,
            isInterrupted: counters.pointee.serverGone.load(ordering: .acquiring))
    }

    // MARK: JACK's transport

    /// JACK's transport: the host transport follows it, or is published from it as master.
    public var transport: (any DriverTransport)? { self }
    /// `midi_in`, JACK MIDI arriving with the audio.
    public var midiInput: (any DriverMIDIInput)? { self }

    /// Whether JACK's transport drives the host transport (following it, or as its timebase master): then
    /// play, stop and locate requests go to JACK's transport, which every client follows.
    public var drivesHostTransport: Bool { settings.transport != .off && hostTransport != nil && client != nil }

    public func startTransport() { if let client { jack_transport_start(client) } }
    public func stopTransport() { if let client { jack_transport_stop(client) } }

    /// Moves JACK's transport to `beat` (quarter notes) at `bpm` from frame 0.
    public func locateTransport(beat: Double, bpm: Double) {
        guard let client, let grant, bpm > 0 else { return }
        let frame = (beat * 60 / bpm * grant.sampleRate).rounded()
        jack_transport_locate(client, jack_nframes_t(max(0, min(frame, Double(UInt32.max)))))
    }

    /// Buffer-size changes the server made while this unit played.
    public var bufferSizeChanges: Int { counters.pointee.bufferSizeChanges.load(ordering: .relaxed) }
    /// JACK MIDI events read from `midi_in`, and those dropped.
    public var midiEventsRead: Int { counters.pointee.midiEvents.load(ordering: .relaxed) }
    public var midiEventsDropped: Int { counters.pointee.midiDropped.load(ordering: .relaxed) }

    public func addListener(_ listener: @escaping (IOEvent) -> Void) { listeners.append(listener) }

    /// Turns what JACK's threads counted into events (control loop): xruns, a new buffer size (the grant
    /// follows it), a new sample rate or the server gone (`restartNeeded`), and new ports to connect.
    public func dispatchEvents() {
        var events: [IOEvent] = []
        let xruns = counters.pointee.xruns.load(ordering: .relaxed)
        events += Array(repeating: .underrun, count: min(16, xruns - seen.xruns))
        let sizeChanges = counters.pointee.bufferSizeChanges.load(ordering: .relaxed)
        if sizeChanges != seen.bufferSizeChanges {
            let frames = counters.pointee.bufferSize.load(ordering: .relaxed)
            grant?.period = frames
            refreshLatency()
            events.append(.bufferSizeChanged(frames: frames))
        }
        let rateChanges = counters.pointee.sampleRateChanges.load(ordering: .relaxed)
        if rateChanges != seen.sampleRateChanges {
            let rate = counters.pointee.sampleRate.load(ordering: .relaxed)
            if Double(rate) != grant?.sampleRate {
                restartNeeded = .sampleRateChanged(hertz: rate)
                events.append(.sampleRateChanged(hertz: rate))
            }
        }
        if counters.pointee.serverGone.load(ordering: .acquiring) && restartNeeded != .serverGone {
            restartNeeded = .serverGone
        }
        let registrations = counters.pointee.portRegistrations.load(ordering: .relaxed)
        if registrations != seen.portRegistrations && isRunning && restartNeeded == nil { connectMIDI() }
        seen = (xruns, sizeChanges, rateChanges, registrations)
        for event in events { for listener in listeners { listener(event) } }
    }

    public func stopRendering(after frames: Int64) {
        counters.pointee.frameLimit.store(max(0, frames), ordering: .relaxed)
        counters.pointee.reachedFrameLimit.store(false, ordering: .relaxed)
    }

    public var hasReachedFrameLimit: Bool { counters.pointee.reachedFrameLimit.load(ordering: .acquiring) }

    public var inputCallback: RenderCallbackStruct {
        RenderCallbackStruct(JACKProcess.inputCallback, refCon: UnsafeMutableRawPointer(capture))
    }

    /// jack_status_t's bits, in words.
    static func describe(_ status: jack_status_t) -> String {
        let bits = status.rawValue
        if bits & JackServerFailed.rawValue != 0 || bits & JackServerError.rawValue != 0 {
            return "no server is running"
        }
        if bits & JackVersionError.rawValue != 0 { return "the server speaks another protocol version" }
        if bits & JackNameNotUnique.rawValue != 0 { return "the client name is taken" }
        if bits & JackInvalidOption.rawValue != 0 { return "an invalid option" }
        return "status 0x\(String(bits, radix: 16))"
    }
}

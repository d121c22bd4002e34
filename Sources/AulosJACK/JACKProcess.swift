import AulosCore
import AulosIO
import AulosMIDI
import AulosRealtime
import CJACK
import Glibc
import Synchronization

/// What JACK's threads (the process thread, the notification thread) tell the control thread: counters
/// and flags only, so no callback ever allocates, locks or touches a reference-counted object.
struct JACKCounters: ~Copyable {
    let running = Atomic<Bool>(false)
    let xruns = Atomic<Int>(0)
    let framesPlayed = Atomic<Int64>(0)
    /// DSP load, late and stalled cycles, measured as the ALSA unit measures its periods.
    let meter = RenderLoadMeter()
    /// The server's buffer size and sample rate as last announced, and how often they changed.
    let bufferSize = Atomic<UInt32>(0)
    let bufferSizeChanges = Atomic<Int>(0)
    let sampleRate = Atomic<UInt32>(0)
    let sampleRateChanges = Atomic<Int>(0)
    /// The server shut down (or threw the client out): nothing more will be processed.
    let serverGone = Atomic<Bool>(false)
    let frameLimit = Atomic<Int64>(0)
    let reachedFrameLimit = Atomic<Bool>(false)
    /// JACK MIDI events read from the port, and those dropped (queue full, or longer than a record holds).
    let midiEvents = Atomic<Int>(0)
    let midiDropped = Atomic<Int>(0)
    /// Ports registered or unregistered anywhere on the server (new MIDI hardware to connect).
    let portRegistrations = Atomic<Int>(0)
    /// Cycles of the silent callback run while the unit learns the rate the server really runs at.
    let probeCycles = Atomic<Int>(0)
}

/// The input element's audio for the cycle: JACK's own input port buffers, valid during the process
/// callback, and where the slice being rendered starts in them. Only the process thread touches it.
struct JACKCapture {
    var left: UnsafeMutablePointer<Float>?
    var right: UnsafeMutablePointer<Float>?
    var sliceOffset = 0
    var frames = 0
}

/// A part's own pair of output ports (`--jack-part-outputs`): the process callback points it at the ports'
/// buffers each cycle and silences them; the side-output unit after the part's chain writes each slice
/// there, at the slice's place in the cycle.
struct JACKPartOutput {
    let ports: (OpaquePointer, OpaquePointer)
    var left: UnsafeMutablePointer<Float>?
    var right: UnsafeMutablePointer<Float>?
    /// Where the slice being rendered starts in the cycle (the unit's capture state keeps it).
    let capture: UnsafeMutablePointer<JACKCapture>
}

/// The process thread's whole world: no class references, so nothing it touches is reference counted.
///
/// Threads: made and freed by the control thread while the client is inactive; owned by JACK's process
/// thread (and its timebase callback, on the same thread) while active.
struct JACKProcessState {
    let client: OpaquePointer
    let entry: RenderEntry
    let counters: UnsafeMutablePointer<JACKCounters>
    let outputs: (OpaquePointer, OpaquePointer)
    let inputs: (OpaquePointer, OpaquePointer)?
    let midiPort: OpaquePointer?
    /// Two non-interleaved buffers, pointed at the output ports' memory slice by slice: the graph renders
    /// straight into JACK's buffers.
    let list: UnsafeMutablePointer<AudioBufferList>
    /// The graph's maximumFramesPerSlice: a JACK buffer longer than it is rendered in several slices.
    let sliceLimit: Int
    /// The rate the graph was built for: at any other, the unit stays silent until the rig is rebuilt.
    let graphRate: UInt32
    var sampleTime: Int64 = 0
    let capture: UnsafeMutablePointer<JACKCapture>
    /// Where channel messages are played: the live input's frame-stamped entry (routed in this cycle).
    let framedMIDI: FramedMIDIInput?
    /// JACK MIDI for the MIDI reader thread: records of [frame: Int64][the message's bytes] — system
    /// messages to play, channel messages for the activity log.
    let midi: SPSCByteRing?
    let midiRecord: UnsafeMutableRawPointer
    let midiWake: UnsafeMutablePointer<sem_t>?
    /// Where JACK's transport is written for the host transport (nil: transport off).
    let transport: UnsafeMutablePointer<ExternalTransportPosition>?
    /// The tempo map a timebase master publishes (nil: not the master).
    let tempoMap: TempoMapReader?
    /// The parts' own outputs, if asked for.
    let partOutputs: UnsafeMutablePointer<UnsafeMutablePointer<JACKPartOutput>>?
    let partOutputCount: Int
    /// JACK's transport has rolled (or has a master) since the start: from then on it is followed, stopped
    /// included. Before, a transport nobody drives leaves aulos's own running (a fresh jackd's is stopped).
    var transportInUse = false
    var smoothedLoad = 0.0
}

enum JACKProcess {
    /// The longest JACK MIDI message passed on (a SysEx longer than this is dropped and counted).
    static let largestMIDIMessage = 1024
    static let ticksPerBeat = 1920.0
    /// Every JACK MIDI message comes from this source (one port; its notes are released when it stops).
    @inlinable static var midiSource: UInt32 { 0xFFFF_FF00 }

    /// The callback of the brief activation that opens the unit: silence, and a count of cycles run.
    static let probe: JackProcessCallback = { _, argument in
        argument!.assumingMemoryBound(to: JACKCounters.self).pointee.probeCycles.add(1, ordering: .releasing)
        return 0
    }

    static let process: JackProcessCallback = { frames, argument in
        cycle(argument!.assumingMemoryBound(to: JACKProcessState.self), frames: frames)
        return 0
    }

    /// One JACK cycle: MIDI and transport first (they are for this cycle's renders), then the graph pulled
    /// into the output ports, as the ALSA I/O thread pulls it into a period — no queue between them.
    @_noAllocation @_noLocks
    static func cycle(_ state: UnsafeMutablePointer<JACKProcessState>, frames nframes: jack_nframes_t) {
        let counters = state.pointee.counters
        let frames = Int(nframes)
        // JACK's port, MIDI and transport calls are real-time safe by its contract; the checker cannot see
        // into the library, hence _unsafePerformance around each.
        let (left, right) = _unsafePerformance {
            (
                jack_port_get_buffer(state.pointee.outputs.0, nframes).assumingMemoryBound(to: Float.self),
                jack_port_get_buffer(state.pointee.outputs.1, nframes).assumingMemoryBound(to: Float.self)
            )
        }
        let limit = counters.pointee.frameLimit.load(ordering: .relaxed)
        let silent =
            !counters.pointee.running.load(ordering: .acquiring)
            || counters.pointee.sampleRate.load(ordering: .relaxed) != state.pointee.graphRate
            || (limit > 0 && state.pointee.sampleTime >= limit)
        if silent {
            if limit > 0 && state.pointee.sampleTime >= limit {
                counters.pointee.reachedFrameLimit.store(true, ordering: .releasing)
            }
            left.update(repeating: 0, count: frames)
            right.update(repeating: 0, count: frames)
            return
        }
        // Two clock_gettime calls (vDSO): no allocation, no lock.
        let (started, startedCPU) = _unsafePerformance { (monotonicNanoseconds(), threadCPUNanoseconds()) }
        if state.pointee.midiPort != nil { readMIDI(state, frames: nframes) }
        if state.pointee.transport != nil { readTransport(state) }
        if let inputs = state.pointee.inputs {
            state.pointee.capture.pointee.left = _unsafePerformance {
                jack_port_get_buffer(inputs.0, nframes).assumingMemoryBound(to: Float.self)
            }
            state.pointee.capture.pointee.right = _unsafePerformance {
                jack_port_get_buffer(inputs.1, nframes).assumingMemoryBound(to: Float.self)
            }
            state.pointee.capture.pointee.frames = frames
        }
        for index in 0..<state.pointee.partOutputCount {
            let output = state.pointee.partOutputs![index]
            let ports = output.pointee.ports
            let (left, right) = _unsafePerformance {
                (
                    jack_port_get_buffer(ports.0, nframes).assumingMemoryBound(to: Float.self),
                    jack_port_get_buffer(ports.1, nframes).assumingMemoryBound(to: Float.self)
                )
            }
            // Silence first: a part whose pull is skipped (a rig not playing) leaves it so.
            left.update(repeating: 0, count: frames)
            right.update(repeating: 0, count: frames)
            output.pointee.left = left
            output.pointee.right = right
        }
        let hostNanos = playTime(state, now: started, frames: frames)
        let rate = Double(state.pointee.graphRate)
        var done = 0
        while done < frames {
            let slice = min(state.pointee.sliceLimit, frames - done)
            state.pointee.capture.pointee.sliceOffset = done
            let list = state.pointee.list
            list.pointee.buffers[0].data = UnsafeMutableRawPointer(left + done)
            list.pointee.buffers[1].data = UnsafeMutableRawPointer(right + done)
            list.pointee.setFrameCount(UInt32(slice), bytesPerFrame: 4)
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp()
            stamp.sampleTime = state.pointee.sampleTime
            stamp.hostTime = UInt64(hostNanos) &+ UInt64(Double(done) * 1e9 / rate)
            stamp.flags = AulosTimeStampFlags.sampleTimeValid.union(.hostTimeValid)
            let status = state.pointee.entry.render(
                flags: &flags, timeStamp: &stamp, frameCount: UInt32(slice), ioData: list)
            if status != RenderStatus.noErr { list.pointee.zeroFill() }
            state.pointee.sampleTime += Int64(slice)
            done += slice
        }
        state.pointee.capture.pointee.frames = 0
        counters.pointee.framesPlayed.add(Int64(frames), ordering: .relaxed)
        let (ended, endedCPU) = _unsafePerformance { (monotonicNanoseconds(), threadCPUNanoseconds()) }
        counters.pointee.meter.record(
            frames: frames, sampleRate: rate, wallNanos: ended - started, cpuNanos: endedCPU - startedCPU,
            framesPlayed: counters.pointee.framesPlayed.load(ordering: .relaxed), smoothed: &state.pointee.smoothedLoad)
    }

    /// When this cycle's first frame leaves for the hardware (CLOCK_MONOTONIC ns): the end of the cycle JACK
    /// is processing, from its own cycle times (jackd2 and PipeWire keep them on the monotonic clock). A time
    /// on another clock is seconds away; then the wake-up time plus a cycle stands in.
    @_noAllocation @_noLocks
    static func playTime(_ state: UnsafeMutablePointer<JACKProcessState>, now: Int64, frames: Int) -> Int64 {
        var currentFrames: jack_nframes_t = 0
        var currentMicros: jack_time_t = 0
        var nextMicros: jack_time_t = 0
        var periodMicros: Float = 0
        let fallback = now + Int64(Double(frames) / Double(state.pointee.graphRate) * 1e9)
        let client = state.pointee.client
        guard
            _unsafePerformance({
                jack_get_cycle_times(client, &currentFrames, &currentMicros, &nextMicros, &periodMicros)
            }) == 0
        else { return fallback }
        let next = Int64(truncatingIfNeeded: nextMicros) &* 1000
        return abs(next - now) < 1_000_000_000 ? next : fallback
    }

    /// This cycle's JACK MIDI: each channel message to the live input's frame-stamped entry, due at its frame
    /// of *this* cycle — the render that follows routes it and plays it there, no thread in between — and
    /// every message to the reader thread (system messages to play; channel messages for the panel's log).
    @_noAllocation @_noLocks
    static func readMIDI(_ state: UnsafeMutablePointer<JACKProcessState>, frames: jack_nframes_t) {
        guard let port = state.pointee.midiPort, let ring = state.pointee.midi, let wake = state.pointee.midiWake,
            let framed = state.pointee.framedMIDI,
            let buffer = _unsafePerformance({ jack_port_get_buffer(port, frames) })
        else { return }
        let counters = state.pointee.counters
        let count = _unsafePerformance { jack_midi_get_event_count(buffer) }
        guard count > 0 else { return }
        let record = state.pointee.midiRecord
        for index in 0..<count {
            var event = jack_midi_event_t()
            guard _unsafePerformance({ jack_midi_event_get(&event, buffer, index) }) == 0, let bytes = event.buffer
            else { continue }
            counters.pointee.midiEvents.add(1, ordering: .relaxed)
            let size = Int(event.size)
            guard size > 0 && size <= largestMIDIMessage else {
                counters.pointee.midiDropped.add(1, ordering: .relaxed)
                continue
            }
            let due = state.pointee.sampleTime + Int64(event.time)
            let status = bytes[0]
            if status >= 0x80 && status < 0xF0 {
                let message = ChannelMessage(
                    status: status, data1: size > 1 ? bytes[1] : 0, data2: size > 2 ? bytes[2] : 0)
                if !framed.push(message, fromSource: JACKProcess.midiSource, dueFrame: due) {
                    counters.pointee.midiDropped.add(1, ordering: .relaxed)
                }
            }
            record.storeBytes(of: due, as: Int64.self)
            (record + 8).copyMemory(from: bytes, byteCount: size)
            // A full log ring loses a line of the panel's log, or a system message (counted).
            if !ring.write(record, size: 8 + size) && status >= 0xF0 {
                counters.pointee.midiDropped.add(1, ordering: .relaxed)
            }
        }
        _ = _unsafePerformance { sem_post(wake) }
    }

    /// JACK's transport for the host transport, once it is in use: rolling, frame, and — from a timebase
    /// master other than Aulos — bar/beat/tick and tempo, in quarter notes.
    @_noAllocation @_noLocks
    static func readTransport(_ state: UnsafeMutablePointer<JACKProcessState>) {
        guard let feed = state.pointee.transport else { return }
        var position = jack_position_t()
        let client = state.pointee.client
        let transport = _unsafePerformance { jack_transport_query(client, &position) }
        let hasBBT = position.valid.rawValue & JackPositionBBT.rawValue != 0
        let rolling = transport == JackTransportRolling
        if rolling || hasBBT || state.pointee.tempoMap != nil { state.pointee.transportInUse = true }
        feed.pointee.valid = state.pointee.transportInUse
        feed.pointee.rolling = rolling
        feed.pointee.frame = Int64(position.frame)
        feed.pointee.sampleTime = state.pointee.sampleTime
        if state.pointee.tempoMap == nil && hasBBT && position.beat_type > 0 && position.beats_per_minute > 0
            && position.ticks_per_beat > 0
        {
            let beats =
                Double(position.bar - 1) * Double(position.beats_per_bar) + Double(position.beat - 1)
                + Double(position.tick) / position.ticks_per_beat
            let quarterNotesPerBeat = 4 / Double(position.beat_type)
            feed.pointee.beat = beats * quarterNotesPerBeat
            feed.pointee.bpm = position.beats_per_minute * quarterNotesPerBeat
        } else {
            // Aulos is the master (its own map is exact, no ticks' rounding), or nobody is.
            feed.pointee.beat = .nan
            feed.pointee.bpm = .nan
        }
    }

    /// As timebase master: JACK's bar/beat/tick and tempo at the position's frame, from Aulos's tempo map.
    static let timebase: JackTimebaseCallback = { _, _, position, _, argument in
        guard let position else { return }
        answerPosition(argument!.assumingMemoryBound(to: JACKProcessState.self), position)
    }

    @_noAllocation @_noLocks
    static func answerPosition(
        _ state: UnsafeMutablePointer<JACKProcessState>, _ position: UnsafeMutablePointer<jack_position_t>
    ) {
        guard let map = state.pointee.tempoMap else { return }
        let (quarterBeat, bpm) = map.beat(atFrame: Int64(position.pointee.frame))
        let beatsPerBar = map.numerator
        let beats = max(0, quarterBeat) * map.denominator / 4
        let bar = wholePart(beats / beatsPerBar)
        let inBar = beats - Double(bar) * beatsPerBar
        let beat = wholePart(inBar)
        position.pointee.valid = JackPositionBBT
        position.pointee.bar = Int32(truncatingIfNeeded: bar + 1)
        position.pointee.beat = Int32(truncatingIfNeeded: beat + 1)
        position.pointee.tick = Int32((inBar - Double(beat)) * ticksPerBeat)
        position.pointee.bar_start_tick = Double(bar) * beatsPerBar * ticksPerBeat
        position.pointee.beats_per_bar = Float(beatsPerBar)
        position.pointee.beat_type = Float(map.denominator)
        position.pointee.ticks_per_beat = ticksPerBeat
        position.pointee.beats_per_minute = bpm * map.denominator / 4
    }

    /// The whole part of a non-negative value, clamped (floor() without the rounding rule the real-time
    /// checker rejects).
    @_noAllocation @_noLocks
    static func wholePart(_ value: Double) -> Int64 {
        guard value.isFinite else { return 0 }
        return Int64(max(0, min(value, 1e15)))
    }

    // MARK: The server's notices (JACK's notification thread)

    static let bufferSizeChanged: JackBufferSizeCallback = { frames, argument in
        let counters = argument!.assumingMemoryBound(to: JACKCounters.self)
        let previous = counters.pointee.bufferSize.exchange(frames, ordering: .relaxed)
        if previous != 0 && previous != frames { counters.pointee.bufferSizeChanges.add(1, ordering: .relaxed) }
        return 0
    }

    static let sampleRateChanged: JackSampleRateCallback = { rate, argument in
        let counters = argument!.assumingMemoryBound(to: JACKCounters.self)
        let previous = counters.pointee.sampleRate.exchange(rate, ordering: .relaxed)
        if previous != 0 && previous != rate { counters.pointee.sampleRateChanges.add(1, ordering: .relaxed) }
        return 0
    }

    /// A port came or went: the control thread connects new hardware MIDI (jack_connect is not allowed
    /// inside a callback).
    static let portRegistered: JackPortRegistrationCallback = { _, _, argument in
        argument!.assumingMemoryBound(to: JACKCounters.self).pointee.portRegistrations.add(1, ordering: .relaxed)
    }

    static let xrun: JackXRunCallback = { argument in
        argument!.assumingMemoryBound(to: JACKCounters.self).pointee.xruns.add(1, ordering: .relaxed)
        return 0
    }

    static let shutdown: JackInfoShutdownCallback = { _, _, argument in
        argument!.assumingMemoryBound(to: JACKCounters.self).pointee.serverGone.store(true, ordering: .releasing)
    }

    /// A part's side output: the slice the part just rendered, copied into its ports at the slice's place.
    static let partOutputCallback: RenderCallback = { refCon, _, _, _, frameCount, ioData in
        guard let refCon else { return RenderStatus.noErr }
        let output = refCon.assumingMemoryBound(to: JACKPartOutput.self)
        let start = output.pointee.capture.pointee.sliceOffset
        let frames = Int(frameCount)
        guard let left = output.pointee.left, let right = output.pointee.right, ioData.pointee.bufferCount >= 2,
            let leftSource = ioData.pointee.buffers[0].data, let rightSource = ioData.pointee.buffers[1].data
        else { return RenderStatus.noErr }
        (left + start).update(from: leftSource.assumingMemoryBound(to: Float.self), count: frames)
        (right + start).update(from: rightSource.assumingMemoryBound(to: Float.self), count: frames)
        return RenderStatus.noErr
    }

    /// The input element as a render callback: the input ports' frames for the slice being rendered;
    /// silence while input is off.
    static let inputCallback: RenderCallback = { refCon, _, _, _, frameCount, ioData in
        guard let refCon else { return RenderStatus.noErr }
        let capture = refCon.assumingMemoryBound(to: JACKCapture.self)
        let frames = Int(frameCount)
        let start = capture.pointee.sliceOffset
        guard start + frames <= capture.pointee.frames, let left = capture.pointee.left,
            let right = capture.pointee.right
        else {
            ioData.pointee.zeroFill()
            return RenderStatus.noErr
        }
        for index in 0..<Int(ioData.pointee.bufferCount) {
            guard let data = ioData.pointee.buffers[index].data else { continue }
            data.assumingMemoryBound(to: Float.self).update(from: (index == 0 ? left : right) + start, count: frames)
        }
        return RenderStatus.noErr
    }
}

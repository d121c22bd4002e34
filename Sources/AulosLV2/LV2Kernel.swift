import AulosCore
import AulosMIDI
import AulosRealtime
import CLV2Log
import CLilv

/// Render side of an LV2 unit: the instance, the buffers its ports are connected to, and the atom
/// sequence each run's MIDI is written into.
///
/// Audio: every audio port has a buffer of its own here (inputs the plugin reads, outputs it writes), so a
/// plugin that is not in-place safe never gets one buffer twice. Ports pair into stereo buses in port
/// order (ports 0–1 bus 0, 2–3 bus 1, …; a last odd port is a mono bus): the plugin runs once per render
/// cycle, whichever output bus is pulled first, after every input bus is pulled; each bus is then served
/// from the output buffers.
///
/// Threads: built and freed on the control thread; `render` on the render thread (the plugin's `run()`:
/// LV2's audio threading class).
struct LV2Kernel {
    /// The running instance (and its worker), swapped at a slice's start when a new one is published.
    let instances: UnsafeMutablePointer<LV2InstanceSlot>
    let parameters: ParameterKernel
    let events: MIDIEventList
    /// One float per port (control ports read and write here; others unused).
    let controlValues: UnsafeMutablePointer<Float>
    /// The control input ports, in parameter-slot order.
    let controlInputs: UnsafeMutablePointer<Int>
    let controlInputCount: Int
    /// Atom ports: the MIDI input sequence (every atom input gets it) and one buffer per atom output.
    let atomInput: UnsafeMutableRawPointer
    let atomOutputs: UnsafeMutableRawPointer
    let atomOutputPorts: UnsafeMutablePointer<Int>
    let atomOutputCount: Int
    /// Bytes of the atom input (`LV2PluginInfo.atomBufferSize`: 8 KiB, or what the plugin's ports ask) and
    /// of each atom output (`atomOutputSize`).
    let atomCapacity: Int
    let atomOutputCapacity: Int
    /// Room kept for MIDI when property messages are written first.
    static var midiRoom: Int { 2048 }
    /// Audio ports (inputs, then outputs, by port index) and their buffers, `maximumFrames` each, in the
    /// same order.
    let audioPorts: UnsafeMutablePointer<Int>
    let audioInputCount: Int
    let audioOutputCount: Int
    let audioBuffers: UnsafeMutablePointer<Float>
    /// A stereo list each input bus is pulled through (its buffers pointed at the bus's port buffers, or
    /// at the scratch pair for a mono port), and the cycle the plugin last ran in.
    let pullList: UnsafeMutablePointer<AudioBufferList>
    let pullScratch: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    let lastCycle: UnsafeMutablePointer<UInt64>
    /// Non-finite samples the plugin produced and the unit silenced (the render thread adds; the control
    /// thread reads).
    let nonFiniteSamples: UnsafeMutablePointer<Int>
    let maximumFrames: Int
    let sequenceType: UInt32
    let chunkType: UInt32
    let midiType: UInt32
    /// The ports that keep their buffers (controls, atoms), to connect a new instance to.
    let fixedPorts:
        (control: UnsafeMutablePointer<Int>, controlCount: Int, atomIn: UnsafeMutablePointer<Int>, atomInCount: Int)
    /// Whether program changes select the plugin's presets (it has some) rather than reaching it, and the
    /// ring that carries them to the control thread: preset number bank × 128 + program, where the bank is
    /// each channel's last bank select, CC 0 × 128 + CC 32 (kept here: `banks`, one per channel).
    let programsSelectPresets: Bool
    let programRequests: SPSCRing<UInt32>
    let banks: UnsafeMutablePointer<UInt32>
    /// The host's transport as time:Position, for a plugin that takes it and a host that gives it.
    let timePosition: LV2TimePosition?
    /// patch:Set messages from the control thread (plugin properties), each an atom ready to send.
    let propertyMessages: SPSCByteRing
    /// A MIDI effect's destination: the event list of what plays after it (the next MIDI effect, or the
    /// part's instrument), which gets every MIDI event the plugin writes on its atom outputs, at its frame.
    let midiOutput: MIDIEventList?

    init(
        instances: UnsafeMutablePointer<LV2InstanceSlot>, parameters: ParameterKernel, events: MIDIEventList,
        controlPorts: [Int], portCount: Int, atomInputs: [Int], atomOutputs: [Int], audioInputs: [Int],
        audioOutputs: [Int], maximumFrames: Int, pullList: UnsafeMutablePointer<AudioBufferList>,
        sequenceType: UInt32, chunkType: UInt32, midiType: UInt32, controlInputs: [Int],
        programsSelectPresets: Bool, programRequests: SPSCRing<UInt32>,
        timePosition: LV2TimePosition?, propertyMessages: SPSCByteRing, midiOutput: MIDIEventList?,
        atomCapacity: Int, atomOutputCapacity: Int
    ) {
        (self.atomCapacity, self.atomOutputCapacity) = (atomCapacity, atomOutputCapacity)
        self.midiOutput = midiOutput
        self.timePosition = timePosition
        self.propertyMessages = propertyMessages
        self.programsSelectPresets = programsSelectPresets
        self.programRequests = programRequests
        banks = .allocate(capacity: 16)
        banks.initialize(repeating: 0, count: 16)
        self.instances = instances
        self.parameters = parameters
        self.events = events
        self.maximumFrames = maximumFrames
        self.pullList = pullList
        pullScratch = (pullList.pointee.floatChannel(0), pullList.pointee.floatChannel(1))
        (self.sequenceType, self.chunkType, self.midiType) = (sequenceType, chunkType, midiType)
        controlValues = .allocate(capacity: max(1, portCount))
        controlValues.initialize(repeating: 0, count: max(1, portCount))
        self.controlInputs = .allocate(capacity: max(1, controlInputs.count))
        self.controlInputs.initialize(from: controlInputs, count: controlInputs.count)
        controlInputCount = controlInputs.count
        atomInput = .allocate(byteCount: atomCapacity, alignment: 8)
        atomInput.initializeMemory(as: UInt8.self, repeating: 0, count: atomCapacity)
        self.atomOutputs = .allocate(byteCount: max(1, atomOutputs.count) * atomOutputCapacity, alignment: 8)
        self.atomOutputs.initializeMemory(
            as: UInt8.self, repeating: 0, count: max(1, atomOutputs.count) * atomOutputCapacity)
        atomOutputPorts = .allocate(capacity: max(1, atomOutputs.count))
        atomOutputPorts.initialize(from: atomOutputs, count: atomOutputs.count)
        atomOutputCount = atomOutputs.count
        let audio = audioInputs + audioOutputs
        (audioInputCount, audioOutputCount) = (audioInputs.count, audioOutputs.count)
        audioPorts = .allocate(capacity: max(1, audio.count))
        audioPorts.initialize(from: audio, count: audio.count)
        audioBuffers = .allocate(capacity: max(1, audio.count) * maximumFrames)
        audioBuffers.initialize(repeating: 0, count: max(1, audio.count) * maximumFrames)
        lastCycle = .allocate(capacity: 1)
        lastCycle.initialize(to: .max)
        nonFiniteSamples = .allocate(capacity: 1)
        nonFiniteSamples.initialize(to: 0)
        let control = UnsafeMutablePointer<Int>.allocate(capacity: max(1, controlPorts.count))
        control.initialize(from: controlPorts, count: controlPorts.count)
        let atomIn = UnsafeMutablePointer<Int>.allocate(capacity: max(1, atomInputs.count))
        atomIn.initialize(from: atomInputs, count: atomInputs.count)
        fixedPorts = (control, controlPorts.count, atomIn, atomInputs.count)
        connectFixedPorts(instances.pointee.current.pointee.instance)
    }

    /// Connects the ports that keep their buffers (controls, atoms) of `instance`: the first, and each
    /// one made later to take over (control thread). Audio ports are connected for each run.
    func connectFixedPorts(_ instance: UnsafeMutablePointer<LilvInstance>) {
        for index in 0..<fixedPorts.controlCount {
            let port = fixedPorts.control[index]
            lilv_instance_connect_port(instance, UInt32(port), controlValues + port)
        }
        for index in 0..<fixedPorts.atomInCount {
            lilv_instance_connect_port(instance, UInt32(fixedPorts.atomIn[index]), atomInput)
        }
        for index in 0..<atomOutputCount {
            lilv_instance_connect_port(
                instance, UInt32(atomOutputPorts[index]), atomOutputs + index * atomOutputCapacity)
        }
    }

    func deallocate() {
        controlValues.deallocate()
        controlInputs.deallocate()
        banks.deallocate()
        atomInput.deallocate()
        atomOutputs.deallocate()
        atomOutputPorts.deallocate()
        audioPorts.deallocate()
        audioBuffers.deallocate()
        lastCycle.deallocate()
        nonFiniteSamples.deallocate()
        timePosition?.deallocate()
        fixedPorts.control.deallocate()
        fixedPorts.atomIn.deallocate()
    }

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, bus, frameCount, io in
        state.assumingMemoryBound(to: LV2Kernel.self).pointee.render(
            inputs: inputs, flags: flags, timeStamp: timeStamp, bus: Int(bus), frameCount: Int(frameCount), io: io)
    }

    /// The buffer of audio port `slot` (inputs first, then outputs).
    @inline(__always)
    func buffer(_ slot: Int) -> UnsafeMutablePointer<Float> { audioBuffers + slot * maximumFrames }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, bus: Int, frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        // With one output bus the plugin runs on every pull, straight into the caller's buffers; with
        // more, once per cycle into its own, and each bus is copied out.
        let direct = audioOutputCount <= 2
        io.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
        let cycle = RenderInputs.cycle(inputs)
        if direct || lastCycle.pointee != cycle {
            lastCycle.pointee = cycle
            let status = pullInputs(inputs, timeStamp: timeStamp, frameCount: frameCount)
            if status != 0 { return status }
            instances.pointee.adoptPending()
            runSlice(frameCount: frameCount, sampleTime: timeStamp.pointee.sampleTime, io: direct ? io : nil)
        }
        // This bus's ports: a mono one feeds both channels; a plugin with no audio out is flagged silent.
        let first = 2 * bus
        guard first < audioOutputCount else {
            for channel in 0..<Int(io.pointee.bufferCount) {
                let out = io.pointee.floatChannel(channel)
                for index in 0..<frameCount { out[index] = 0 }
            }
            flags.pointee.insert(.outputIsSilence)
            return 0
        }
        flags.pointee.remove(.outputIsSilence)
        let channels = Int(io.pointee.bufferCount)
        var nonFinite = 0
        for channel in 0..<channels {
            let out = io.pointee.floatChannel(channel)
            let port = first + channel
            if port >= audioOutputCount {
                // A mono output feeds the second channel too (already checked on the first).
                let from = io.pointee.floatChannel(0)
                for index in 0..<frameCount { out[index] = from[index] }
                continue
            }
            if !direct {
                let from = buffer(audioInputCount + port)
                for index in 0..<frameCount { out[index] = from[index] }
            }
            nonFinite &+= Self.silenceNonFinite(out, count: frameCount)
        }
        if nonFinite > 0 { nonFiniteSamples.pointee &+= nonFinite }
        return 0
    }

    /// A NaN or infinity from a plugin would stay in every feedback loop after it (a reverb, a filter) and
    /// reach the speakers as full scale: such samples become silence. Returns how many there were. The
    /// check is one SIMD add per 8 samples: a sum of samples is finite unless one of them is NaN or
    /// infinite (or finite ones overflow it, which only costs a search that finds nothing); only a slice
    /// that fails it is searched.
    @inline(__always) @_noAllocation @_noLocks
    static func silenceNonFinite(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
        var lanes = SIMD8<Float>(repeating: 0)
        var next = samples
        let end = samples + count
        while next + 8 <= end {
            lanes += UnsafeRawPointer(next).loadUnaligned(as: SIMD8<Float>.self)
            next += 8
        }
        var sum = lanes.sum()
        while next < end {
            sum += next.pointee
            next += 1
        }
        if sum.isFinite { return 0 }
        var found = 0
        for index in 0..<count where !samples[index].isFinite {
            samples[index] = 0
            found += 1
        }
        return found
    }

    /// Every input bus pulled into its ports' buffers (a mono port hears the bus's two channels mixed; an
    /// unconnected bus is silence).
    @_noAllocation @_noLocks
    func pullInputs(_ inputs: UnsafeRawPointer, timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: Int)
        -> AulosStatus
    {
        var bus = 0
        while 2 * bus < audioInputCount {
            var pulledFlags = RenderActionFlags(rawValue: 0)
            let pair = 2 * bus + 1 < audioInputCount
            // A pair is pulled straight into its ports' buffers; a mono port through the scratch pair.
            let (intoLeft, intoRight) = pair ? (buffer(2 * bus), buffer(2 * bus + 1)) : pullScratch
            pullList.pointee.buffers[0].data = UnsafeMutableRawPointer(intoLeft)
            pullList.pointee.buffers[1].data = UnsafeMutableRawPointer(intoRight)
            pullList.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
            let status = RenderInputs.pull(
                inputs, bus: UInt32(bus), flags: &pulledFlags, timeStamp: timeStamp, frameCount: UInt32(frameCount),
                into: pullList)
            if status != 0 && status != RenderStatus.noConnection { return status }
            // (A source may hand back buffers of its own instead of filling these.)
            let (left, right) = (pullList.pointee.floatChannel(0), pullList.pointee.floatChannel(1))
            if pair {
                if left != intoLeft { for index in 0..<frameCount { intoLeft[index] = left[index] } }
                if right != intoRight { for index in 0..<frameCount { intoRight[index] = right[index] } }
            } else {
                let to = buffer(2 * bus)
                for index in 0..<frameCount { to[index] = 0.5 * (left[index] + right[index]) }
            }
            bus += 1
        }
        return 0
    }

    /// The plugin's runs for one slice: split at each scheduled parameter event, so a change lands on its
    /// frame; MIDI events go to the run they fall in, at their frame within it.
    @_noAllocation @_noLocks
    func runSlice(frameCount: Int, sampleTime: Int64, io: UnsafeMutablePointer<AudioBufferList>?) {
        timePosition?.update(sampleTime: sampleTime, frameCount: frameCount)
        parameters.beginSlice()
        events.beginSlice(frameCount: frameCount)
        var start = 0
        while start < frameCount {
            parameters.applyEvents(dueAt: start)
            let end = parameters.nextEventOffset(after: start, frameCount: frameCount)
            for slot in 0..<controlInputCount { controlValues[controlInputs[slot]] = parameters.value(slot) }
            writeMIDISequence(from: start, to: end)
            run(from: start, frames: end - start, io: io)
            if let midiOutput { forwardMIDI(from: start, into: midiOutput) }
            start = end
        }
        events.endSlice(frameCount: frameCount)
        parameters.endSlice(frameCount: frameCount)
    }

    /// A MIDI effect's slice (`MIDIEventFeed`): run from the instrument's event list as it begins its slice,
    /// after every source has delivered into this plugin's list; what it writes goes on into that list.
    static let feedMIDI: MIDIEventFeed.Function = { state, frameCount in
        guard let state else { return }
        let kernel = state.assumingMemoryBound(to: LV2Kernel.self)
        kernel.pointee.instances.pointee.adoptPending()
        kernel.pointee.runSlice(frameCount: frameCount, sampleTime: 0, io: nil)
    }

    /// The MIDI channel messages of the run that began at frame `start`, read from the plugin's atom
    /// outputs (sequences of frame-stamped events), inserted into `list` at their frames. Anything else a
    /// plugin writes there (a patch message, sysex) is not for the instrument.
    @_noAllocation @_noLocks
    func forwardMIDI(from start: Int, into list: MIDIEventList) {
        for index in 0..<atomOutputCount {
            let buffer = UnsafeRawPointer(atomOutputs + index * atomOutputCapacity)
            let size = Int(buffer.load(as: UInt32.self))
            guard buffer.load(fromByteOffset: 4, as: UInt32.self) == sequenceType, size <= atomOutputCapacity - 8
            else { continue }
            // Events follow the sequence body's 8-byte header, each padded to 8 bytes.
            var offset = 16
            while offset + 16 <= 8 + size {
                let frames = buffer.load(fromByteOffset: offset, as: Int64.self)
                let length = Int(buffer.load(fromByteOffset: offset + 8, as: UInt32.self))
                let type = buffer.load(fromByteOffset: offset + 12, as: UInt32.self)
                guard offset + 16 + length <= 8 + size else { break }
                let status = length >= 1 ? buffer.load(fromByteOffset: offset + 16, as: UInt8.self) : 0
                if type == midiType && length <= 3 && status >= 0x80 && status < 0xF0 {
                    let data1 = length >= 2 ? buffer.load(fromByteOffset: offset + 17, as: UInt8.self) : 0
                    let data2 = length >= 3 ? buffer.load(fromByteOffset: offset + 18, as: UInt8.self) : 0
                    let frame = start + Int(max(0, min(frames, Int64(maximumFrames))))
                    list.insert(
                        MIDIEvent(offset: UInt32(frame), status: status, data1: data1 & 0x7F, data2: data2 & 0x7F))
                }
                offset += 16 + (length + 7) & ~7
            }
        }
    }

    /// One `run()` of `frames` frames from frame `start` of the slice: atom outputs given room, audio
    /// ports connected at that frame (outputs into `io` when given: the plugin's single output bus), then
    /// the worker's responses delivered.
    @_noAllocation @_noLocks
    func run(from start: Int, frames: Int, io: UnsafeMutablePointer<AudioBufferList>?) {
        for index in 0..<atomOutputCount {
            let buffer = atomOutputs + index * atomOutputCapacity
            buffer.storeBytes(of: UInt32(atomOutputCapacity - 8), as: UInt32.self)
            buffer.storeBytes(of: chunkType, toByteOffset: 4, as: UInt32.self)
        }
        let live = instances.pointee.current.pointee
        let (instance, worker) = (live.instance, live.worker)
        let ports = audioPorts
        let (inputCount, count) = (audioInputCount, audioInputCount + audioOutputCount)
        let (buffers, stride) = (audioBuffers, maximumFrames)
        let channels = io.map { Int($0.pointee.bufferCount) } ?? 0
        _unsafePerformance {
            // Marks run() for the host's callbacks: the worker queues what is scheduled, the log drops.
            aulos_lv2_log_set_render_thread(1)
            for slot in 0..<count {
                var target = buffers + slot * stride + start
                if let io, slot >= inputCount, slot - inputCount < channels {
                    target = io.pointee.floatChannel(slot - inputCount) + start
                }
                lilv_instance_connect_port(instance, UInt32(ports[slot]), target)
            }
            lilv_instance_run(instance, UInt32(frames))
            LV2Worker.deliverResponses(worker)
            aulos_lv2_log_set_render_thread(0)
        }
    }

    /// The MIDI events of frames `start..<end` as an atom sequence: a header (size, type, then the
    /// frame-time unit and padding), then each event (frame within the run, size, type, bytes, padded to
    /// 8), after a time:Position object when the transport changed. A program change is not passed on
    /// to a plugin with presets: it goes to the control thread, which selects that preset
    /// (`programRequests`), and so do bank selects (CC 0, CC 32), which pick the bank of 128 it is in.
    /// Events that would not fit wait for the next run (8 KiB holds about 340).
    @_noAllocation @_noLocks
    func writeMIDISequence(from start: Int, to end: Int) {
        var offset = 16
        // The transport first, at the slice's first frame, when it changed.
        if start == 0, let timePosition, timePosition.state.pointee.due {
            offset = timePosition.write(into: atomInput, at: offset)
        }
        // Then the properties the control thread set, as many as fit beside room for MIDI (the rest wait
        // for the next run).
        while start == 0, let size = propertyMessages.peekSize(),
            offset + 8 + (size + 7) & ~7 <= atomCapacity - Self.midiRoom
        {
            atomInput.storeBytes(of: Int64(0), toByteOffset: offset, as: Int64.self)
            _ = propertyMessages.read(into: atomInput + offset + 8, scratchSize: size)
            offset += 8 + (size + 7) & ~7
        }
        while offset + 24 <= atomCapacity, let event = events.popDue(at: end - 1) {
            // Aulos's internal events (a tuning change, 0xF4/0xF5) are not MIDI a plugin should see, nor are MIDI
            // 2.0's per-note messages (statuses below 0x80): a plugin takes MIDI 1.0 bytes, which have no form for
            // them. (A MIDI 2.0 message otherwise arrives as its MIDI 1.0 bytes, scaled down.)
            if event.status >= 0xF0 || event.status < 0x80 { continue }
            if programsSelectPresets {
                let channel = Int(event.status & 0x0F)
                if event.status & 0xF0 == 0xC0 {
                    _ = programRequests.push(banks[channel] &* 128 &+ UInt32(event.data1))
                    continue
                }
                // Bank select is the host's, as the program change is.
                if event.status & 0xF0 == 0xB0 && event.data1 == 0 {
                    banks[channel] = UInt32(event.data2) << 7 | banks[channel] & 0x7F
                    continue
                }
                if event.status & 0xF0 == 0xB0 && event.data1 == 32 {
                    banks[channel] = banks[channel] & ~0x7F | UInt32(event.data2)
                    continue
                }
            }
            let length: UInt32 = event.status & 0xE0 == 0xC0 ? 2 : 3
            atomInput.storeBytes(of: Int64(max(0, Int(event.offset) - start)), toByteOffset: offset, as: Int64.self)
            atomInput.storeBytes(of: length, toByteOffset: offset + 8, as: UInt32.self)
            atomInput.storeBytes(of: midiType, toByteOffset: offset + 12, as: UInt32.self)
            atomInput.storeBytes(of: event.status, toByteOffset: offset + 16, as: UInt8.self)
            atomInput.storeBytes(of: event.data1, toByteOffset: offset + 17, as: UInt8.self)
            atomInput.storeBytes(of: event.data2, toByteOffset: offset + 18, as: UInt8.self)
            offset += 24
        }
        atomInput.storeBytes(of: UInt32(offset - 8), as: UInt32.self)
        atomInput.storeBytes(of: sequenceType, toByteOffset: 4, as: UInt32.self)
        atomInput.storeBytes(of: UInt64(0), toByteOffset: 8, as: UInt64.self)
    }
}

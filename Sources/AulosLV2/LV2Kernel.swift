import AulosCore
import AulosMIDI
import AulosRealtime
import CLV2Log
import CLilv

/// Render side of an LV2 unit: the instance, the buffers its ports are connected to, and the atom
/// sequence each slice's MIDI is written into.
///
/// Threads: built and freed on the control thread; `render` on the render thread (the plugin's `run()`:
/// LV2's audio threading class).
struct LV2Kernel {
    let instance: UnsafeMutablePointer<LilvInstance>
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
    static var atomCapacity: Int { 8192 }
    /// Audio port indices (−1: none) and the input copies the plugin reads (so no port shares a buffer).
    let audioInputs: (Int, Int)
    let audioOutputs: (Int, Int)
    let inputCopy: UnsafeMutablePointer<Float>
    let maximumFrames: Int
    let sequenceType: UInt32
    let chunkType: UInt32
    let midiType: UInt32
    /// The instance's worker: its responses are delivered after each `run()`.
    let worker: UnsafeMutablePointer<LV2Worker.Shared>
    /// Whether program changes select the plugin's presets (it has some) rather than reaching it, and the
    /// ring that carries them to the control thread.
    let programsSelectPresets: Bool
    let programRequests: SPSCRing<UInt8>

    init(
        instance: UnsafeMutablePointer<LilvInstance>, parameters: ParameterKernel, events: MIDIEventList,
        controlPorts: [Int], portCount: Int, atomInputs: [Int], atomOutputs: [Int], audioInputs: [Int],
        audioOutputs: [Int], maximumFrames: Int, sequenceType: UInt32, chunkType: UInt32, midiType: UInt32,
        controlInputs: [Int], worker: UnsafeMutablePointer<LV2Worker.Shared>, programsSelectPresets: Bool,
        programRequests: SPSCRing<UInt8>
    ) {
        self.worker = worker
        self.programsSelectPresets = programsSelectPresets
        self.programRequests = programRequests
        self.instance = instance
        self.parameters = parameters
        self.events = events
        self.maximumFrames = maximumFrames
        (self.sequenceType, self.chunkType, self.midiType) = (sequenceType, chunkType, midiType)
        controlValues = .allocate(capacity: max(1, portCount))
        controlValues.initialize(repeating: 0, count: max(1, portCount))
        self.controlInputs = .allocate(capacity: max(1, controlInputs.count))
        self.controlInputs.initialize(from: controlInputs, count: controlInputs.count)
        controlInputCount = controlInputs.count
        atomInput = .allocate(byteCount: Self.atomCapacity, alignment: 8)
        atomInput.initializeMemory(as: UInt8.self, repeating: 0, count: Self.atomCapacity)
        self.atomOutputs = .allocate(byteCount: max(1, atomOutputs.count) * Self.atomCapacity, alignment: 8)
        self.atomOutputs.initializeMemory(
            as: UInt8.self, repeating: 0, count: max(1, atomOutputs.count) * Self.atomCapacity)
        atomOutputPorts = .allocate(capacity: max(1, atomOutputs.count))
        atomOutputPorts.initialize(from: atomOutputs, count: atomOutputs.count)
        atomOutputCount = atomOutputs.count
        self.audioInputs = (audioInputs.first ?? -1, audioInputs.count > 1 ? audioInputs[1] : -1)
        self.audioOutputs = (audioOutputs.first ?? -1, audioOutputs.count > 1 ? audioOutputs[1] : -1)
        inputCopy = .allocate(capacity: 2 * maximumFrames)
        inputCopy.initialize(repeating: 0, count: 2 * maximumFrames)
        // Ports that keep their buffers: controls, atoms.
        for port in controlPorts { lilv_instance_connect_port(instance, UInt32(port), controlValues + port) }
        for port in atomInputs { lilv_instance_connect_port(instance, UInt32(port), atomInput) }
        for (index, port) in atomOutputs.enumerated() {
            lilv_instance_connect_port(instance, UInt32(port), self.atomOutputs + index * Self.atomCapacity)
        }
    }

    func deallocate() {
        controlValues.deallocate()
        controlInputs.deallocate()
        atomInput.deallocate()
        atomOutputs.deallocate()
        atomOutputPorts.deallocate()
        inputCopy.deallocate()
    }

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, _, frameCount, io in
        state.assumingMemoryBound(to: LV2Kernel.self).pointee.render(
            inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: Int(frameCount), io: io)
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: Int, io: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        if audioInputs.0 >= 0 {
            // An effect: its input pulled into the output buffers, then copied for the plugin to read.
            let status = RenderInputs.pullInPlace(
                inputs, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: io)
            if status != 0 { return status }
            let channels = Int(io.pointee.bufferCount)
            if audioInputs.1 < 0 && channels > 1 {
                // A mono input hears both channels.
                let (left, right) = (io.pointee.floatChannel(0), io.pointee.floatChannel(1))
                for index in 0..<frameCount { inputCopy[index] = 0.5 * (left[index] + right[index]) }
            } else {
                for channel in 0..<channels {
                    let from = io.pointee.floatChannel(channel)
                    let to = inputCopy + channel * maximumFrames
                    for index in 0..<frameCount { to[index] = from[index] }
                }
            }
        } else {
            io.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
        }
        if audioOutputs.0 < 0 {
            // No audio out (a MIDI or control plugin): silence, flagged.
            for channel in 0..<Int(io.pointee.bufferCount) {
                let out = io.pointee.floatChannel(channel)
                for index in 0..<frameCount { out[index] = 0 }
            }
            flags.pointee.insert(.outputIsSilence)
        } else {
            flags.pointee.remove(.outputIsSilence)
        }
        // The run is split at each scheduled parameter event, so a change lands on its frame; MIDI events
        // go to the segment they fall in, at their frame within it.
        parameters.beginSlice()
        events.beginSlice()
        var start = 0
        while start < frameCount {
            parameters.applyEvents(dueAt: start)
            let end = parameters.nextEventOffset(after: start, frameCount: frameCount)
            for slot in 0..<controlInputCount { controlValues[controlInputs[slot]] = parameters.value(slot) }
            writeMIDISequence(from: start, to: end)
            run(from: start, frames: end - start, io: io)
            start = end
        }
        events.endSlice(frameCount: frameCount)
        parameters.endSlice(frameCount: frameCount)
        return 0
    }

    /// One `run()` of `frames` frames from frame `start` of the slice: atom outputs given room, audio
    /// ports connected at that frame, then the worker's responses delivered.
    @_noAllocation @_noLocks
    func run(from start: Int, frames: Int, io: UnsafeMutablePointer<AudioBufferList>) {
        for index in 0..<atomOutputCount {
            let buffer = atomOutputs + index * Self.atomCapacity
            buffer.storeBytes(of: UInt32(Self.atomCapacity - 8), as: UInt32.self)
            buffer.storeBytes(of: chunkType, toByteOffset: 4, as: UInt32.self)
        }
        let instance = self.instance
        let (inLeft, inRight) = audioInputs
        let (outLeft, outRight) = audioOutputs
        let second = Int(io.pointee.bufferCount) > 1 ? 1 : 0
        let inputs = (inputCopy + start, inputCopy + second * maximumFrames + start)
        let outputs = (io.pointee.floatChannel(0) + start, io.pointee.floatChannel(second) + start)
        let worker = self.worker
        _unsafePerformance {
            // Marks run() for the host's callbacks: the worker queues what is scheduled, the log drops.
            aulos_lv2_log_set_render_thread(1)
            if inLeft >= 0 { lilv_instance_connect_port(instance, UInt32(inLeft), inputs.0) }
            if inRight >= 0 { lilv_instance_connect_port(instance, UInt32(inRight), inputs.1) }
            if outLeft >= 0 { lilv_instance_connect_port(instance, UInt32(outLeft), outputs.0) }
            if outRight >= 0 { lilv_instance_connect_port(instance, UInt32(outRight), outputs.1) }
            lilv_instance_run(instance, UInt32(frames))
            LV2Worker.deliverResponses(worker)
            aulos_lv2_log_set_render_thread(0)
        }
        // A mono output feeds both channels.
        if outRight < 0 && outLeft >= 0 && second == 1 {
            for index in 0..<frames { outputs.1[index] = outputs.0[index] }
        }
    }

    /// The MIDI events of frames `start..<end` as an atom sequence: a header (size, type, then the
    /// frame-time unit and padding), then each event (frame within the run, size, type, bytes, padded to
    /// 8). A program change is not passed on to a plugin with presets: it goes to the control thread,
    /// which selects that preset (`programRequests`). Events that would not fit wait for the next run...
    /// none do at 8 KiB (about 340 events).
    @_noAllocation @_noLocks
    func writeMIDISequence(from start: Int, to end: Int) {
        var offset = 16
        while offset + 24 <= Self.atomCapacity, let event = events.popDue(at: end - 1) {
            if event.status & 0xF0 == 0xC0 && programsSelectPresets {
                _ = programRequests.push(event.data1)
                continue
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

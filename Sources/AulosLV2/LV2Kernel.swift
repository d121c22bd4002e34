import AulosCore
import AulosMIDI
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

    init(
        instance: UnsafeMutablePointer<LilvInstance>, parameters: ParameterKernel, events: MIDIEventList,
        controlPorts: [Int], portCount: Int, atomInputs: [Int], atomOutputs: [Int], audioInputs: [Int],
        audioOutputs: [Int], maximumFrames: Int, sequenceType: UInt32, chunkType: UInt32, midiType: UInt32,
        controlInputs: [Int]
    ) {
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
            for channel in 0..<Int(io.pointee.bufferCount) {
                let from = io.pointee.floatChannel(channel)
                let to = inputCopy + channel * maximumFrames
                for index in 0..<frameCount { to[index] = from[index] }
            }
        } else {
            io.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
        }
        flags.pointee.remove(.outputIsSilence)
        // Parameters: the values at the start of the slice (events due in it applied first).
        parameters.beginSlice()
        parameters.applyEvents(dueAt: frameCount)
        for slot in 0..<controlInputCount { controlValues[controlInputs[slot]] = parameters.value(slot) }
        parameters.endSlice(frameCount: frameCount)
        writeMIDISequence(frameCount: frameCount)
        // Atom outputs: room for the plugin to write.
        for index in 0..<atomOutputCount {
            let buffer = atomOutputs + index * Self.atomCapacity
            buffer.storeBytes(of: UInt32(Self.atomCapacity - 8), as: UInt32.self)
            buffer.storeBytes(of: chunkType, toByteOffset: 4, as: UInt32.self)
        }
        let instance = self.instance
        let (inLeft, inRight) = audioInputs
        let (outLeft, outRight) = audioOutputs
        let copy = inputCopy
        let second = Int(io.pointee.bufferCount) > 1 ? 1 : 0
        let left = io.pointee.floatChannel(0)
        let right = io.pointee.floatChannel(second)
        let frames = maximumFrames
        _unsafePerformance {
            if inLeft >= 0 { lilv_instance_connect_port(instance, UInt32(inLeft), copy) }
            if inRight >= 0 { lilv_instance_connect_port(instance, UInt32(inRight), copy + second * frames) }
            lilv_instance_connect_port(instance, UInt32(outLeft), left)
            if outRight >= 0 { lilv_instance_connect_port(instance, UInt32(outRight), right) }
            lilv_instance_run(instance, UInt32(frameCount))
        }
        return 0
    }

    /// This slice's MIDI events as an atom sequence: a header (size, type, then the frame-time unit and
    /// padding), then each event (frame, size, type, bytes, padded to 8). Events that would not fit wait
    /// for the next slice... none do at 8 KiB (about 340 events a slice).
    @_noAllocation @_noLocks
    func writeMIDISequence(frameCount: Int) {
        events.beginSlice()
        var offset = 16
        while offset + 24 <= Self.atomCapacity, let event = events.popDue(at: frameCount - 1) {
            let length: UInt32 = event.status & 0xE0 == 0xC0 ? 2 : 3
            atomInput.storeBytes(of: Int64(event.offset), toByteOffset: offset, as: Int64.self)
            atomInput.storeBytes(of: length, toByteOffset: offset + 8, as: UInt32.self)
            atomInput.storeBytes(of: midiType, toByteOffset: offset + 12, as: UInt32.self)
            atomInput.storeBytes(of: event.status, toByteOffset: offset + 16, as: UInt8.self)
            atomInput.storeBytes(of: event.data1, toByteOffset: offset + 17, as: UInt8.self)
            atomInput.storeBytes(of: event.data2, toByteOffset: offset + 18, as: UInt8.self)
            offset += 24
        }
        events.endSlice(frameCount: frameCount)
        atomInput.storeBytes(of: UInt32(offset - 8), as: UInt32.self)
        atomInput.storeBytes(of: sequenceType, toByteOffset: 4, as: UInt32.self)
        atomInput.storeBytes(of: UInt64(0), toByteOffset: 8, as: UInt64.self)
    }
}

import AulosCore

/// Core Audio's music-device API: an instrument unit that takes MIDI.
///
/// `midiEvent` from a control or MIDI thread lands `offset` frames into the next slice rendered; from the
/// render thread (the graph's pre-render notify), a `MIDIScheduler` inserts into `midiInput.list` directly.
public protocol MusicDevice: AudioUnit {
    /// The instrument's MIDI input (its render side is the kernel's event list).
    var midiInput: MIDIEventQueue { get }
    /// Voices sounding, the host's limit on them under overload, and the voices shed to meet it.
    var voiceBudget: VoiceBudget { get }
    /// The most voices the instrument can sound (its polyphony).
    var polyphony: UInt32 { get }
    /// Core Audio's MusicDeviceMIDIEvent.
    func midiEvent(status: UInt8, data1: UInt8, data2: UInt8, offset: UInt32) throws(AudioUnitError)
    /// Core Audio's MusicDeviceSysEx: the bytes between F0 and F7.
    func sysEx(_ data: [UInt8]) throws(AudioUnitError)
}

extension MusicDevice {
    public func midiEvent(status: UInt8, data1: UInt8, data2: UInt8, offset: UInt32 = 0) throws(AudioUnitError) {
        try checkAlive()
        guard status >= 0x80, status < 0xF0 else {
            throw AudioUnitError(
                .invalidPropertyValue, "\(name): status 0x\(String(status, radix: 16)) is not a channel message")
        }
        guard midiInput.send(status: status, data1: data1, data2: data2, offset: offset) else {
            throw AudioUnitError(
                .cannotDoInCurrentContext, "\(name): MIDI input queue is full (is the unit rendering?)")
        }
    }

    /// The default MusicDeviceSysEx: GM System On (and Roland GS / Yamaha XG resets) silence every channel
    /// and reset its controllers; other system-exclusive messages are ignored.
    public func sysEx(_ data: [UInt8]) throws(AudioUnitError) {
        guard SystemReset.isReset(data) else { return }
        for message in SystemReset.channelMessages {
            try midiEvent(status: message.status, data1: message.data1, data2: message.data2)
        }
    }

    /// Sends a channel message.
    public func send(_ message: MIDIMessage, offset: UInt32 = 0) throws(AudioUnitError) {
        guard let (status, data1, data2) = message.normalized.channelBytes else {
            throw AudioUnitError(.invalidPropertyValue, "\(name): \(message) is not a channel message")
        }
        try midiEvent(status: status, data1: data1, data2: data2, offset: offset)
    }
}

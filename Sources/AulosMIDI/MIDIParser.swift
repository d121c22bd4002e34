/// Turns a MIDI byte stream (a serial port, a raw MIDI device, an SMF track's event bytes) into messages.
///
/// Handles what real streams contain: running status; system real-time bytes (F8–FF) interleaved anywhere,
/// even inside another message, delivered at once without disturbing it; system exclusive spanning any
/// number of `parse` calls; and garbage — stray data bytes, a status byte cutting a message short, an
/// undefined status — which is counted and skipped until the next status byte (resynchronisation).
///
/// Threads: one thread at a time (the MIDI input thread). Channel messages are produced without
/// allocating; a system-exclusive message allocates its array when it completes.
public struct MIDIParser: Sendable {
    /// System exclusive longer than this is dropped (and counted), so a stuck F0 cannot eat memory.
    public let maximumSysExLength: Int

    private var runningStatus: UInt8 = 0
    private var status: UInt8 = 0
    private var data: (UInt8, UInt8) = (0, 0)
    private var dataCount = 0
    private var inSysEx = false
    private var sysEx: [UInt8] = []
    private var sysExOverflowed = false

    /// Bytes thrown away while resynchronising.
    public private(set) var discardedBytes = 0
    /// System-exclusive messages cut off by another status byte (dropped).
    public private(set) var truncatedSysEx = 0
    /// System-exclusive messages dropped for exceeding `maximumSysExLength`.
    public private(set) var oversizedSysEx = 0

    public init(maximumSysExLength: Int = 64 * 1024) {
        self.maximumSysExLength = maximumSysExLength
        sysEx.reserveCapacity(min(maximumSysExLength, 4096))
    }

    /// Data bytes a status byte takes (for channel and system-common messages).
    static func dataLength(_ status: UInt8) -> Int {
        switch status {
        case 0xC0...0xDF, 0xF1, 0xF3: 1
        case 0x80...0xBF, 0xE0...0xEF, 0xF2: 2
        default: 0
        }
    }

    /// Forgets any partial message and the running status (e.g. after a device reconnects).
    public mutating func reset() {
        runningStatus = 0
        status = 0
        dataCount = 0
        inSysEx = false
        sysEx.removeAll(keepingCapacity: true)
    }

    public mutating func parse<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ handle: (MIDIMessage) -> Void) {
        for byte in bytes { parse(byte: byte, handle) }
    }

    public mutating func parse(byte: UInt8, _ handle: (MIDIMessage) -> Void) {
        if byte >= 0xF8 {
            // Real-time: delivered immediately, never touches the message in progress.
            switch byte {
            case 0xF8: handle(.timingClock)
            case 0xFA: handle(.start)
            case 0xFB: handle(.continue)
            case 0xFC: handle(.stop)
            case 0xFE: handle(.activeSensing)
            case 0xFF: handle(.systemReset)
            default: discardedBytes += 1  // F9, FD: undefined
            }
            return
        }
        if byte >= 0x80 {
            startStatus(byte, handle)
            return
        }
        // A data byte.
        if inSysEx {
            if sysEx.count < maximumSysExLength { sysEx.append(byte) } else { sysExOverflowed = true }
            return
        }
        if status == 0 {
            guard runningStatus != 0 else {
                discardedBytes += 1
                return
            }
            status = runningStatus
            dataCount = 0
        }
        if dataCount == 0 { data.0 = byte } else { data.1 = byte }
        dataCount += 1
        if dataCount == Self.dataLength(status) { complete(handle) }
    }

    private mutating func startStatus(_ byte: UInt8, _ handle: (MIDIMessage) -> Void) {
        if inSysEx {
            inSysEx = false
            if byte == 0xF7 {
                if sysExOverflowed { oversizedSysEx += 1 } else { handle(.systemExclusive(sysEx)) }
                sysEx.removeAll(keepingCapacity: true)
                return
            }
            // Any other status ends the sysex early: drop it, then handle the new status normally.
            truncatedSysEx += 1
            sysEx.removeAll(keepingCapacity: true)
        }
        if status != 0 && dataCount > 0 {
            discardedBytes += dataCount  // a message cut short
        }
        status = 0
        dataCount = 0
        switch byte {
        case 0xF0:
            inSysEx = true
            sysExOverflowed = false
            runningStatus = 0
        case 0xF7:
            discardedBytes += 1  // end of exclusive with no start
        case 0xF4, 0xF5:
            discardedBytes += 1  // undefined system common
            runningStatus = 0
        case 0xF6:
            runningStatus = 0
            handle(.tuneRequest)
        case 0xF1...0xF3:
            runningStatus = 0  // system common cancels running status
            status = byte
        default:
            runningStatus = byte
            status = byte
        }
    }

    private mutating func complete(_ handle: (MIDIMessage) -> Void) {
        switch status {
        case 0xF1: handle(.timeCodeQuarterFrame(data.0))
        case 0xF2: handle(.songPosition(UInt16(data.0) | UInt16(data.1) << 7))
        case 0xF3: handle(.songSelect(data.0))
        default:
            if let message = MIDIMessage(status: status, data1: data.0, data2: dataCount > 1 ? data.1 : 0) {
                handle(message)
            }
        }
        // Channel messages keep running status: the next data byte starts a new message of the same kind.
        status = 0
        dataCount = 0
    }
}

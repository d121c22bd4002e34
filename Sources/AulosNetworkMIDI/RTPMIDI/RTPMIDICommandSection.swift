import AulosMIDI

/// One command field of an RTP-MIDI MIDI list (RFC 6295 §3).
///
/// Threads: a value.
public enum RTPMIDICommand: Equatable, Sendable {
    /// A channel message, a System Common message (F1, F2, F3, F6) or a System Real-Time one. Never
    /// `.systemExclusive`: SysEx travels as `.sysEx` segments.
    case message(MIDIMessage)
    /// A SysEx command field: a whole SysEx or one segment of one (see `RTPMIDISysExSegment`).
    case sysEx(RTPMIDISysExSegment)
    /// A status with no defined meaning (F4 or F5 outside a SysEx field, F9, FD): read past, never played.
    case undefined(UInt8)
}

/// A SysEx command field (RFC 6295 §3.2, Figures 5 and 6): its head byte (F0 starts a SysEx, F7 continues one),
/// the data bytes between, and its tail (F7 ends it, F0 says more follows, F4 cancels it, F5 ends a SysEx whose
/// F7 the source dropped). `F0 … F7` is a whole SysEx in one field.
///
/// Threads: a value.
public struct RTPMIDISysExSegment: Equatable, Sendable {
    public var head: UInt8
    public var data: [UInt8]
    public var tail: UInt8

    public init(head: UInt8, data: [UInt8], tail: UInt8) {
        self.head = head
        self.data = data
        self.tail = tail
    }

    /// F0 … F7 (or … F5): the whole message in one field.
    public var isComplete: Bool { head == 0xF0 && (tail == 0xF7 || tail == 0xF5) }
    /// This field opens a SysEx (F0 head).
    public var starts: Bool { head == 0xF0 }
    /// This field ends a SysEx (F7 or F5 tail).
    public var ends: Bool { tail == 0xF7 || tail == 0xF5 }
    /// F7 F4 (or any field ending F4): the SysEx so far is void.
    public var cancels: Bool { tail == 0xF4 }
}

/// A command with the delta time that precedes it in the list and its time relative to the packet's RTP
/// timestamp (the running sum of deltas, RFC 6295 §3.1), both in the session's clock ticks.
///
/// Threads: a value.
public struct RTPMIDITimedCommand: Equatable, Sendable {
    public var delta: UInt32
    public var command: RTPMIDICommand

    public init(delta: UInt32 = 0, _ command: RTPMIDICommand) {
        self.delta = delta
        self.command = command
    }
}

/// The MIDI command section of an RTP-MIDI payload (RFC 6295 §3, Figures 2–4): a one- or two-octet header
/// (B, J, Z, P flags and a 4- or 12-bit LEN) and the MIDI list of delta times and commands.
///
/// Threads: a value.
public struct RTPMIDICommandSection: Equatable, Sendable {
    /// The commands in list order; the first one's delta is 0 when the list had no Delta Time 0 (Z = 0).
    public var commands: [RTPMIDITimedCommand]
    /// J: a recovery journal follows the MIDI list.
    public var hasJournal: Bool
    /// P: the first channel command's status was running status in the source stream (it is written anyway).
    public var phantom: Bool
    /// A delta time after the last command (a list may end with a delta and no command: "time padding").
    public var trailingDelta: UInt32?

    public init(
        commands: [RTPMIDITimedCommand] = [], hasJournal: Bool = false, phantom: Bool = false,
        trailingDelta: UInt32? = nil
    ) {
        self.commands = commands
        self.hasJournal = hasJournal
        self.phantom = phantom
        self.trailingDelta = trailingDelta
    }

    /// The time of each command relative to the RTP timestamp: the running sum of the deltas, mod 2³².
    public var commandTimes: [UInt32] {
        var time: UInt32 = 0
        return commands.map { command in
            time &+= command.delta
            return time
        }
    }

    /// Reads the section starting at `reader`'s offset and leaves the reader after it (where the journal is).
    init(reading reader: inout WireReader) throws(NetworkMIDIError) {
        let headerOffset = reader.offset
        let first = try reader.byte("command section header")
        var length = Int(first & 0x0F)
        if first & 0x80 != 0 { length = length << 8 | Int(try reader.byte("command section LEN")) }
        hasJournal = first & 0x40 != 0
        phantom = first & 0x10 != 0
        let listStart = reader.offset
        guard length <= reader.remaining else {
            throw .truncated(field: "MIDI list of \(length) bytes (header at byte \(headerOffset))", offset: listStart)
        }
        var list = WireReader(reader.bytes, from: listStart, end: listStart + length)
        try reader.skip("MIDI list", count: length)
        commands = []
        trailingDelta = nil
        try parseList(&list, deltaFirst: first & 0x20 != 0)
    }

    private mutating func parseList(_ list: inout WireReader, deltaFirst: Bool) throws(NetworkMIDIError) {
        // Running status never crosses packets (§3.2): the state starts empty with every list.
        var running: UInt8?
        var delta: UInt32 = 0
        if deltaFirst && !list.isAtEnd {
            delta = try Self.readDelta(&list)
            if list.isAtEnd { trailingDelta = delta }  // a list that is a lone delta (§3)
        }
        while !list.isAtEnd {
            guard commands.count < NetworkMIDILimits.maximumCommandsPerPacket else {
                throw .tooLarge(what: "commands in one packet", limit: NetworkMIDILimits.maximumCommandsPerPacket)
            }
            let offset = list.offset
            let status = try list.peek("command")
            var pulledOut: [RTPMIDICommand] = []
            let command: RTPMIDICommand
            switch status {
            case 0x00..<0x80:
                guard let runningStatus = running else {
                    throw .invalid(field: "command", offset: offset, reason: "a data byte with no running status")
                }
                command = .message(try Self.channelMessage(runningStatus, &list))
            case 0x80..<0xF0:
                _ = try list.byte("status")
                running = status
                command = .message(try Self.channelMessage(status, &list))
            case 0xF0, 0xF7:
                running = nil  // SysEx cancels running status
                command = .sysEx(try Self.sysExField(&list, realTime: &pulledOut))
            case 0xF8...0xFF:
                // Real-Time does not cancel running status.
                _ = try list.byte("status")
                command = Self.realTime(status)
            default:
                _ = try list.byte("status")
                running = nil  // System Common cancels running status
                command = try Self.systemCommon(status, &list)
            }
            // Real-Time bytes found inside a SysEx field play where they were, before the field ends.
            for realTime in pulledOut {
                commands.append(RTPMIDITimedCommand(delta: delta, realTime))
                delta = 0
            }
            commands.append(RTPMIDITimedCommand(delta: delta, command))
            guard !list.isAtEnd else { return }
            // Every command after the first is preceded by a delta; a final delta with no command is padding.
            delta = try Self.readDelta(&list)
            if list.isAtEnd { trailingDelta = delta }
        }
    }

    /// RFC 6295 Figure 4: 1–4 octets, 7 bits each, most significant first, the top bit set on all but the last.
    static func readDelta(_ list: inout WireReader) throws(NetworkMIDIError) -> UInt32 {
        let offset = list.offset
        var value: UInt32 = 0
        for _ in 0..<4 {
            let octet = try list.byte("delta time")
            value = value << 7 | UInt32(octet & 0x7F)
            if octet & 0x80 == 0 { return value }
        }
        throw .invalid(field: "delta time", offset: offset, reason: "longer than four octets")
    }

    private static func channelMessage(_ status: UInt8, _ list: inout WireReader) throws(NetworkMIDIError)
        -> MIDIMessage
    {
        let count = status & 0xF0 == 0xC0 || status & 0xF0 == 0xD0 ? 1 : 2
        let data1 = try dataByte(&list, of: status)
        let data2 = count == 2 ? try dataByte(&list, of: status) : 0
        // Every status 0x80…0xEF is a channel message, so this never falls back.
        return MIDIMessage(status: status, data1: data1, data2: data2) ?? .tuneRequest
    }

    private static func realTime(_ status: UInt8) -> RTPMIDICommand {
        switch status {
        case 0xF8: .message(.timingClock)
        case 0xFA: .message(.start)
        case 0xFB: .message(.continue)
        case 0xFC: .message(.stop)
        case 0xFE: .message(.activeSensing)
        case 0xFF: .message(.systemReset)
        default: .undefined(status)  // F9, FD
        }
    }

    private static func systemCommon(_ status: UInt8, _ list: inout WireReader) throws(NetworkMIDIError)
        -> RTPMIDICommand
    {
        switch status {
        case 0xF1: return .message(.timeCodeQuarterFrame(try dataByte(&list, of: status)))
        case 0xF2:
            let low = try dataByte(&list, of: status)
            let high = try dataByte(&list, of: status)
            return .message(.songPosition(UInt16(high) << 7 | UInt16(low)))
        case 0xF3: return .message(.songSelect(try dataByte(&list, of: status)))
        case 0xF6: return .message(.tuneRequest)
        default: return .undefined(status)  // F4, F5 outside a SysEx field
        }
    }

    private static func dataByte(_ list: inout WireReader, of status: UInt8) throws(NetworkMIDIError) -> UInt8 {
        let offset = list.offset
        let byte = try list.byte("data byte of status 0x\(String(status, radix: 16, uppercase: true))")
        guard byte < 0x80 else {
            throw .invalid(field: "data byte", offset: offset, reason: "0x\(String(byte, radix: 16)) is a status byte")
        }
        return byte
    }

    /// A SysEx field runs from its F0/F7 head to the first F0, F7, F4 or F5 after it; Real-Time bytes inside it
    /// are taken out (they play on their own); any other status inside it is malformed.
    private static func sysExField(
        _ list: inout WireReader, realTime: inout [RTPMIDICommand]
    ) throws(NetworkMIDIError) -> RTPMIDISysExSegment {
        let head = try list.byte("SysEx head")
        var data: [UInt8] = []
        while true {
            let offset = list.offset
            let byte = try list.byte("SysEx tail")
            switch byte {
            case 0x00..<0x80: data.append(byte)
            case 0xF0, 0xF7, 0xF4, 0xF5: return RTPMIDISysExSegment(head: head, data: data, tail: byte)
            case 0xF8...0xFF: realTime.append(Self.realTime(byte))
            default:
                throw .invalid(field: "SysEx", offset: offset, reason: "status 0x\(String(byte, radix: 16)) inside it")
            }
        }
    }

    /// The section's bytes. The list uses running status where it may (a channel command with the status of the
    /// previous channel command, nothing but Real-Time between); the header is one octet when LEN ≤ 15.
    public func encoded() throws(NetworkMIDIError) -> [UInt8] {
        var list: [UInt8] = []
        var running: UInt8?
        for (index, timed) in commands.enumerated() {
            if index > 0 || timed.delta != 0 { try Self.appendDelta(timed.delta, to: &list) }
            switch timed.command {
            case .message(let message):
                var bytes = message.bytes
                if let status = bytes.first, status < 0xF0 {
                    if status == running { bytes.removeFirst() } else { running = status }
                } else if let status = bytes.first, status < 0xF8 {
                    running = nil
                }
                list.append(contentsOf: bytes)
            case .sysEx(let segment):
                running = nil
                list.append(segment.head)
                list.append(contentsOf: segment.data.map { $0 & 0x7F })
                list.append(segment.tail)
            case .undefined(let status):
                if status < 0xF8 { running = nil }
                list.append(status)
            }
        }
        if let trailingDelta { try Self.appendDelta(trailingDelta, to: &list) }
        guard list.count <= 0x0FFF else { throw .tooLarge(what: "MIDI list bytes", limit: 0x0FFF) }
        let firstHasDelta = commands.first.map { $0.delta != 0 } ?? (trailingDelta != nil)
        var flags: UInt8 = (hasJournal ? 0x40 : 0) | (firstHasDelta ? 0x20 : 0) | (phantom ? 0x10 : 0)
        var out: [UInt8] = []
        if list.count > 15 {
            flags |= 0x80
            out.append(flags | UInt8(list.count >> 8))
            out.append(UInt8(list.count & 0xFF))
        } else {
            out.append(flags | UInt8(list.count))
        }
        return out + list
    }

    static func appendDelta(_ value: UInt32, to out: inout [UInt8]) throws(NetworkMIDIError) {
        guard value < 1 << 28 else { throw .tooLarge(what: "delta time", limit: 1 << 28 - 1) }
        var groups: [UInt8] = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 {
            groups.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        out.append(contentsOf: groups.reversed())
    }
}

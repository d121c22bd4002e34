/// The recovery journal of an RTP-MIDI packet (RFC 6295 §4–5, Appendix A): the state of the stream from the
/// checkpoint packet to the packet before this one, so a receiver that lost packets can repair what it plays.
/// Aulos reads the channel chapters that keep notes and controllers right — P (program), C (controllers,
/// sustain included), W (pitch wheel), N (notes) — and skips the system journal and chapters M, E, T, A by
/// their lengths. Bit 0 is the most significant bit of an octet, as in the RFC.
///
/// Threads: a value.
public struct RecoveryJournal: Equatable, Sendable {
    /// S: 1 unless some element codes a command of the packet just before this one (App. A.1).
    public var singlePacketLoss: Bool
    /// H: chapter C uses the enhanced encoding (only when SDP negotiates it; Apple never does).
    public var enhancedChapterC: Bool
    /// The first packet of the checkpoint history this journal covers.
    public var checkpointSequenceNumber: UInt16
    /// The system journal as it came, header included (Y = 1); kept only so the encoder can round-trip it.
    public var systemJournal: [UInt8]?
    /// One per channel, in ascending channel order (A = 1 when not empty).
    public var channels: [ChannelJournal]

    public init(
        checkpointSequenceNumber: UInt16, channels: [ChannelJournal] = [], singlePacketLoss: Bool = true,
        enhancedChapterC: Bool = false, systemJournal: [UInt8]? = nil
    ) {
        self.singlePacketLoss = singlePacketLoss
        self.enhancedChapterC = enhancedChapterC
        self.checkpointSequenceNumber = checkpointSequenceNumber
        self.systemJournal = systemJournal
        self.channels = channels
    }

    init(reading reader: inout WireReader) throws(NetworkMIDIError) {
        let header = try reader.byte("journal header")
        singlePacketLoss = header & 0x80 != 0
        enhancedChapterC = header & 0x10 != 0
        checkpointSequenceNumber = try reader.uint16("checkpoint sequence number")
        systemJournal = nil
        channels = []
        if header & 0x40 != 0 {
            let start = reader.offset
            let first = try reader.byte("system journal header")
            let length = Int(first & 0x03) << 8 | Int(try reader.byte("system journal LENGTH"))
            guard length >= 2 else {
                throw .invalid(
                    field: "system journal LENGTH", offset: start, reason: "\(length) is shorter than its header")
            }
            try reader.skip("system journal", count: length - 2)
            systemJournal = Array(reader.bytes[start..<start + length])
        }
        guard header & 0x20 != 0 else { return }
        let count = Int(header & 0x0F) + 1
        for _ in 0..<count {
            let offset = reader.offset
            let channel = try ChannelJournal(reading: &reader)
            if let previous = channels.last, previous.channel >= channel.channel {
                throw .invalid(
                    field: "channel journal", offset: offset,
                    reason: "channel \(channel.channel) after channel \(previous.channel) (they ascend, once each)")
            }
            channels.append(channel)
        }
    }

    /// The journal's bytes.
    public func encoded() throws(NetworkMIDIError) -> [UInt8] {
        guard channels.count <= NetworkMIDILimits.maximumChannelJournals else {
            throw .tooLarge(what: "channel journals", limit: NetworkMIDILimits.maximumChannelJournals)
        }
        var header: UInt8 = (singlePacketLoss ? 0x80 : 0) | (enhancedChapterC ? 0x10 : 0)
        if systemJournal != nil { header |= 0x40 }
        if !channels.isEmpty { header |= 0x20 | UInt8(channels.count - 1) }
        var out: [UInt8] = [header]
        out.appendBigEndian(checkpointSequenceNumber)
        if let systemJournal { out.append(contentsOf: systemJournal) }
        for channel in channels { out.append(contentsOf: try channel.encoded()) }
        return out
    }
}

/// One channel's journal (RFC 6295 §5, Figure 9): the chapters present, in TOC order P, C, M, W, N, E, T, A.
///
/// Threads: a value.
public struct ChannelJournal: Equatable, Sendable {
    public var singlePacketLoss: Bool
    /// 0…15, as in a status byte.
    public var channel: UInt8
    /// H: chapter C of this channel uses the enhanced encoding. Its logs are then read but not used to repair,
    /// since Aulos does not negotiate that encoding.
    public var enhancedChapterC: Bool
    public var program: ChapterP?
    public var controllers: ChapterC?
    public var pitchWheel: ChapterW?
    public var notes: ChapterN?
    /// The TOC bits of chapters present but skipped (M 0x20, E 0x04, T 0x02, A 0x01).
    public var skippedChapters: UInt8
    /// Chapter M's bytes when present, kept only so the encoder can round-trip a received journal.
    public var skippedParameterBytes: [UInt8]
    /// Chapters E, T and A's bytes (they end the channel journal), kept for the same reason.
    public var skippedTailBytes: [UInt8]

    public init(
        channel: UInt8, program: ChapterP? = nil, controllers: ChapterC? = nil, pitchWheel: ChapterW? = nil,
        notes: ChapterN? = nil, singlePacketLoss: Bool = true, enhancedChapterC: Bool = false
    ) {
        self.singlePacketLoss = singlePacketLoss
        self.channel = channel & 0x0F
        self.enhancedChapterC = enhancedChapterC
        self.program = program
        self.controllers = controllers
        self.pitchWheel = pitchWheel
        self.notes = notes
        skippedChapters = 0
        skippedParameterBytes = []
        skippedTailBytes = []
    }

    init(reading outer: inout WireReader) throws(NetworkMIDIError) {
        let start = outer.offset
        let first = try outer.byte("channel journal header")
        let length = Int(first & 0x03) << 8 | Int(try outer.byte("channel journal LENGTH"))
        let toc = try outer.byte("channel journal TOC")
        // LENGTH covers the whole channel journal, its 3-octet header included (App. A.1); the receiver
        // advances by it whatever the chapters inside say.
        guard length >= 3 else {
            throw .invalid(
                field: "channel journal LENGTH", offset: start, reason: "\(length) is shorter than its header")
        }
        try outer.skip("channel journal of \(length) bytes", count: length - 3)
        var reader = WireReader(outer.bytes, from: start + 3, end: start + length)
        singlePacketLoss = first & 0x80 != 0
        channel = first >> 3 & 0x0F
        enhancedChapterC = first & 0x04 != 0
        program = toc & 0x80 != 0 ? try ChapterP(reading: &reader) : nil
        controllers = toc & 0x40 != 0 ? try ChapterC(reading: &reader) : nil
        var parameters: [UInt8] = []
        if toc & 0x20 != 0 {
            // Chapter M (App. A.4): its LENGTH, header included, is all Aulos needs, to reach W and N.
            let offset = reader.offset
            let header = try reader.uint16("chapter M header")
            let chapterLength = Int(header & 0x03FF)
            guard chapterLength >= 2 else {
                throw .invalid(
                    field: "chapter M LENGTH", offset: offset, reason: "\(chapterLength) is shorter than its header")
            }
            try reader.skip("chapter M", count: chapterLength - 2)
            parameters = Array(reader.bytes[offset..<offset + chapterLength])
        }
        pitchWheel = toc & 0x10 != 0 ? try ChapterW(reading: &reader) : nil
        notes = toc & 0x08 != 0 ? try ChapterN(reading: &reader) : nil
        skippedChapters = toc & 0x27
        // E, T and A follow N and end the channel journal: nothing after them is needed, so they are kept whole.
        skippedParameterBytes = parameters
        skippedTailBytes = Array(reader.bytes[reader.offset..<max(reader.offset, reader.end)])
    }

    func encoded() throws(NetworkMIDIError) -> [UInt8] {
        var body: [UInt8] = []
        var toc: UInt8 = skippedChapters & 0x27
        if let program {
            toc |= 0x80
            program.append(to: &body)
        }
        if let controllers {
            toc |= 0x40
            try controllers.append(to: &body)
        }
        body.append(contentsOf: skippedParameterBytes)
        if let pitchWheel {
            toc |= 0x10
            pitchWheel.append(to: &body)
        }
        if let notes {
            toc |= 0x08
            try notes.append(to: &body)
        }
        body.append(contentsOf: skippedTailBytes)
        let length = body.count + 3
        guard length <= 0x03FF else { throw .tooLarge(what: "channel journal bytes", limit: 0x03FF) }
        let first = (singlePacketLoss ? 0x80 : 0) | channel << 3 | (enhancedChapterC ? 0x04 : 0) | UInt8(length >> 8)
        return [first, UInt8(length & 0xFF), toc] + body
    }
}

/// Chapter P (App. A.2): the most recent program change, and the bank select that preceded it.
///
/// Threads: a value.
public struct ChapterP: Equatable, Sendable {
    public var singlePacketLoss: Bool
    public var program: UInt8
    /// B: a bank select (CC 0, and CC 32 if sent) preceded the program change; the bank bytes are valid.
    public var hasBank: Bool
    public var bankMSB: UInt8
    /// X: a Reset All Controllers came between the bank select and the program change.
    public var resetBetween: Bool
    public var bankLSB: UInt8

    public init(
        program: UInt8, bankMSB: UInt8? = nil, bankLSB: UInt8 = 0, resetBetween: Bool = false,
        singlePacketLoss: Bool = true
    ) {
        self.singlePacketLoss = singlePacketLoss
        self.program = program & 0x7F
        hasBank = bankMSB != nil
        self.bankMSB = (bankMSB ?? 0) & 0x7F
        self.resetBetween = resetBetween
        self.bankLSB = bankLSB & 0x7F
    }

    init(reading reader: inout WireReader) throws(NetworkMIDIError) {
        let first = try reader.byte("chapter P program")
        let second = try reader.byte("chapter P bank MSB")
        let third = try reader.byte("chapter P bank LSB")
        self.init(
            program: first, bankMSB: second & 0x80 != 0 ? second : nil, bankLSB: third, resetBetween: third & 0x80 != 0,
            singlePacketLoss: first & 0x80 != 0)
    }

    func append(to out: inout [UInt8]) {
        out.append((singlePacketLoss ? 0x80 : 0) | program)
        out.append((hasBank ? 0x80 : 0) | bankMSB)
        out.append((resetBetween ? 0x80 : 0) | bankLSB)
    }
}

/// Chapter C (App. A.3): one log per controller the checkpoint history changed, oldest first.
///
/// Threads: a value.
public struct ChapterC: Equatable, Sendable {
    /// How a log codes its controller (Figure A.3.3). Threads: a value.
    public enum Tool: Equatable, Sendable {
        /// The 7-bit value of the most recent control change.
        case value(UInt8)
        /// Off↔on toggles (off 0–63, on 64–127) since the session started, mod 64: what a sustain pedal needs,
        /// since a lost off in on→off→on shows in the count but not in the value.
        case toggle(UInt8)
        /// Control changes for this number, mod 64, for controllers whose value does not matter (123…127).
        case count(UInt8)
    }

    /// Threads: a value.
    public struct Log: Equatable, Sendable {
        public var singlePacketLoss: Bool
        public var controller: UInt8
        public var tool: Tool

        public init(controller: UInt8, tool: Tool, singlePacketLoss: Bool = true) {
            self.singlePacketLoss = singlePacketLoss
            self.controller = controller & 0x7F
            self.tool = tool
        }
    }

    public var singlePacketLoss: Bool
    public var logs: [Log]

    public init(logs: [Log], singlePacketLoss: Bool = true) {
        self.singlePacketLoss = singlePacketLoss
        self.logs = logs
    }

    init(reading reader: inout WireReader) throws(NetworkMIDIError) {
        let header = try reader.byte("chapter C header")
        singlePacketLoss = header & 0x80 != 0
        logs = []
        // LEN is the number of logs minus one: a chapter C always has at least one.
        for _ in 0...Int(header & 0x7F) {
            let first = try reader.byte("chapter C log")
            let second = try reader.byte("chapter C log value")
            let tool: Tool =
                second & 0x80 == 0
                ? .value(second & 0x7F) : second & 0x40 == 0 ? .toggle(second & 0x3F) : .count(second & 0x3F)
            logs.append(Log(controller: first, tool: tool, singlePacketLoss: first & 0x80 != 0))
        }
    }

    func append(to out: inout [UInt8]) throws(NetworkMIDIError) {
        guard (1...128).contains(logs.count) else {
            throw .invalid(field: "chapter C", offset: out.count, reason: "\(logs.count) logs, where 1…128 fit")
        }
        out.append((singlePacketLoss ? 0x80 : 0) | UInt8(logs.count - 1))
        for log in logs {
            out.append((log.singlePacketLoss ? 0x80 : 0) | log.controller)
            switch log.tool {
            case .value(let value): out.append(value & 0x7F)
            case .toggle(let count): out.append(0x80 | count & 0x3F)
            case .count(let count): out.append(0xC0 | count & 0x3F)
            }
        }
    }
}

/// Chapter W (App. A.5): the most recent pitch bend, its two data bytes.
///
/// Threads: a value.
public struct ChapterW: Equatable, Sendable {
    public var singlePacketLoss: Bool
    /// The 14-bit bend, 8192 the centre.
    public var value: UInt16

    public init(value: UInt16, singlePacketLoss: Bool = true) {
        self.singlePacketLoss = singlePacketLoss
        self.value = value & 0x3FFF
    }

    init(reading reader: inout WireReader) throws(NetworkMIDIError) {
        let first = try reader.byte("chapter W first")
        let second = try reader.byte("chapter W second")
        self.init(value: UInt16(second & 0x7F) << 7 | UInt16(first & 0x7F), singlePacketLoss: first & 0x80 != 0)
    }

    func append(to out: inout [UInt8]) {
        out.append((singlePacketLoss ? 0x80 : 0) | UInt8(value & 0x7F))
        out.append(UInt8(value >> 7 & 0x7F))
    }
}

/// Chapter N (App. A.6): note-on logs for notes whose most recent N-active command was a note-on, and OFFBITS
/// for notes whose most recent one was a note-off.
///
/// Threads: a value.
public struct ChapterN: Equatable, Sendable {
    /// Threads: a value.
    public struct Log: Equatable, Sendable {
        public var singlePacketLoss: Bool
        public var note: UInt8
        /// Y: the sender recommends playing the recovered note-on (0: it is stale, skip it).
        public var play: Bool
        public var velocity: UInt8

        public init(note: UInt8, velocity: UInt8, play: Bool = true, singlePacketLoss: Bool = true) {
            self.singlePacketLoss = singlePacketLoss
            self.note = note & 0x7F
            self.play = play
            self.velocity = velocity & 0x7F
        }
    }

    /// B: S-bit of the OFFBITS (0 when the packet before had a note-off on this channel).
    public var offBitsSinglePacketLoss: Bool
    public var logs: [Log]
    /// The notes the OFFBITS mark as off, ascending.
    public var offNotes: [UInt8]

    public init(logs: [Log] = [], offNotes: [UInt8] = [], offBitsSinglePacketLoss: Bool = true) {
        self.offBitsSinglePacketLoss = offBitsSinglePacketLoss
        self.logs = logs
        self.offNotes = Array(Set(offNotes.map { $0 & 0x7F })).sorted()
    }

    init(reading reader: inout WireReader) throws(NetworkMIDIError) {
        let offset = reader.offset
        let first = try reader.byte("chapter N header")
        let second = try reader.byte("chapter N LOW/HIGH")
        let low = Int(second >> 4)
        let high = Int(second & 0x0F)
        var count = Int(first & 0x7F)
        let offBytes: Int
        if low <= high {
            offBytes = high - low + 1
        } else if low == 15 && (high == 0 || high == 1) {
            offBytes = 0
            if count == 127 && high == 0 { count = 128 }  // the one coding of 128 logs
        } else {
            throw .invalid(field: "chapter N", offset: offset + 1, reason: "LOW \(low) above HIGH \(high)")
        }
        offBitsSinglePacketLoss = first & 0x80 != 0
        logs = []
        for _ in 0..<count {
            let note = try reader.byte("chapter N note log")
            let velocity = try reader.byte("chapter N note log velocity")
            logs.append(
                Log(note: note, velocity: velocity, play: velocity & 0x80 != 0, singlePacketLoss: note & 0x80 != 0))
        }
        offNotes = []
        for index in 0..<offBytes {
            let bits = try reader.byte("chapter N OFFBITS")
            // Octet k covers notes 8·(LOW+k)…8·(LOW+k)+7, the most significant bit the lowest note.
            for bit in 0..<8 where bits & (0x80 >> bit) != 0 { offNotes.append(UInt8(8 * (low + index) + bit)) }
        }
    }

    func append(to out: inout [UInt8]) throws(NetworkMIDIError) {
        guard logs.count <= 128, logs.count < 128 || offNotes.isEmpty else {
            throw .invalid(field: "chapter N", offset: out.count, reason: "\(logs.count) logs with OFFBITS do not fit")
        }
        var low = 15
        var high = logs.count == 128 ? 0 : 1  // no OFFBITS; (15, 1) so that LEN 127 means 127 logs
        if let lowest = offNotes.first, let highest = offNotes.last {
            low = Int(lowest) / 8
            high = Int(highest) / 8
        }
        out.append((offBitsSinglePacketLoss ? 0x80 : 0) | UInt8(min(logs.count, 127)))
        out.append(UInt8(low << 4 | high))
        for log in logs {
            out.append((log.singlePacketLoss ? 0x80 : 0) | log.note)
            out.append((log.play ? 0x80 : 0) | log.velocity)
        }
        guard low <= high else { return }
        var bits = [UInt8](repeating: 0, count: high - low + 1)
        for note in offNotes { bits[Int(note) / 8 - low] |= 0x80 >> (note % 8) }
        out.append(contentsOf: bits)
    }
}

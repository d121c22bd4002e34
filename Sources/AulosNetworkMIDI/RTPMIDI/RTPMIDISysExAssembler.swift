import AulosMIDI

/// Joins SysEx segments (F0…F0, F7…F0, F7…F7, RFC 6295 §3.2) into whole messages across packets, up to
/// `NetworkMIDILimits.maximumSysExBytes`. A SysEx that is cancelled (F7 F4), too long, interrupted by a new F0,
/// or broken by a lost packet (`reset()`) is dropped whole: a synth acts as if it never came (§3.2).
///
/// Threads: a value (kept per session on the network thread, never on the render thread).
public struct RTPMIDISysExAssembler: Sendable {
    public let maximumBytes: Int
    private var buffer: [UInt8] = []
    private var assembling = false
    private var overflowed = false
    /// SysEx messages dropped (cancelled, cut by a loss, over the cap, or segments with no start).
    public private(set) var dropped = 0

    public init(maximumBytes: Int = NetworkMIDILimits.maximumSysExBytes) {
        self.maximumBytes = max(2, maximumBytes)
    }

    /// Whether a SysEx has started and not yet ended.
    public var isAssembling: Bool { assembling }

    /// Takes one SysEx field; returns the whole message when this field ends one (data without F0 and F7).
    public mutating func add(_ segment: RTPMIDISysExSegment) -> MIDIMessage? {
        if segment.starts {
            if assembling { dropped += 1 }  // a new F0 cuts the one before: it never ended
            buffer.removeAll(keepingCapacity: true)
            assembling = true
            overflowed = false
        } else if !assembling {
            // A continuation whose start was lost (or never sent): its end counts the message as dropped once.
            if segment.ends { dropped += 1 }
            return nil
        }
        if segment.cancels {
            finish(keep: false)
            return nil
        }
        if !overflowed {
            if buffer.count + segment.data.count + 2 > maximumBytes {
                overflowed = true
                buffer.removeAll()
            } else {
                buffer.append(contentsOf: segment.data)
            }
        }
        guard segment.ends else { return nil }
        defer { finish(keep: true) }
        return overflowed ? nil : .systemExclusive(buffer)
    }

    /// A packet was lost: any SysEx in progress is incomplete and is dropped.
    public mutating func reset() {
        if assembling { finish(keep: false) }
    }

    private mutating func finish(keep: Bool) {
        if !keep || overflowed { dropped += 1 }
        buffer.removeAll(keepingCapacity: true)
        assembling = false
        overflowed = false
    }
}

import AulosCore
import AulosMIDI
import AulosRealtime

/// Several MIDI inputs as the live instrument's one (`LiveMIDISource`): the ALSA sequencer and network MIDI.
/// The first input is optional: when it cannot be opened the others play on, a notice says why, and it is
/// tried again every 2 s as notices are taken (a sequencer that appears later is used then). The others must
/// open, or opening fails with their error.
///
/// Threads: the control thread, for every member; each input calls the receiver on a thread of its own.
public final class CompositeMIDISource: LiveMIDISource {
    private let optional: (name: String, open: LiveMIDISourceOpener)
    private let receiver: any MIDIReceiver
    private var optionalSource: (any LiveMIDISource)?
    private let required: [any LiveMIDISource]
    private var pending: [MIDIInputNotice] = []
    private var lastAttempt: Int64 = 0
    private var lastFailure: String?
    private var clockOutput: MIDIClockOutput?
    public private(set) var isStarted = false

    init(
        optional: (name: String, open: LiveMIDISourceOpener), required: [any LiveMIDISource],
        receiver: any MIDIReceiver
    ) {
        self.optional = optional
        self.required = required
        self.receiver = receiver
        attempt()
    }

    /// Opens `required` (each must open) and tries `optional` (named `name` in the notice when it cannot).
    public static func opener(
        optional name: String, _ open: @escaping LiveMIDISourceOpener, required: [LiveMIDISourceOpener]
    ) -> LiveMIDISourceOpener {
        { receiver in
            CompositeMIDISource(
                optional: (name, open), required: try required.map { try $0(receiver) }, receiver: receiver)
        }
    }

    private func attempt() {
        lastAttempt = monotonicNanoseconds()
        do {
            optionalSource = try optional.open(receiver)
            lastFailure = nil
        } catch {
            let reason = (error as? ReportableError)?.message ?? "\(error)"
            if reason != lastFailure { pending.append(.unavailable(input: optional.name, reason: reason)) }
            lastFailure = reason
        }
    }

    public func start() throws {
        for source in required where !source.isStarted { try source.start() }
        if let optionalSource, !optionalSource.isStarted { try optionalSource.start() }
        isStarted = true
    }

    public func stop() {
        optionalSource?.stop()
        for source in required { source.stop() }
        isStarted = false
    }

    public func takeNotices() -> [MIDIInputNotice] {
        if optionalSource == nil, monotonicNanoseconds() - lastAttempt > 2_000_000_000 {
            attempt()
            if let clockOutput { optionalSource?.sendClock(from: clockOutput) }
            if isStarted, let optionalSource {
                do {
                    try optionalSource.start()
                } catch {
                    pending.append(
                        .unavailable(input: optional.name, reason: (error as? ReportableError)?.message ?? "\(error)"))
                    self.optionalSource = nil
                }
            }
        }
        var notices = pending
        pending.removeAll()
        notices += optionalSource?.takeNotices() ?? []
        for source in required { notices += source.takeNotices() }
        return notices
    }

    public func sendClock(from clockOutput: MIDIClockOutput) {
        self.clockOutput = clockOutput
        optionalSource?.sendClock(from: clockOutput)
        for source in required { source.sendClock(from: clockOutput) }
    }

    /// Whether the optional input (the sequencer) is open now; the others are network inputs.
    public var listensToSequencer: Bool { optionalSource?.listensToSequencer ?? false }

    public var worstReadDelayNanos: Int64 {
        required.reduce(optionalSource?.worstReadDelayNanos ?? 0) { max($0, $1.worstReadDelayNanos) }
    }

    public var networkSessions: [NetworkSessionCounters]? {
        let each = ([optionalSource?.networkSessions] + required.map(\.networkSessions)).compactMap { $0 }
        return each.isEmpty ? nil : each.flatMap { $0 }
    }
}

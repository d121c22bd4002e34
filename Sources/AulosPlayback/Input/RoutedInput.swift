import AulosMIDI
import AulosRig

/// A MIDI file or score routed through a rig before it plays: the timeline of what each part hears when
/// (the rig's prelude first), the parameter changes, rig switches and snapshot recalls the file's
/// controllers and program changes cause, and notes on what was skipped. The same for a file rendered
/// offline and one played on a device, so the two sound the same.
///
/// Threads: the control thread.
struct RoutedInput {
    /// A router decision besides events, at the sample time of the message that caused it.
    struct TimedAction {
        var sampleTime: Int64
        var action: RigRouter.Action
    }

    /// What each part hears, by sample time: the render thread reads it (`MIDITimelinePlayer`).
    let timeline: MIDITimeline
    /// Mapped controllers moving parameters: sample-exact through the parameters' event queues offline.
    let parameterActions: [TimedAction]
    /// Rig switches and EQ presets (property changes, which take effect from the next slice): an offline
    /// render starts a slice at each one, so where it lands does not depend on the slice size.
    let boundaryActions: [TimedAction]
    /// What was not played, for the summary line.
    let notes: [String]

    /// `input` routed through `rig`, from rig `activeRig` of its set on; with `switchingRigs` false its
    /// program changes on the set's control channel are played, not rig switches (the live file player).
    init(_ input: InputFile, through rig: PlaybackRig, activeRig: Int = 0, switchingRigs: Bool = true)
        throws(RigError)
    {
        var router = RigRouter(rig: rig, switchingRigs: switchingRigs)
        if activeRig > 0 { _ = router.select(rig: activeRig) }
        var events = rig.prelude
        var parameterActions: [TimedAction] = []
        var boundaryActions: [TimedAction] = []
        var notes: [String] = []
        /// Events no part played, by channel (1…16).
        var unrouted: [Int: Int] = [:]
        var snapshotsRecalled = 0
        /// When each (part, channel, note) was last struck.
        var struckAt: [Int: Int64] = [:]
        // System messages (SysEx, clock) are counted, not copied aside: a big file's messages are walked once.
        // GM/GS/XG resets are played: Reset All Controllers (and All Sound Off) on every channel of every part.
        // MIDI Tuning Standard messages retune the synth parts at their frame, and the sampler parts at a
        // slice boundary there (FluidSynth copies its tuning on every change, an allocation, so a new
        // instance with the new tuning takes over from the control thread); an LV2 plugin keeps its own.
        var systemMessages = 0
        for scheduled in input.messages where ChannelMessage(scheduled.message) == nil {
            guard case .systemExclusive(let data) = scheduled.message, let played = PlayedSystemExclusive(data) else {
                systemMessages += 1
                continue
            }
            var parts = Array(rig.parts.indices)
            if case .tuning = played {
                if let changes = MIDITuningMessage.keyChanges(data) {
                    for part in parts where rig.parts[part].part.instrument == .sampler {
                        boundaryActions.append(
                            TimedAction(sampleTime: scheduled.sampleTime, action: .retune(part: part, changes: changes))
                        )
                    }
                }
                parts.removeAll { rig.parts[$0].part.instrument != .synth }
            }
            for part in parts {
                for message in played.messages {
                    events.append(
                        TimedMIDIEvent(sampleTime: scheduled.sampleTime, destination: UInt16(part), message: message))
                }
            }
        }
        if systemMessages > 0 { notes.append("\(systemMessages) system messages (sysex, clock) not played") }
        for scheduled in input.messages {
            guard let message = ChannelMessage(scheduled.message) else { continue }
            let time = scheduled.sampleTime
            let routed = router.route(message, from: .file)
            for action in routed.actions {
                if case .snapshotRecalled(let rigIndex, let snapshot) = action {
                    // Its programs are played at the frame of the program change that recalled it.
                    for (part, messages) in rig.programMessages(ofSnapshot: snapshot, ofRig: rigIndex) {
                        events += messages.map {
                            TimedMIDIEvent(sampleTime: time, destination: UInt16(part), message: $0)
                        }
                    }
                    snapshotsRecalled += 1
                }
                if case .control(let target, _) = action, case .parameter = target.kind {
                    parameterActions.append(TimedAction(sampleTime: time, action: action))
                } else {
                    boundaryActions.append(TimedAction(sampleTime: time, action: action))
                }
            }
            for delivery in routed.deliveries {
                var at = time
                let key =
                    Int(delivery.destination) << 11 | Int(delivery.message.channel) << 7 | Int(delivery.message.data1)
                if delivery.message.isNoteOn {
                    struckAt[key] = at
                } else if delivery.message.isNoteOff, struckAt[key] == at {
                    // A zero-length note (on and off at one time in a MIDI file): the instrument's same-frame
                    // order puts releases before strikes (so a repeated note is re-struck), which would leave
                    // this one hanging. End it a frame after it starts instead.
                    at += 1
                }
                events.append(
                    TimedMIDIEvent(sampleTime: at, destination: delivery.destination, message: delivery.message))
            }
            let isControlChannel = message.channel == router.controlChannel
            guard routed.deliveries.isEmpty && routed.actions.isEmpty else { continue }
            let normalized = message.normalized
            if normalized.isProgramChange {
                // For a channel no part plays: its notes say so.
            } else if normalized.isNoteOff || normalized.command == 0xA0 {
                // Follows a note-on that was skipped, or off a key range.
            } else if normalized.isNoteOn
                && rig.rig.parts.contains(where: {
                    $0.channels.contains(Int(message.channel) + 1) && !$0.keys.contains(Int(message.data1))
                })
            {
                // Outside a part's key range: a split, not a lost note.
            } else if !(normalized.isControlChange && isControlChannel) {
                unrouted[Int(message.channel) + 1, default: 0] += 1
            }
        }
        if !unrouted.isEmpty {
            // Every channel left out, by number: a rig that plays 1 and 10 drops 2 and 3 as surely as 10.
            let channels = unrouted.keys.sorted().map { $0 == 10 ? "10 (drums)" : "\($0)" }
            let list =
                channels.count == 1
                ? channels[0] : channels.dropLast().joined(separator: ", ") + " and " + channels.last!
            let events = unrouted.values.reduce(0, +)
            notes.append(
                "channel\(channels.count == 1 ? "" : "s") \(list) skipped: no part plays "
                    + (channels.count == 1 ? "it" : "them")
                    + (channels == ["10 (drums)"] ? "" : " (\(events) event\(events == 1 ? "" : "s"))"))
        }
        if snapshotsRecalled > 0 {
            notes.append("\(snapshotsRecalled) snapshot\(snapshotsRecalled == 1 ? "" : "s") recalled by program change")
        }
        if router.switchCount > 0 {
            notes.append("\(router.switchCount) rig switch\(router.switchCount == 1 ? "" : "es") by program change")
        }
        timeline = MIDITimeline(events)
        self.parameterActions = parameterActions
        self.boundaryActions = boundaryActions
        self.notes = notes
    }
}

/// Applies a routed input's actions to its rig as time passes: parameter changes (at their exact frame when
/// the slice they fall in is known) and rig switches.
///
/// Threads: the control thread.
struct RoutedActions {
    private let input: RoutedInput
    private var nextParameter = 0
    private var nextBoundary = 0

    init(_ input: RoutedInput) { self.input = input }

    /// Applies the parameter actions due before `time`: with `sliceStart` (the slice about to render) each
    /// lands on its exact frame; without, as soon as it is applied.
    mutating func applyParameters(to rig: PlaybackRig, before time: Int64, sliceStart: Int64? = nil) {
        while nextParameter < input.parameterActions.count && input.parameterActions[nextParameter].sampleTime < time {
            let timed = input.parameterActions[nextParameter]
            rig.apply(timed.action, offset: sliceStart.map { UInt32(max(0, timed.sampleTime - $0)) } ?? 0)
            nextParameter += 1
        }
    }

    /// Applies the rig switches and presets due before `time`; returns when the next one is due (nil: none
    /// left).
    @discardableResult
    mutating func applyBoundaries(to rig: PlaybackRig, before time: Int64) -> Int64? {
        while nextBoundary < input.boundaryActions.count && input.boundaryActions[nextBoundary].sampleTime < time {
            rig.apply(input.boundaryActions[nextBoundary].action)
            nextBoundary += 1
        }
        return nextBoundary < input.boundaryActions.count ? input.boundaryActions[nextBoundary].sampleTime : nil
    }
}

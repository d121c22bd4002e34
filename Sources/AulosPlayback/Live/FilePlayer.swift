import AulosCore
import AulosMIDI
import AulosRig

/// The live session's file player: a MIDI file or score played through the rig by sample time — the
/// timeline `aulos play FILE` and an offline render play, so a file played from its start sounds as its
/// render does, bit for bit — while keyboards, OSC and the panel play on beside it. It plays, pauses,
/// stops, locates and loops on request; each start publishes a new timeline whose frame 0 is a frame of
/// the graph's time line ahead of what has been rendered (`origin`).
///
/// Starting anywhere but the file's beginning, the state the file had set up by then is sent first at the
/// start frame ("chasing"): each channel's bank and program, its controllers and its pitch bend, so a
/// piano part located to bar 20 is not a piano part playing bar 20 on program 0. Pausing ends the notes
/// the file holds (all notes off and the pedal up on every channel of every part it plays).
///
/// Threads: the control thread.
final class FilePlayer {
    enum State: String, Encodable {
        case stopped, playing, paused
    }

    /// What a player request is answered with when no file plays.
    static let noneLoaded = "no file is loaded in the player (aulos play FILE --web …, or --osc)"

    /// The file's path, as loaded, and the rig of the set it plays through.
    let path: String
    let activeRig: Int
    private let routed: RoutedInput
    private var actions: RoutedActions
    /// The file's length in frames: its last event (a MIDI file's end of track).
    let length: Int64
    let sampleRate: Double
    private(set) var state = State.stopped
    /// Whether reaching the end starts the file again (at the frame it ended: no gap).
    var loops = false
    /// Graph frame where the file's frame 0 plays (while playing).
    private var origin: Int64 = 0
    /// Where in the file, in frames, while stopped or paused.
    private var position: Int64 = 0
    /// How many times the file has come round (looping), and whether the next pass is published.
    private(set) var passes = 0
    private var nextPassPublished = false

    /// `input` (already read at the rig's rate) routed through `rig`'s rig `activeRig`, whole: the set's
    /// control channel is played like any other (a General MIDI file uses all 16), rig switches are the
    /// keyboards' and the roads'.
    init(path: String, input: InputFile, rig: PlaybackRig, activeRig: Int, sampleRate: Double) throws(RigError) {
        (self.path, self.activeRig) = (path, activeRig)
        routed = try RoutedInput(input, through: rig, activeRig: activeRig, switchingRigs: false)
        actions = RoutedActions(routed)
        length = max(input.end, routed.timeline.lastSampleTime)
        self.sampleRate = sampleRate
    }

    /// Where in the file the player is at graph frame `now` (frames).
    func position(at now: Int64) -> Int64 {
        state == .playing ? min(length, max(0, now - origin)) : position
    }

    /// Plays from the current position, its frame 0 at graph frame `start - position`.
    func play(at start: Int64, on rig: PlaybackRig) {
        guard state != .playing else { return }
        origin = start - position
        actions = RoutedActions(routed)
        nextPassPublished = false
        publish(on: rig, from: position)
        state = .playing
    }

    /// Stops where it is (`stop` also goes back to the start): the timeline is withdrawn and the notes it
    /// holds are ended through `silence` (a part index and the messages for it).
    func pause(at now: Int64, on rig: PlaybackRig, silence: (Int, [ChannelMessage]) -> Void, rewinding: Bool = false) {
        if state == .playing { position = position(at: now) }
        if rewinding { position = 0 }
        guard state == .playing else {
            if rewinding { state = .stopped }
            return
        }
        rig.timelinePlayer.play(nil)
        state = rewinding ? .stopped : .paused
        for (part, channels) in playedChannels() {
            silence(
                part,
                channels.flatMap { channel in
                    [
                        ChannelMessage(status: 0xB0 | channel, data1: 64, data2: 0),
                        ChannelMessage(status: 0xB0 | channel, data1: 123, data2: 0),
                    ]
                })
        }
    }

    /// Moves to `frame` of the file; playing, it goes on from there at `start`.
    func locate(to frame: Int64, at start: Int64, on rig: PlaybackRig, silence: (Int, [ChannelMessage]) -> Void) {
        let wasPlaying = state == .playing
        if wasPlaying { pause(at: start, on: rig, silence: silence) }
        position = max(0, min(length, frame))
        if wasPlaying { play(at: start, on: rig) } else if state == .stopped && position > 0 { state = .paused }
    }

    /// Each control tick, `rendered` being the graph frames rendered (or about to be) so far: the file's
    /// mapped controllers and rig switches as their time comes; near the end, a loop's next pass published
    /// ahead (half a second before the seam, so it plays without a gap); at the end, the next pass or stop.
    func tick(rendered: Int64, on rig: PlaybackRig) {
        guard state == .playing else { return }
        actions.applyParameters(to: rig, before: rendered - origin)
        actions.applyBoundaries(to: rig, before: rendered - origin)
        let ahead = Int64(sampleRate / 2)
        if loops, length > 0, !nextPassPublished, rendered + ahead >= origin + length {
            // This pass (the player skips what was rendered) and the next, which starts where this one ends.
            publish(on: rig, from: 0, passes: 2)
            nextPassPublished = true
        }
        guard rendered - origin >= length else { return }
        if nextPassPublished {
            origin += length
            passes += 1
            nextPassPublished = false
            actions = RoutedActions(routed)
        } else {
            state = .stopped
            position = 0
        }
    }

    /// The timeline from file frame `from` on, placed at `origin` (and `passes` − 1 more passes after it),
    /// with the state chased at `from` first.
    private func publish(on rig: PlaybackRig, from: Int64, passes: Int = 1) {
        var events: [TimedMIDIEvent] = []
        if from > 0 {
            for var event in chased(at: from) {
                event.sampleTime = origin + from
                events.append(event)
            }
        }
        for pass in 0..<Int64(passes) {
            for var event in routed.timeline.events where event.sampleTime >= from || pass > 0 {
                event.sampleTime += origin + pass * length
                events.append(event)
            }
        }
        rig.timelinePlayer.play(MIDITimeline(events))
    }

    /// The state the file set up before `frame`: per part and channel, its bank select, program, every
    /// controller's last value (not the notes-off, sound-off and mode messages) and pitch bend, in that order.
    private func chased(at frame: Int64) -> [TimedMIDIEvent] {
        // Keyed by part, channel and what it sets, whose numbers order them: bank select MSB and LSB (0, 32),
        // the program (128), the other controllers (256 + number), the bend (512).
        var last: [Int: TimedMIDIEvent] = [:]
        for event in routed.timeline.events where event.sampleTime < frame {
            let what: Int
            switch (event.status & 0xF0, event.data1) {
            case (0xB0, 0), (0xB0, 32): what = Int(event.data1)
            case (0xC0, _): what = 128
            case (0xB0, let controller) where controller < 120: what = 256 + Int(controller)
            case (0xE0, _): what = 512
            default: continue
            }
            last[Int(event.destination) << 16 | Int(event.status & 0x0F) << 10 | what] = event
        }
        return last.keys.sorted().map { last[$0]! }
    }

    /// The parts the file plays, with the channels it reaches each on.
    private func playedChannels() -> [(Int, [UInt8])] {
        var channels: [Int: Set<UInt8>] = [:]
        for event in routed.timeline.events {
            channels[Int(event.destination), default: []].insert(event.status & 0x0F)
        }
        return channels.keys.sorted().map { ($0, channels[$0]!.sorted()) }
    }
}

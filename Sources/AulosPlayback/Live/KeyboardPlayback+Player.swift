import AulosCore
import AulosMIDI
import AulosRig

/// The live session's file player (`FilePlayer`): loaded with each rig the session builds, ticked by the
/// control loop, answering `player …` from the socket, OSC and the panel.
///
/// Threads: the control thread.
extension KeyboardPlayback {
    /// Loads the input file through `rig` at the granted rate; the first time it plays from the start at
    /// frame 0 (the prelude is the file's timeline's start), so it sounds as its offline render does. After
    /// a rebuild (a reload, a device restart) it goes on from where it was, playing or not.
    func startPlayer(on rig: PlaybackRig, activeRig: Int, sampleRate: Double) throws {
        guard options.playsFile else { return }
        let input = try playerFile(at: sampleRate)
        if player == nil { for warning in input.warnings { observer.warning(warning) } }
        let loaded = try FilePlayer(
            path: playback.input ?? "demo.score", input: input, rig: rig, activeRig: activeRig, sampleRate: sampleRate)
        let resume = playerResume ?? (0, true, false)
        loaded.loops = resume.loops
        loaded.locate(to: resume.position, at: 0, on: rig) { _, _ in }
        if resume.playing { loaded.play(at: 0, on: rig) }
        player = loaded
    }

    /// The player's file with its times at `sampleRate`: read once, and again only for another rate.
    func playerFile(at sampleRate: Double) throws -> InputFile {
        if let playerInput, playerInput.sampleRate == sampleRate { return playerInput.file }
        let file = try InputFile.load(orDemo: playback.input, sampleRate: sampleRate, reading: playback.midiReading)
        playerInput = (sampleRate, file)
        return file
    }

    /// Before the rig is torn down: where the player is, for the next one.
    func keepPlayerPlace(of live: LiveSession) {
        playing = nil
        guard let player else { return }
        let now = live.status.statistics.framesPlayed
        playerResume = (player.position(at: now), player.state == .playing, player.loops)
    }

    /// Ends notes the player leaves behind: messages straight to a part.
    private var silence: (Int, [ChannelMessage]) -> Void {
        { [midi] part, messages in midi.send(messages, toPart: part) }
    }

    /// The graph frame a request takes effect at: past what is rendered, by a period.
    private func requestFrame(_ live: LiveSession) -> Int64 {
        live.status.statistics.framesPlayed + Int64(live.grant.bufferFrames) + Int64(live.grant.period)
    }

    func tickPlayer(_ live: LiveSession) {
        guard var player else { return }
        if let active = midi.activeRig, active != player.activeRig, let input = playerInput?.file,
            let rerouted = try? FilePlayer(
                path: player.path, input: input, rig: live.rig, activeRig: active, sampleRate: player.sampleRate)
        {
            // The rig switched: the file goes on through the new rig's parts from where it is.
            let at = requestFrame(live)
            let (position, playing) = (player.position(at: at), player.state == .playing)
            player.pause(at: at, on: live.rig, silence: silence)
            rerouted.loops = player.loops
            rerouted.locate(to: position, at: at, on: live.rig) { _, _ in }
            if playing { rerouted.play(at: at, on: live.rig) }
            player = rerouted
            self.player = rerouted
        }
        player.tick(rendered: live.status.statistics.framesPlayed + Int64(live.grant.bufferFrames), on: live.rig)
        let rate = live.grant.sampleRate
        server.player = ServiceStatus.Player(
            file: player.path, state: player.state.rawValue,
            position: Double(player.position(at: live.status.statistics.framesPlayed)) / rate,
            duration: Double(player.length) / rate, loop: player.loops, passes: player.passes)
    }

    func answerPlayer(_ command: ControlRequest.PlayerCommand) -> ControlReply {
        guard let player, let live = playing else {
            return .failure(FilePlayer.noneLoaded)
        }
        let (rig, at) = (live.rig, requestFrame(live))
        switch command {
        case .play: player.play(at: at, on: rig)
        case .pause: player.pause(at: at, on: rig, silence: silence)
        case .stop: player.pause(at: at, on: rig, silence: silence, rewinding: true)
        case .locate(let seconds):
            player.locate(to: Int64((seconds * live.grant.sampleRate).rounded()), at: at, on: rig, silence: silence)
        case .loop(let on): player.loops = on
        }
        var done = ControlReply.Done()
        done.player = player.state.rawValue
        done.position = Double(player.position(at: at)) / live.grant.sampleRate
        // Where the file's frame 0 lands on the graph's time line while it plays (tests place notes by it).
        done.origin = player.state == .playing ? at - player.position(at: at) : nil
        return .done(done)
    }
}

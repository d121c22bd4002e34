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
            path: playerPath, input: input, rig: rig, activeRig: activeRig, sampleRate: sampleRate)
        let resume = playerResume ?? (0, true, false)
        loaded.loops = resume.loops
        loaded.locate(to: resume.position, at: 0, on: rig) { _, _ in }
        if resume.playing { loaded.play(at: 0, on: rig) }
        player = loaded
    }

    /// The player's file with its times at `sampleRate`: read once, and again only for another rate.
    func playerFile(at sampleRate: Double) throws -> InputFile {
        if let playerInput, playerInput.sampleRate == sampleRate { return playerInput.file }
        let file =
            try song.map { song throws(InputFileError) in
                try InputFile.load(song.path, sampleRate: sampleRate, reading: playback.midiReading)
            } ?? InputFile.load(orDemo: playback.input, sampleRate: sampleRate, reading: playback.midiReading)
        playerInput = (sampleRate, file)
        return file
    }

    /// The file in the player: the playlist's song, or the input file.
    var playerPath: String { song?.path ?? playback.input ?? "demo.score" }

    /// Loads song `index` of the playlist in place of the player's file, stopped at its start (the file
    /// playing is stopped first, its notes ended); the transport takes its tempo. A song that cannot be read
    /// leaves the player as it was.
    @discardableResult
    func loadSong(_ index: Int, _ live: LiveSession) throws(ControlFailure) -> String {
        guard let playlist else { throw ControlFailure("the player has no playlist (aulos play FOLDER --web …)") }
        let rate = live.grant.sampleRate
        let path = playlist.path(index)
        let file: InputFile
        do { file = try InputFile.load(path, sampleRate: rate, reading: playback.midiReading) } catch {
            throw ControlFailure("cannot load song \(index + 1): \(error.message)")
        }
        let loaded: FilePlayer
        do {
            loaded = try FilePlayer(
                path: path, input: file, rig: live.rig, activeRig: midi.activeRig ?? 0, sampleRate: rate)
        } catch { throw ControlFailure("cannot load song \(index + 1): \(error.message)") }
        for warning in file.warnings { observer.warning(warning) }
        if let player {
            player.pause(at: requestFrame(live), on: live.rig, silence: silence, rewinding: true)
            loaded.loops = player.loops
        }
        (player, playerInput, song) = (loaded, (rate, file), (index, path))
        live.rig.transport.setTempoThroughout(playback.tempoMap(of: file).first?.bpm ?? 120)
        let title = Playlist.title(playlist.songs[index])
        observer.info("song \(index + 1): \(title)")
        return title
    }

    /// A program change on the song channel: that song of the playlist (program 0: the first).
    func chooseSong(_ program: Int, _ live: LiveSession) {
        guard let playlist else { return }
        guard playlist.songs.indices.contains(program) else {
            observer.warning("program change \(program) on the song channel: the playlist has \(playlist.songs.count)")
            return
        }
        do { try loadSong(program, live) } catch { observer.warning(error.message) }
    }

    /// MIDI transport from keyboards and sequencers moves the player as it moves the host transport: Start
    /// plays the file from its beginning, Continue from where it is, Stop pauses it, Song Position Pointer
    /// locates it (by the file's tempo map).
    func followTransport(_ message: MIDIMessage, _ live: LiveSession) {
        guard let player else { return }
        let (rig, at) = (live.rig, requestFrame(live))
        switch message {
        case .start:
            player.locate(to: 0, at: at, on: rig, silence: silence)
            player.play(at: at, on: rig)
        case .continue: player.play(at: at, on: rig)
        case .stop: player.pause(at: at, on: rig, silence: silence)
        case .songPosition(let sixteenths):
            let seconds = Self.seconds(atBeat: Double(sixteenths) / 4, in: playerTempoMap)
            player.locate(to: Int64((seconds * live.grant.sampleRate).rounded()), at: at, on: rig, silence: silence)
        default: return
        }
    }

    /// The player's file's tempo map (quarter-note beats, BPM), as the transport plays it.
    private var playerTempoMap: [(beat: Double, bpm: Double)] {
        playerInput.map { playback.tempoMap(of: $0.file) } ?? [(0, 120)]
    }

    /// Seconds from the start at `beat`, by a tempo map.
    static func seconds(atBeat beat: Double, in map: [(beat: Double, bpm: Double)]) -> Double {
        var (seconds, from, bpm) = (0.0, 0.0, map.first?.bpm ?? 120)
        for change in map.dropFirst() where change.beat < beat {
            seconds += (change.beat - from) * 60 / bpm
            (from, bpm) = (change.beat, change.bpm)
        }
        return seconds + (beat - from) * 60 / bpm
    }

    /// The beat at `seconds` from the start, by a tempo map.
    static func beat(atSeconds target: Double, in map: [(beat: Double, bpm: Double)]) -> Double {
        var (seconds, from, bpm) = (0.0, 0.0, map.first?.bpm ?? 120)
        for change in map.dropFirst() {
            let next = seconds + (change.beat - from) * 60 / bpm
            guard next <= target else { break }
            (seconds, from, bpm) = (next, change.beat, change.bpm)
        }
        return from + (target - seconds) * bpm / 60
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
            duration: Double(player.length) / rate, loop: player.loops, passes: player.passes,
            playlist: playlist?.songs, song: song.map { $0.index + 1 })
    }

    func answerPlayer(_ command: ControlRequest.PlayerCommand) -> ControlReply {
        guard let loaded = player, let live = playing else {
            return .failure(FilePlayer.noneLoaded)
        }
        var player = loaded
        let (rig, at) = (live.rig, requestFrame(live))
        let rate = live.grant.sampleRate
        switch command {
        case .play: player.play(at: at, on: rig)
        case .pause: player.pause(at: at, on: rig, silence: silence)
        case .stop: player.pause(at: at, on: rig, silence: silence, rewinding: true)
        case .locate(let seconds):
            player.locate(to: Int64((seconds * rate).rounded()), at: at, on: rig, silence: silence)
        case .loop(let on): player.loops = on
        case .load, .next, .previous:
            guard let playlist else { return .failure("the player has no playlist (aulos play FOLDER --web …)") }
            let current = song?.index ?? 0
            let index: Int
            switch command {
            case .next: index = min(playlist.songs.count - 1, current + 1)
            case .previous: index = max(0, current - 1)
            case .load(let choice):
                guard let chosen = playlist.index(of: choice) else {
                    return .failure(
                        "no song '\(choice.clipped(60))' in the playlist (1…\(playlist.songs.count), or a name)")
                }
                index = chosen
            default: index = current
            }
            do { try loadSong(index, live) } catch { return .failure(error.message) }
            player = self.player!
        }
        // The host transport goes with the player, so tempo-synced plugins and MIDI clock out follow the file.
        switch command {
        case .play, .locate:
            if player.state == .playing {
                rig.transport.locate(
                    beat: Self.beat(atSeconds: Double(player.position(at: at)) / rate, in: playerTempoMap))
                rig.transport.play()
            }
        case .pause, .stop, .load, .next, .previous:
            rig.transport.stop()
            if player.position(at: at) == 0 { rig.transport.rewind() }
        case .loop: break
        }
        var done = ControlReply.Done()
        done.player = player.state.rawValue
        done.position = Double(player.position(at: at)) / rate
        done.song = song.map { $0.index + 1 }
        // Where the file's frame 0 lands on the graph's time line while it plays (tests place notes by it).
        done.origin = player.state == .playing ? at - player.position(at: at) : nil
        return .done(done)
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The player on the box: `aulos play FILE` with a control road plays the file on the live instrument —
/// the status says what plays and where, and the player pauses, locates and loops on request — and a file
/// played from its start through `--device null` is its offline render, bit for bit. (`aulos play FILE`
/// refused --control-socket, --osc and --web: a file could not be followed or stopped from a phone.)
@Suite(.serialized) struct FilePlayerTests {
    let folder = NSTemporaryDirectory() + "aulos-player-\(UUID().uuidString)"

    init() throws { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }

    func removeFolder() { try? FileManager.default.removeItem(atPath: folder) }

    /// A piece for three parts (a program change, controllers, chords, bass, drums) played on the live
    /// instrument with the socket attached and recorded, then rendered: the recording begins with the render,
    /// sample for sample.
    @Test func aFilePlayedOnTheBoxIsItsOfflineRender() throws {
        defer { removeFolder() }
        let score = folder + "/piece.score"
        try
            ("0b tempo 120\n0b program 33 ch=2\n0b cc 7 100 ch=1\n0b note C4 0.9b ch=1\n0b note E4 0.9b ch=1\n"
            + "0b note C2 0.45b ch=2\n0.5b note G2 0.4b ch=2\n0b note 36 0.2b ch=10\n1b note 38 0.2b ch=10\n"
            + "2b note F4 1b vel=70 ch=1\n3b note 42 0.1b ch=10\n4b end\n")
            .write(toFile: score, atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", score, "--device", "null", "--record", folder + "/played.wav", "--duration", "5"], in: folder)
        var player: [String: Any] = [:]
        #expect(
            try aulos.waitForStatus {
                player = $0["player"] as? [String: Any] ?? [:]
                return player["state"] as? String == "playing"
            }, "\(aulos.stderr)")
        #expect(player["file"] as? String == score, "\(player)")
        #expect(player["duration"] as? Double == 2, "four beats at 120 BPM: \(player)")
        #expect(aulos.waitForExit(seconds: 30) == 0, "\(aulos.stderr)")
        let rendered = try runAulos(
            ["render", score, "--format", "float32", "--tail", "1.5", "-o", folder + "/offline.wav"])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let played = try GuardedOutputTests.floatSamples(folder + "/played.wav")
        let offline = try GuardedOutputTests.floatSamples(folder + "/offline.wav")
        #expect(offline.count > 2 * 48_000 * 3 && played.count >= offline.count, "\(played.count) \(offline.count)")
        let same = played.count >= offline.count && Array(played[..<offline.count]) == offline
        let first = zip(played, offline).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(same, "first different sample at \(first.map { $0 / 2 } ?? -1) (frame)")
    }

    /// A General MIDI file plays whole through a set: its program change on the set's control channel is
    /// played on channel 16 of the rig playing, not a rig switch (the factory set's channel 16 switched rigs
    /// in the middle of any GM song that used it).
    @Test func aFileInThePlayerPlaysItsControlChannel() throws {
        defer { removeFolder() }
        try BackgroundAulos.writeTwoRigSet(in: folder)
        let set = "name: Set\ncontrol-channel: 16\nrigs:\n  - program: 0\n    rig: one.yaml\n"
        try (set + "  - program: 1\n    rig: two.yaml\n").write(
            toFile: folder + "/set.yaml", atomically: true, encoding: .utf8)
        try "0s program 1 ch=16\n0.1s note C4 0.5s ch=16\n0.1s note E4 0.5s ch=1\n3s end\n"
            .write(toFile: folder + "/gm.score", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", folder + "/gm.score", "--rig", folder + "/set.yaml", "--device", "null"], in: folder)
        var seen: [String: Any] = [:]
        #expect(
            try aulos.waitForStatus(seconds: 20) { status in
                seen = status
                return (status["programs"] as? [[String: Any]] ?? []).contains {
                    $0["channel"] as? Int == 16 && $0["program"] as? Int == 1
                }
            }, "\(seen["programs"] ?? "")")
        #expect(seen["rigSwitches"] as? Int == 0 && seen["rig"] as? String == "One", "\(seen["rig"] ?? "")")
    }

    /// Pause, locate and loop, by frame: a four-second file of a drum hit each second, looped — its passes
    /// repeat sample for sample, one file-length apart; paused — silence, the position held; located to 1.5 s
    /// and played — the hit at 2 s plays at the frame the reply's origin puts it, its onset as far after its
    /// event as the first hit's was.
    @Test func pauseLocateAndLoopLandOnTheirFrames() throws {
        defer { removeFolder() }
        try "name: Drums\ndry: true\nparts:\n  - name: Kit\n    instrument: sampler\n    channels: [10]\n"
            .write(toFile: folder + "/drums.yaml", atomically: true, encoding: .utf8)
        try "0s note 38 0.1s ch=10\n1s note 38 0.1s ch=10\n2s note 38 0.1s ch=10\n4s end\n"
            .write(toFile: folder + "/hits.score", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            [
                "play", folder + "/hits.score", "--rig", folder + "/drums.yaml", "--device", "null", "--record",
                folder + "/played.wav",
            ], in: folder)
        func player() throws -> [String: Any] { try aulos.status()?["player"] as? [String: Any] ?? [:] }
        #expect(try aulos.waitForStatus { ($0["player"] as? [String: Any])?["state"] as? String == "playing" })
        #expect(aulos.request("player loop on")?.hasPrefix(#"{"ok":true"#) == true)
        // In the fourth pass: the second and third are whole.
        #expect(try aulos.waitForStatus(seconds: 25) { ($0["player"] as? [String: Any])?["passes"] as? Int ?? 0 >= 3 })
        let paused = try #require(aulos.request("player pause"))
        #expect(paused.contains(#""player":"paused""#), "\(paused)")
        let held = try player()["position"] as? Double
        usleep(600_000)
        #expect(try player()["position"] as? Double == held, "the position holds while paused")
        #expect(aulos.request("player locate 1.5")?.contains(#""position":1.5"#) == true)
        let resumed = try #require(aulos.request("player play"))
        let origin = try #require(
            (try JSONSerialization.jsonObject(with: Data(resumed.utf8)) as? [String: Any])?["origin"] as? Int)
        usleep(1_500_000)
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0, "\(aulos.stderr)")

        let samples = try GuardedOutputTests.floatSamples(folder + "/played.wav")
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        /// The first frame from `start` on where the sound rises past −40 dBFS after 0.3 s below it.
        func onset(from start: Int) -> Int? {
            var quiet = 14_400  // what came before `start` counts as quiet
            for frame in start..<left.count {
                if abs(left[frame]) > 0.01 {
                    if quiet >= 14_400 { return frame }
                    quiet = 0
                } else {
                    quiet += 1
                }
            }
            return nil
        }
        let length = 4 * 48_000
        // Passes 2 and 3 (each after a pass's silent last second) are the same samples, a file-length apart.
        // (The very first hit, on the rig's first frame, is not: the kit's first note starts from nothing.)
        let pass2 = Array(left[length..<2 * length])
        let pass3 = Array(left[2 * length..<3 * length])
        let difference = zip(pass2, pass3).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(pass2 == pass3, "first difference at \(difference ?? -1)")
        let lag = try #require(onset(from: length - 1000)) - length
        #expect(onset(from: 2 * length - 1000) == 2 * length + lag, "the third pass starts a file-length later")
        // After the locate: the hit at 2 s lands at origin + 2 s, as late after its event as the loop's hits.
        let located = try #require(onset(from: origin + 48_000 * 3 / 2))
        #expect(located == origin + 2 * 48_000 + lag, "onset \(located), origin \(origin), lag \(lag)")
    }
}

/// A playlist on the box: `aulos play FOLDER` with a road loads the folder's songs in the order a person
/// reads their names, the first stopped; `player load|next|previous`, a program change on the song channel,
/// and MIDI Start/Stop/Continue move the player; a song that is not there is refused with what there is.
@Suite(.serialized) struct PlaylistPlayerTests {
    let folder = NSTemporaryDirectory() + "aulos-playlist-\(UUID().uuidString)"

    init() throws { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }

    func removeFolder() { try? FileManager.default.removeItem(atPath: folder) }

    static func json(_ line: String?) -> [String: Any] {
        (line?.data(using: .utf8)).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
    }

    @Test func aPlaylistIsLoadedChosenAndFollowsMIDITransport() throws {
        defer { removeFolder() }
        let songs = folder + "/songs"
        try FileManager.default.createDirectory(atPath: songs, withIntermediateDirectories: true)
        for (name, seconds) in [("10 Outro.score", 3), ("2 Ballad.score", 4), ("1 Intro.score", 2)] {
            try "0s note C4 0.5s\n\(seconds)s end\n".write(
                toFile: songs + "/" + name, atomically: true, encoding: .utf8)
        }
        try "not a song".write(toFile: songs + "/notes.pdf", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(["play", songs, "--device", "null", "--song-channel", "5"], in: folder)
        var player: [String: Any] = [:]
        func waitForPlayer(_ condition: @escaping ([String: Any]) -> Bool) throws -> Bool {
            try aulos.waitForStatus {
                player = $0["player"] as? [String: Any] ?? [:]
                return condition(player)
            }
        }
        #expect(try waitForPlayer { $0["song"] as? Int == 1 }, "\(aulos.stderr)")
        #expect(player["playlist"] as? [String] == ["1 Intro.score", "2 Ballad.score", "10 Outro.score"])
        #expect(player["state"] as? String == "stopped" && player["duration"] as? Double == 2, "\(player)")
        // By name without its extension, then next (the last stays the last) and previous.
        #expect(Self.json(aulos.request("player load 10 outro"))["song"] as? Int == 3)
        #expect(try waitForPlayer { $0["duration"] as? Double == 3 }, "\(player)")
        #expect(Self.json(aulos.request("player next"))["song"] as? Int == 3)
        #expect(Self.json(aulos.request("player previous"))["song"] as? Int == 2)
        let refused = aulos.request("player load Encore") ?? ""
        #expect(refused.contains("no song 'Encore' in the playlist (1…3, or a name)"), "\(refused)")
        #expect(Self.json(aulos.request("player load ../../etc/passwd"))["ok"] as? Bool != true)
        // MIDI Start plays from the start, Stop pauses, Continue plays on.
        #expect(aulos.request("midi FA") == #"{"ok":true,"messages":1}"#)
        #expect(try waitForPlayer { $0["state"] as? String == "playing" && $0["song"] as? Int == 2 }, "\(player)")
        #expect(aulos.request("midi FC") == #"{"ok":true,"messages":1}"#)
        #expect(try waitForPlayer { $0["state"] as? String == "paused" }, "\(player)")
        #expect(aulos.request("midi FB") == #"{"ok":true,"messages":1}"#)
        #expect(try waitForPlayer { $0["state"] as? String == "playing" }, "\(player)")
        // Program 0 on channel 5 loads the first song, stopped; its duration follows.
        #expect(aulos.request("midi C4 00") == #"{"ok":true,"messages":1}"#)
        #expect(
            try waitForPlayer { $0["song"] as? Int == 1 && $0["state"] as? String == "stopped" }, "\(player)")
        #expect(player["duration"] as? Double == 2, "\(player)")
        #expect(aulos.stderr.contains("song 1: 1 Intro"), "\(aulos.stderr)")
    }

    @Test func playlistsAreRefusedWithWhatToDo() throws {
        defer { removeFolder() }
        let empty = try runAulos(["play", folder, "--device", "null", "--control-socket", folder + "/s"])
        #expect(empty.status != 0 && empty.stderr.contains("no songs in the playlist folder"), "\(empty.stderr)")
        let offline = try runAulos(["play", folder, "--device", "null"])
        #expect(offline.status != 0 && offline.stderr.contains("is a folder: a playlist plays on the live"))
        let channel = try runAulos(["play", "--song-channel", "3", "--device", "null", "--control-socket", "none"])
        #expect(channel.status != 0 && channel.stderr.contains("--song-channel chooses songs of a playlist"))
    }
}

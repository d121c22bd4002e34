import Foundation
import Testing

/// `aulos play --service` as systemd runs it (here on ALSA's `null` device, with no sequencer: the service
/// waits for one and takes MIDI through its control socket meanwhile).
@Suite(.serialized) struct ServiceCommandTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "aulos-service-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func removeFolder() { try? FileManager.default.removeItem(atPath: folder) }

    /// The service on ALSA's `null` device playing a set of rig One and `second`, once its status answers.
    func startService(listing second: String = "one.yaml") throws -> BackgroundAulos {
        try Self.writeSet(listing: second, in: folder)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/set.yaml", "--device", "null"], in: folder)
        #expect(try aulos.waitForStatus { ($0["rigs"] as? [String])?.count == 2 }, "\(aulos.stderr)")
        return aulos
    }

    static func writeSet(listing second: String, in folder: String) throws {
        try "name: One\nparts:\n  - name: Sine\n    instrument: synth\n    preset: Glass Bell\n"
            .write(toFile: folder + "/one.yaml", atomically: true, encoding: .utf8)
        let set = "name: Set\ncontrol-channel: 16\nrigs:\n  - program: 0\n    rig: one.yaml\n"
        try (set + "  - program: 1\n    rig: \(second)\n").write(
            toFile: folder + "/set.yaml", atomically: true, encoding: .utf8)
    }

    /// The same set given to the other commands that read rigs: one line, exit 1 (it was SIGSEGV, rc 139).
    @Test func aSetListingItselfIsOneLineEverywhere() throws {
        defer { removeFolder() }
        try Self.writeSet(listing: "set.yaml", in: folder)
        let set = folder + "/set.yaml"
        for arguments in [
            ["graph", "--rig", set], ["render", "--rig", set, "-o", folder + "/x.wav"],
            ["service", "install", "--root", folder, "--rig", set],
        ] {
            let result = try runAulos(arguments)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasSuffix("rigs[1].rig: 'set.yaml' is this set itself; a set lists rig files\n"))
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
    }

    /// `service install --web … --web-password FILE` with the file where the unit could not read it (a
    /// scratch folder, hidden by PrivateTmp=; root's, 0600, as sudo makes it): the hash is copied to
    /// /etc/aulos/web-password, root's alone, and handed to the service as a systemd credential, which its
    /// user can read whoever made the file. The unit passes systemd's own check. A file with no hash, and a
    /// panel whose page is not in the binary's data, are refused before anything is installed (either used to
    /// give a service that stopped at every start, restarted for ever).
    @Test func theServiceGetsThePanelsPasswordAsACredential() throws {
        defer { removeFolder() }
        let password = try WebPanelTests.passwordFile(in: folder, "a long passphrase")
        let root = folder + "/root"
        let installed = try runAulos(
            ["service", "install", "--root", root, "--web", "0.0.0.0:8080", "--web-password", password])
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("installed the web panel's page"), "\(installed.stdout)")
        #expect(installed.stdout.contains("installed the panel's password hash in \(root)/etc/aulos/web-password"))
        let copy = root + "/etc/aulos/web-password"
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == String(contentsOfFile: password, encoding: .utf8))
        var info = stat()
        #expect(stat(copy, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let unit = try String(contentsOfFile: root + "/etc/systemd/system/aulos.service", encoding: .utf8)
        #expect(unit.contains("LoadCredential=web-password:/etc/aulos/web-password\n"), "\(unit)")
        #expect(unit.contains(" --web 0.0.0.0:8080 --web-password %d/web-password"), "\(unit)")
        #expect(!unit.contains(folder), "the unit names no file of the scratch folder")
        // systemd's own reading of the unit (every key and specifier known), the binary being the installed one.
        if access("/usr/bin/systemd-analyze", X_OK) == 0 {
            let checked = unit.replacingOccurrences(of: "/usr/local/bin/aulos", with: root + "/usr/local/bin/aulos")
            try checked.write(toFile: folder + "/aulos.service", atomically: true, encoding: .utf8)
            // --man=no: the unit's Documentation= pages are installed with the package, not on this machine.
            let verify = try runAulos(
                ["verify", "--man=no", folder + "/aulos.service"], executable: "/usr/bin/systemd-analyze")
            #expect(verify.status == 0 && verify.stderr.isEmpty, "\(verify.stderr)")
        } else {
            print("skipped: systemd-analyze verify of the unit (no systemd-analyze here)")
        }
        let uninstalled = try runAulos(["service", "uninstall", "--root", root])
        #expect(uninstalled.status == 0 && access(copy, F_OK) != 0, "\(uninstalled.stdout)")

        try "not a hash\n".write(toFile: folder + "/plain", atomically: true, encoding: .utf8)
        let noHash = try runAulos(
            ["service", "install", "--root", root, "--web", "0.0.0.0:8080", "--web-password", folder + "/plain"])
        #expect(noHash.status == 1 && noHash.stderr.contains("holds no password hash"), "\(noHash.stderr)")
        let missing = try runAulos(
            ["service", "install", "--root", root, "--web", "0.0.0.0:8080", "--web-password", folder + "/none"])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read the web panel's password file"))
        #expect(access(root + "/usr/local/bin/aulos", F_OK) != 0, "nothing installed")

        // The copy installed under the root is an installed aulos (its prefix has share/aulos): run from there it
        // is used in place — the unit runs it where it is and nothing is copied — and its panel needs the page
        // in its own data; uninstalling the service removes it only because the service installer copied it.
        _ = try runAulos(["service", "install", "--root", root])
        let copied = root + "/usr/local/bin/aulos"
        let (root2, root3) = (folder + "/root2", folder + "/root3")
        let inPlace = try runInstalledCopy(["service", "install", "--root", root2, "--web", "8080"], copied)
        #expect(inPlace.status == 0, "\(inPlace.stderr)")
        #expect(inPlace.stdout.contains("using the installed \(copied)"), "\(inPlace.stdout)")
        #expect(access(root2 + "/usr", F_OK) != 0, "nothing of the program copied")
        let inPlaceUnit = try String(contentsOfFile: root2 + "/etc/systemd/system/aulos.service", encoding: .utf8)
        #expect(inPlaceUnit.contains("ExecStart=\(copied) play --service"), "\(inPlaceUnit)")
        try FileManager.default.removeItem(atPath: root + "/usr/local/share/aulos/web")
        let withoutPage = try runInstalledCopy(["service", "install", "--root", root3, "--web", "8080"], copied)
        #expect(withoutPage.status == 1 && withoutPage.stderr.contains("the web panel's page (share/aulos/web) is"))
        #expect(access(root3, F_OK) != 0, "nothing installed")
        let removed = try runInstalledCopy(["service", "uninstall", "--root", root2], copied)
        #expect(removed.stdout.contains("removed \(root)/usr/local/share/aulos"), "\(removed.stdout)")
        #expect(access(copied, F_OK) != 0 && access(root2 + "/etc/systemd/system/aulos.service", F_OK) != 0)
    }

    /// A copy of aulos run from where it was copied: a process another test starts meanwhile can hold the new
    /// file open for writing in its forked child for an instant (exec then fails with ETXTBSY, "Text file busy");
    /// that start is retried.
    func runInstalledCopy(_ arguments: [String], _ executable: String) throws -> CommandResult {
        for _ in 0..<50 {
            do {
                return try runAulos(arguments, executable: executable)
            } catch let error as NSError
                where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY)
            {
                usleep(20_000)
            }
        }
        return try runAulos(arguments, executable: executable)
    }

    /// A package's aulos (its data under its own prefix, not copied by the service installer) is used in place
    /// and kept when the service is removed: `service uninstall` leaves it to apt or `make uninstall`.
    @Test func aPackagedAulosIsUsedInPlaceAndKept() throws {
        defer { removeFolder() }
        let prefix = folder + "/usr"
        let share = prefix + "/share/aulos"
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: share, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: aulosBinary, toPath: prefix + "/bin/aulos")
        try FileManager.default.copyItem(atPath: repositoryRoot + "/presets", toPath: share + "/presets")
        let root = folder + "/root"
        let installed = try runInstalledCopy(["service", "install", "--root", root], prefix + "/bin/aulos")
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("using the installed \(prefix)/bin/aulos"), "\(installed.stdout)")
        #expect(FileManager.default.fileExists(atPath: root + "/var/lib/aulos/rigs/stage.yaml"))
        let removed = try runInstalledCopy(["service", "uninstall", "--root", root], prefix + "/bin/aulos")
        #expect(removed.status == 0 && removed.stdout.contains("kept \(prefix)/bin/aulos and its data"))
        #expect(access(prefix + "/bin/aulos", X_OK) == 0 && access(share + "/presets/rigs/stage.yaml", R_OK) == 0)
        #expect(access(root + "/etc/systemd/system/aulos.service", F_OK) != 0)
    }

    /// A service with a playlist: its songs copied where the service's user reads them, the unit playing that
    /// folder with the song channel; a folder without songs, or a song channel that is the set's control
    /// channel, is refused before anything is installed.
    @Test func theServiceStartsWithAPlaylist() throws {
        defer { removeFolder() }
        let (songs, root) = (folder + "/songs", folder + "/root")
        mkdir(songs, 0o755)
        let empty = try runAulos(["service", "install", "--root", root, "--playlist", songs])
        #expect(empty.status == 1 && empty.stderr.contains("no songs in the playlist folder"), "\(empty.stderr)")
        #expect(access(root, F_OK) != 0, "nothing installed")
        for name in ["1 Intro.score", "2 Ballad.mid"] {
            try "0s note C4 1s\n2s end\n".write(toFile: songs + "/" + name, atomically: true, encoding: .utf8)
        }
        let clash = try runAulos(["service", "install", "--root", root, "--playlist", songs, "--song-channel", "16"])
        #expect(clash.status == 1 && clash.stderr.contains("is the rig set's control channel"), "\(clash.stderr)")
        let installed = try runAulos(
            ["service", "install", "--root", root, "--playlist", songs, "--song-channel", "15"])
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("installed 2 songs in \(root)/var/lib/aulos/songs"), "\(installed.stdout)")
        #expect(FileManager.default.contents(atPath: root + "/var/lib/aulos/songs/1 Intro.score") != nil)
        let unit = try String(contentsOfFile: root + "/etc/systemd/system/aulos.service", encoding: .utf8)
        #expect(unit.contains(" --song-channel 15 /var/lib/aulos/songs\n"), "\(unit)")
    }

    /// What each channel plays, whatever road the program change came by — a keyboard's (raw MIDI), the
    /// socket's `preset` on a channel of a 16-channel part, the rig's own start — as the status and `parts`
    /// show it; the synth's and a sampler's starting programs (a 16-channel part's drums on bank 128); the
    /// synth's presets by name. The panel said "0:0" for all of these, and followed nothing.
    @Test func theStatusShowsWhatEachChannelPlays() throws {
        defer { removeFolder() }
        try
            ("name: Programs\nparts:\n  - name: GM\n    instrument: sampler\n    channels: [1, 2, 3, 10]\n"
            + "    program: 4\n  - name: Pad\n    instrument: synth\n    channels: [5]\n    preset: Warm Pad\n")
            .write(toFile: folder + "/programs.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/programs.yaml", "--device", "null"], in: folder)
        func programs(_ status: [String: Any]) -> [String] {
            (status["programs"] as? [[String: Any]] ?? []).map {
                "\($0["part"] ?? "") \($0["channel"] ?? 0) \($0["bank"] ?? 0):\($0["program"] ?? 0)"
            }
        }
        let start = ["GM 1 0:4", "GM 2 0:4", "GM 3 0:4", "GM 10 128:0", "Pad 5 0:89"]
        var seen: [String] = []
        #expect(
            try aulos.waitForStatus {
                seen = programs($0)
                return seen == start
            }, "\(seen)")
        #expect(aulos.request("midi B1 00 08 B1 20 00 C1 30 C2 05")?.hasPrefix(#"{"ok":true"#) == true)
        #expect(
            aulos.request("preset GM 128 25 10") == #"{"ok":true,"bank":128,"channel":10,"part":"GM","program":25}"#)
        #expect(aulos.request("preset GM 0 1 4")?.contains("plays channels 1, 2, 3, 10, not 4") == true)
        let changed = ["GM 1 0:4", "GM 2 1024:48", "GM 3 0:5", "GM 10 128:25", "Pad 5 0:89"]
        #expect(
            try aulos.waitForStatus {
                seen = programs($0)
                return seen == changed
            }, "\(seen)")
        let text = try runAulos(["status", "--socket", aulos.socketPath]).stdout
        #expect(
            text.contains("programs: GM ch 1 0:4, ch 2 1024:48, ch 3 0:5, ch 10 128:25; Pad ch 5 0:89\n"), "\(text)")
        let parts = try #require(aulos.request("parts"))
        let groups = try #require(
            (try JSONSerialization.jsonObject(with: Data(parts.utf8)) as? [String: Any])?["groups"] as? [[String: Any]])
        #expect((groups[0]["programs"] as? [[String: Any]])?.count == 4, "\(parts.prefix(300))")
        let padPresets = groups[1]["presets"] as? [[String: Any]] ?? []
        #expect(padPresets.contains { $0["name"] as? String == "Warm Pad" && $0["program"] as? Int == 89 })
        #expect(groups[0]["presets"] == nil, "a sampler's presets are its font's")
    }

    /// A snapshot round trip (issue 32's bar): 20 parameters moved — the synth's, the sampler's, an LV2
    /// instrument's and an LV2 insert's, mixer faders, pans, a send, a mute, a return's level — presets
    /// changed on 3 channels, a new tempo and master EQ; `save`; the service restarted on the saved file
    /// shows every value, program and the tempo as before. (Nothing of it survived a restart before: there
    /// was no save, only a copy of the file as it was.)
    @Test func aSavedRigComesBackAsItPlayed() throws {
        defer { removeFolder() }
        let rig = folder + "/live.yaml"
        try
            ("# my rig, with a comment\nname: Live\noutput:\n  eq: Flat\nreturns:\n  - name: hall\n    effects:\n"
            + "      - unit: reverb\nparts:\n  - name: Lead\n    instrument: synth\n    preset: Warm Pad\n"
            + "    channels: [1, 2]\n    sends: {hall: 0.2}\n    effects:\n"
            + "      - unit: lv2:http://lv2plug.in/plugins/eg-amp\n"
            + "  - name: GM\n    instrument: sampler\n    channels: [3, 4, 10]\n"
            + "  - name: JX\n    instrument: lv2:http://drobilla.net/plugins/mda/JX10\n    channels: [5]\n")
            .write(toFile: rig, atomically: true, encoding: .utf8)
        func start() throws -> BackgroundAulos {
            let aulos = try BackgroundAulos(["play", "--service", "--rig", rig, "--device", "null"], in: folder)
            #expect(try aulos.waitForStatus(seconds: 30) { $0["rig"] as? String == "Live" }, "\(aulos.stderr)")
            return aulos
        }
        /// Every control's value, the programs and the tempo, as the socket reports them.
        func state(_ aulos: BackgroundAulos) throws -> [String: String] {
            var state: [String: String] = [:]
            let parts = try #require(aulos.request("parts"))
            let groups = (try JSONSerialization.jsonObject(with: Data(parts.utf8)) as? [String: Any])?["groups"]
            for group in groups as? [[String: Any]] ?? [] {
                for control in group["controls"] as? [[String: Any]] ?? [] {
                    state[control["target"] as? String ?? "?"] = "\(control["value"] ?? "")"
                }
            }
            let status = try #require(try aulos.status())
            for entry in status["programs"] as? [[String: Any]] ?? [] {
                state["\(entry["part"] ?? "") ch \(entry["channel"] ?? "")"] =
                    "\(entry["bank"] ?? ""):\(entry["program"] ?? "")"
            }
            state["tempo"] = "\(status["transportTempo"] ?? "")"
            return state
        }
        var aulos = try start()
        let before = try state(aulos)
        // 20 moves: the first few controls of each group past volume/pan, each to a quarter of its range.
        let parts = try #require(aulos.request("parts"))
        let groups = try #require(
            (try JSONSerialization.jsonObject(with: Data(parts.utf8)) as? [String: Any])?["groups"] as? [[String: Any]])
        var moves: [String] = [
            "set Lead.volume 0.55", "set Lead.pan -0.3", "set Lead.send-hall 0.45", "set GM.enabled 0",
            "set GM.volume 0.4", "set JX.pan 0.25", "set hall.level 0.7", "set output.volume 0.8",
        ]
        for (name, count) in [("Lead", 5), ("GM", 2), ("JX", 3), ("hall", 1)] {
            let group = try #require(groups.first { $0["name"] as? String == name })
            let controls = (group["controls"] as? [[String: Any]] ?? []).filter {
                let target = $0["target"] as? String ?? ""
                return !["volume", "pan", "enabled", "eq", "level"].contains(target.split(separator: ".").last ?? "")
                    && !target.contains(".send-")
            }
            for control in controls.prefix(count) {
                let (low, high) = (control["min"] as? Double ?? 0, control["max"] as? Double ?? 1)
                moves.append("set \(control["target"] as? String ?? "") \(low + (high - low) * 0.25)")
            }
        }
        #expect(moves.count == 19, "\(moves)")
        moves.append("set Lead.gain 2")  // the LV2 insert eg-amp's gain (dB)
        moves += ["preset GM 0 25 3", "preset GM 0 40 4", "preset GM 128 8 10", "preset Lead 0 5 2", "tempo 96"]
        moves.append("set output.eq Rock")
        for move in moves {
            let reply = aulos.request(move) ?? "no reply"
            #expect(reply.hasPrefix(#"{"ok":true"#), "\(move): \(reply)")
        }
        var moved: [String: String] = [:]
        #expect(
            try aulos.waitForStatus { _ in
                moved = (try? state(aulos)) ?? [:]
                return moved["GM ch 10"] == "128:8" && moved["Lead ch 2"] == "0:5"
            }, "\(moved)")
        let differences = moved.filter { before[$0.key] != $0.value }
        #expect(differences.count >= 25, "\(differences.count) changed: \(differences)")
        let saved = aulos.request("save") ?? "no reply"
        #expect(saved == #"{"saved":"\#(rig)"}"#, "\(saved)")
        #expect(try String(contentsOfFile: rig + "~", encoding: .utf8).hasPrefix("# my rig"), "the file as it was")
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0)

        aulos = try start()
        let after = try state(aulos)
        let lost = moved.filter { after[$0.key] != $0.value }.map {
            "\($0.key): \($0.value) → \(after[$0.key] ?? "none")"
        }
        #expect(lost.isEmpty, "not as it played after the restart: \(lost.sorted())")
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0)
        // A copy under a new name, never over a file.
        aulos = try start()
        #expect(aulos.request("save copy.yaml") == #"{"saved":"\#(folder)/copy.yaml"}"#)
        #expect(aulos.request("save copy.yaml")?.contains("copy.yaml exists; saving never replaces a file") == true)
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0)
    }

    /// A reload (SIGHUP, as `systemctl reload aulos` sends) keeps what was set live — a volume, a synth
    /// parameter, a channel's program — unless the rig file itself changed it: the file's new volume wins,
    /// the rest stays as it played. (A reload reset every knob: GM.volume 0.4 came back as 1.)
    @Test func aReloadKeepsWhatWasSetLive() throws {
        defer { removeFolder() }
        let rig = folder + "/live.yaml"
        let text =
            "name: Live\nparts:\n  - name: GM\n    instrument: sampler\n    channels: [1, 2]\n"
            + "  - name: Lead\n    instrument: synth\n    channels: [3]\n"
        try text.write(toFile: rig, atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(["play", "--service", "--rig", rig, "--device", "null"], in: folder)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Live" }, "\(aulos.stderr)")
        for request in ["set GM.volume 0.4", "set GM.pan 0.5", "set Lead.cutoff 900", "preset GM 0 19 2"] {
            #expect(aulos.request(request)?.hasPrefix(#"{"ok":true"#) == true, "\(request)")
        }
        func value(_ target: String) -> String { aulos.request("get \(target)") ?? "no reply" }
        func program() throws -> String? {
            let programs = try aulos.status()?["programs"] as? [[String: Any]] ?? []
            return programs.first { $0["channel"] as? Int == 2 }.map { "\($0["bank"] ?? ""):\($0["program"] ?? "")" }
        }
        #expect(try aulos.waitForStatus { _ in (try? program()) == "0:19" })
        aulos.signal(SIGHUP)
        #expect(try aulos.waitForStatus { $0["reloads"] as? Int == 1 }, "\(aulos.stderr)")
        #expect(value("GM.volume") == #"{"target":"GM.volume","value":0.4}"#)
        #expect(value("Lead.cutoff") == #"{"target":"Lead.cutoff","value":900}"#)
        #expect(try aulos.waitForStatus { _ in (try? program()) == "0:19" }, "\((try? program()) ?? "none")")
        // The file now says GM's volume: that wins; what it does not say stays as it played.
        try text.replacingOccurrences(of: "channels: [1, 2]\n", with: "channels: [1, 2]\n    volume: 0.7\n")
            .write(toFile: rig, atomically: true, encoding: .utf8)
        aulos.signal(SIGHUP)
        #expect(try aulos.waitForStatus { $0["reloads"] as? Int == 2 }, "\(aulos.stderr)")
        #expect(value("GM.volume") == #"{"target":"GM.volume","value":0.7}"#)
        #expect(value("GM.pan") == #"{"target":"GM.pan","value":0.5}"#)
        #expect(value("Lead.cutoff") == #"{"target":"Lead.cutoff","value":900}"#)
        #expect(aulos.stderr.contains("what was set live is kept where the file did not change it"))
    }

    /// A snapshot recalled through the socket: its values are the rig's at once (no rebuild: the rig has
    /// not reloaded), the status names it, and a name the rig does not have is refused with the list. A
    /// program change on the rig's snapshot channel recalls one too, and the log says so.
    @Test func aSnapshotIsRecalledFromTheSocket() throws {
        defer { removeFolder() }
        try
            ("name: Snap\nparts:\n  - name: Lead\n    instrument: synth\nsnapshot-channel: 16\nsnapshots:\n"
            + "  - name: Verse\n    values: {Lead.cutoff: 900, Lead.volume: 0.5}\n  - name: Chorus\n    program: 3\n"
            + "    values: {Lead.cutoff: 4000}\n")
            .write(toFile: folder + "/snap.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/snap.yaml", "--device", "null"], in: folder)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Snap" }, "\(aulos.stderr)")
        #expect(aulos.request("snapshot Verse") == #"{"ok":true,"snapshot":"Verse"}"#)
        #expect(aulos.request("get Lead.cutoff") == #"{"target":"Lead.cutoff","value":900}"#)
        #expect(aulos.request("get Lead.volume") == #"{"target":"Lead.volume","value":0.5}"#)
        #expect(aulos.request("snapshot 2") == #"{"ok":true,"snapshot":"Chorus"}"#)
        #expect(aulos.request("get Lead.cutoff") == #"{"target":"Lead.cutoff","value":4000}"#)
        #expect(
            aulos.request("snapshot Bridge")?.contains("no snapshot 'Bridge' in rig Snap (it has Verse, Chorus)")
                == true)
        let status = try #require(try aulos.status())
        #expect(status["snapshot"] as? String == "Chorus" && status["reloads"] as? Int == 0)
        let parts = aulos.request("parts") ?? ""
        #expect(parts.contains(#""snapshots":["Verse","Chorus"]"#), "\(parts.suffix(200))")
        // Program 0 on channel 16 recalls Verse (its position), program 3 Chorus (its own number).
        #expect(aulos.request("midi CF 00") == #"{"ok":true,"messages":1}"#)
        #expect(try aulos.waitForStatus { $0["snapshot"] as? String == "Verse" }, "\(aulos.stderr)")
        #expect(aulos.request("get Lead.cutoff") == #"{"target":"Lead.cutoff","value":900}"#)
        #expect(aulos.request("midi CF 03") == #"{"ok":true,"messages":1}"#)
        #expect(try aulos.waitForStatus { $0["snapshot"] as? String == "Chorus" }, "\(aulos.stderr)")
        #expect(aulos.request("get Lead.cutoff") == #"{"target":"Lead.cutoff","value":4000}"#)
        #expect(aulos.stderr.contains("snapshot Chorus of rig Snap (chosen by program change)"), "\(aulos.stderr)")
    }

    /// Requests anyone allowed on the socket could send: each gets an error line and the instrument plays on
    /// (`rig -9223372036854775808` overflowed computing the rig's index and killed it).
    @Test func hostileRequestsGetAnErrorAndTheInstrumentPlaysOn() throws {
        defer { removeFolder() }
        let aulos = try startService()
        let requests = [
            "rig -9223372036854775808", "rig 9223372036854775807", "rig 0", "set Sine.volume nan",
            "set Sine.volume 1e309", "get ../../etc/passwd", "midi FA F8 F8 F8 F8", "midi F8 FC FF",
            "learn", String(repeating: "x", count: 70_000), "\u{0}\u{1}\u{7f}",
        ]
        for line in requests {
            let reply = aulos.request(line)
            #expect(
                reply?.hasPrefix(#"{"error":"#) == true || reply?.hasPrefix(#"{"ok":true"#) == true,
                "\(line.prefix(40)): \(reply ?? "no reply")")
            #expect(aulos.process.isRunning, "\(line.prefix(40)) killed it: \(aulos.stderr)")
        }
        #expect(try aulos.status() != nil)
    }

    /// The status shows each part's, send's and return's level: a note played through the socket reaches the
    /// part, its send to the hall and the hall's return.
    /// The peak of the meter `name` in a status (−200 when there is none).
    static func level(_ name: String, in status: [String: Any]) -> Double {
        let meters = status["meters"] as? [[String: Any]] ?? []
        return meters.first { $0["name"] as? String == name }?["peak"] as? Double ?? -200
    }

    @Test func statusShowsPartSendAndReturnLevels() throws {
        defer { removeFolder() }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try
            ("name: Wet\nreturns:\n  - name: hall\n    effects:\n      - unit: reverb\n        preset: Hall\n"
            + "parts:\n  - name: Sine\n    instrument: synth\n    preset: Glass Bell\n    sends: {hall: 0.5}\n")
            .write(toFile: folder + "/wet.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/wet.yaml", "--device", "null"], in: folder)
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Wet" }, "\(aulos.stderr)")
        #expect(aulos.request("midi 90 45 7F")?.hasPrefix(#"{"ok":true"#) == true)
        let heard = try aulos.waitForStatus { status in
            ["part Sine", "send hall", "return hall", "master"].allSatisfy { Self.level($0, in: status) > -60 }
        }
        let meters = try aulos.status()?["meters"]
        #expect(heard, "\(meters ?? "no meters")")
        let text = try runAulos(["status", "--socket", aulos.socketPath])
        #expect(text.stdout.contains("levels (dBFS peak): part Sine "), "\(text.stdout)")
    }

    /// The master meter reads what leaves for the device, after the master chain: with a master plugin whose
    /// output is played as silence (it writes 3e38), the part sounds and the master reads silence (it read
    /// the mix before the chain, about −20 dBFS, while the device got DC or nothing).
    @Test func theMasterMeterReadsAfterTheMasterChain() throws {
        defer { removeFolder() }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try
            ("name: Loud\nparts:\n  - name: Sine\n    instrument: synth\n    preset: Glass Bell\n"
            + "output:\n  effects:\n    - unit: lv2:urn:aulos:test:misbehaving#huge\n")
            .write(toFile: folder + "/loud.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/loud.yaml", "--device", "null"], in: folder,
            environment: try MisbehavingPlugins.environment())
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Loud" }, "\(aulos.stderr)")
        #expect(aulos.request("midi 90 45 7F")?.hasPrefix(#"{"ok":true"#) == true)
        #expect(try aulos.waitForStatus { Self.level("part Sine", in: $0) > -60 }, "\(aulos.stderr)")
        let status = try #require(try aulos.status())
        #expect(Self.level("master", in: status) == -120, "\(status["meters"] ?? "")")
        #expect((status["warnings"] as? [String])?.contains { $0.contains("Misbehaving huge") } == true)
    }

    /// A MIDI-learn nobody completes gives up by itself (a client that timed out left "learning" in the
    /// status for ever), and `unlearn` gives up at once.
    @Test func anUnansweredLearnGivesUp() throws {
        defer { removeFolder() }
        let aulos = try startService()
        #expect(aulos.request("learn Sine.volume 0.5") == #"{"learning":"Sine.volume"}"#)
        #expect(try aulos.status()?["learning"] as? String == "Sine.volume")
        #expect(try aulos.waitForStatus(seconds: 5) { $0["learning"] == nil })
        #expect(aulos.request("learned") == #"{"error":"not learning"}"#)
        #expect(aulos.request("learn Sine.volume") == #"{"learning":"Sine.volume"}"#)
        #expect(aulos.request("unlearn") == #"{"ok":true}"#)
        #expect(try aulos.status()?["learning"] == nil)
        let timedOut = try runAulos(["learn", "Sine.volume", "--timeout", "0.3", "--socket", aulos.socketPath])
        #expect(timedOut.status == 1 && timedOut.stderr.contains("no controller moved within 0.3 s"))
        #expect(try aulos.status()?["learning"] == nil)
    }

    /// SIGHUP with the set file changed to list itself: one warning, the rig plays on untouched (it used to
    /// recurse until the stack overflowed, killing the instrument and leaving its socket file behind); a
    /// later SIGHUP with a good file reloads; SIGTERM exits 0 and removes the socket.
    @Test func aReloadThatFailsKeepsTheRigPlaying() throws {
        defer { removeFolder() }
        let aulos = try startService()
        guard let before = try aulos.status(), let seconds = before["seconds"] as? Double else { return }

        try Self.writeSet(listing: "set.yaml", in: folder)
        aulos.signal(SIGHUP)
        #expect(
            try aulos.waitForStatus { ($0["reloadFailure"] as? String)?.contains("is this set itself") == true },
            "\(aulos.stderr)")
        let kept = try aulos.status()
        #expect(aulos.process.isRunning)
        #expect(kept?["reloads"] as? Int == 0)
        #expect((kept?["seconds"] as? Double ?? 0) > seconds, "the rig played on")
        #expect(aulos.stderr.contains("reload failed, playing on with the rig as it was: "))

        try "name: Three\nparts:\n  - instrument: synth\n".write(
            toFile: folder + "/three.yaml", atomically: true, encoding: .utf8)
        try Self.writeSet(listing: "three.yaml", in: folder)
        aulos.signal(SIGHUP)
        #expect(try aulos.waitForStatus { $0["reloads"] as? Int == 1 && $0["reloadFailure"] == nil })
        #expect(try aulos.status()?["rigs"] as? [String] == ["One", "Three"])

        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0, "\(aulos.stderr)")
        #expect(!FileManager.default.fileExists(atPath: aulos.socketPath))
        #expect(aulos.stdout.contains("rig reloaded 1 time; 1 reload failed (rig kept)"))
    }

    /// SIGHUP with a set whose new rig reads but cannot be built (an unknown preset), then one whose plugin
    /// crashes: each is tried in full in a child process first, so the rig plays on and the status says why
    /// (the first used to end the service with exit 1 after the old rig was torn down).
    @Test func aReloadThatCannotBeBuiltKeepsTheRigPlaying() throws {
        defer { removeFolder() }
        try Self.writeSet(listing: "one.yaml", in: folder)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/set.yaml", "--device", "null"], in: folder,
            environment: try MisbehavingPlugins.environment())
        #expect(try aulos.waitForStatus { ($0["rigs"] as? [String])?.count == 2 }, "\(aulos.stderr)")

        try "name: Two\nparts:\n  - instrument: synth\n    preset: No Such Preset\n".write(
            toFile: folder + "/two.yaml", atomically: true, encoding: .utf8)
        try Self.writeSet(listing: "two.yaml", in: folder)
        aulos.signal(SIGHUP)
        #expect(
            try aulos.waitForStatus { ($0["reloadFailure"] as? String)?.contains("no synth preset") == true },
            "\(aulos.stderr)")
        try MisbehavingPlugins.rig("segv-run", name: "Two").write(
            toFile: folder + "/two.yaml", atomically: true, encoding: .utf8)
        aulos.signal(SIGHUP)
        #expect(
            try aulos.waitForStatus { ($0["reloadFailure"] as? String)?.contains("crashed (SIGSEGV") == true },
            "\(aulos.stderr)")
        #expect(aulos.process.isRunning)
        #expect(try aulos.status()?["rigs"] as? [String] == ["One", "One"])
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0, "\(aulos.stderr)")
    }

    /// Boot never loops on a bad rig: once a set has played five seconds it is kept in `.last-good/`; a set
    /// that cannot be built, a file that cannot be read, and a rig whose last start crashed (its plugin
    /// segfaults as it plays) each start the last good set instead, and the status says why.
    @Test func aBadRigAtStartPlaysTheLastGoodOne() throws {
        defer { removeFolder() }
        let environment = try MisbehavingPlugins.environment()
        func start() throws -> BackgroundAulos {
            try BackgroundAulos(
                ["play", "--service", "--rig", folder + "/set.yaml", "--device", "null"], in: folder,
                environment: environment)
        }
        try Self.writeSet(listing: "one.yaml", in: folder)
        var aulos = try start()
        #expect(
            try aulos.waitForStatus(seconds: 20) { _ in
                FileManager.default.fileExists(atPath: folder + "/.last-good/set.yaml")
            }, "\(aulos.stderr)")
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0)

        // Cannot be built.
        try "name: Two\nparts:\n  - instrument: synth\n    preset: No Such Preset\n".write(
            toFile: folder + "/two.yaml", atomically: true, encoding: .utf8)
        try Self.writeSet(listing: "two.yaml", in: folder)
        aulos = try start()
        #expect(
            try aulos.waitForStatus { ($0["fallback"] as? String)?.contains("cannot be built") == true },
            "\(aulos.stderr)")
        #expect(try aulos.status()?["rigs"] as? [String] == ["One", "One"])
        #expect(aulos.stderr.contains("playing the last rig that played"))
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0)

        // Cannot be read.
        try "name: Set\nrigs: [\n".write(toFile: folder + "/set.yaml", atomically: true, encoding: .utf8)
        aulos = try start()
        #expect(
            try aulos.waitForStatus { ($0["fallback"] as? String)?.contains("cannot be read") == true },
            "\(aulos.stderr)")
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0)

        // Crashes as it plays: the first start dies, the next plays the last good set.
        try MisbehavingPlugins.rig("segv-run", name: "Two").write(
            toFile: folder + "/two.yaml", atomically: true, encoding: .utf8)
        try Self.writeSet(listing: "two.yaml", in: folder)
        aulos = try start()
        let crashed = aulos.waitForExit(seconds: 20)
        #expect(crashed != nil && crashed != 0, "\(aulos.stderr)")
        aulos = try start()
        #expect(
            try aulos.waitForStatus { ($0["fallback"] as? String)?.contains("last start") == true },
            "\(aulos.stderr)")
        #expect(try aulos.status()?["rigs"] as? [String] == ["One", "One"])
        aulos.signal(SIGTERM)
        #expect(aulos.waitForExit() == 0)
    }
}

import AulosCore
import AulosRig
import Foundation
import Glibc

/// `aulos service install|uninstall`: a systemd unit that runs `aulos play --service` at boot as an
/// unprivileged user in group audio, the rigs it plays in its state folder, and — for an aulos from a build
/// folder — the binary, the presets, rigs, bundled SoundFont and web page under a prefix. An aulos already
/// installed (by its Debian package or `make install`: its prefix has `share/aulos`) is used in place
/// (`inPlace`): nothing of it is copied, and uninstalling the service leaves it to what installed it.
/// With `root` set, everything lands under that directory and no system command runs (packaging, tests).
///
/// Threads: the calling thread.
public struct ServiceInstaller {
    public var prefix = "/usr/local"
    /// The binary is already installed under `prefix` (`installedPrefix(of:)`): the unit runs it there and
    /// install copies none of it.
    public var inPlace = false
    /// Where the binary and its data are: under `root` when they are copied there; in place they are the
    /// running aulos's own, on this file system whatever `root` is.
    var programRoot: String { inPlace ? "" : root }
    /// The web panel's page to copy to `share/aulos/web` (`SearchPaths.panelFolder`), if it was found.
    public var panelFolder: String?
    /// Install under this directory instead of / (DESTDIR).
    public var root = ""
    /// Whether to create the user and enable the service (useradd, systemctl): not under `--root`.
    public var runsSystemCommands = true
    public var user = "aulos"
    public var device = "default"
    /// `jack`: play as a JACK client of the server running as the same user (`--driver jack`), not an ALSA PCM.
    public var driver = "alsa"
    /// A rig or rig-set file to copy in and play; nil plays the factory set (stage.yaml).
    public var rig: String?
    public var extraArguments: [String] = []
    /// The web panel's address (`--web`), and the file with its password hash (`--web-password`), if any.
    public var web: String?
    public var webPasswordFile: String?
    /// OSC's `[127.0.0.1:]port` (`--osc`), if any.
    public var osc: String?
    /// Network MIDI's `--network-midi [ADDR:]PORT`, `--network-midi-allow` and `--network-midi-latency` (ms), as
    /// given: written into ExecStart, where they win over the rig's `network-midi:` as they do on the command line.
    public var networkMIDIListen: String?
    public var networkMIDIAllow: [NetworkPrefix]?
    public var networkMIDILatency: Double?
    /// `--network-midi-connect`: the peers the service invites (`ADDR:PORT` each), as given.
    public var networkMIDIConnect: [String]?
    /// `--network-midi2 [ADDR:]PORT` (Network MIDI 2.0), as given: written into ExecStart.
    public var networkMIDI2Listen: String?
    /// A folder of songs for the file player, copied into the state folder (`songsPath`) for the service.
    public var playlist: String?
    /// Program changes on this channel choose the playlist's song.
    public var songChannel: Int?
    /// Whether a password file's first line is a hash the panel accepts (the panel's own check, given by the
    /// command: this module does not link the panel).
    public var isPasswordHash: @Sendable (String) -> Bool = { $0.hasPrefix("$") }
    /// The `web:`, `web-password:` and `osc:` of the rig file played (`readRig`): its servers need the
    /// network as much as the options' do.
    public private(set) var rigServers = LiveServers()
    /// The rig files a set names (`readRig`), relative to its folder: they are installed beside it.
    private var setMembers: [String] = []

    public init() {}

    public var unitPath: String { root + "/etc/systemd/system/aulos.service" }
    var binaryPath: String { prefix + "/bin/aulos" }
    var sharePath: String { prefix + "/share/aulos" }
    /// Written beside the copied data, so that uninstalling removes the binary and data only when the service
    /// installer put them there — never a package's or `make install`'s files.
    var copiedMarkerPath: String { sharePath + "/installed-by-service" }

    /// The prefix an installed aulos at `executable` lives under: `P` for `P/bin/aulos` with its data in
    /// `P/share/aulos`; nil for a binary in a build folder.
    public static func installedPrefix(of executable: String) -> String? {
        let folder = FileContents.folder(of: executable)
        guard folder.hasSuffix("/bin"), access(folder + "/../share/aulos/presets/rigs/stage.yaml", R_OK) == 0 else {
            return nil
        }
        let prefix = String(folder.dropLast(4))
        return prefix.isEmpty ? "/" : prefix
    }
    /// What the service writes, its user's alone: the rigs it plays (the panel replaces and saves them) and
    /// what it records. The unit's StateDirectory=aulos gives it to that user under ProtectSystem=strict.
    var statePath: String { "/var/lib/aulos" }
    var rigsPath: String { statePath + "/rigs" }
    var recordingsPath: String { statePath + "/recordings" }
    var songsPath: String { statePath + "/songs" }
    var rigName: String { rig.flatMap { $0.split(separator: "/").last.map(String.init) } ?? "stage.yaml" }
    var rigPath: String { rigsPath + "/" + rigName }
    /// The installed copy of the panel's password hash: root's alone (0600). systemd reads it before it drops
    /// to the service's user and hands it over as a credential (LoadCredential=), so the user that made the
    /// file (root, under sudo) and the user the service runs as need not be the same, and the unit's
    /// PrivateTmp= and ProtectHome= do not hide it.
    var passwordPath: String { "/etc/aulos/web-password" }
    /// The password file the panel is to use: the option's, else the rig's `web-password:`.
    var passwordSource: String? { webPasswordFile ?? rigServers.webPassword }
    /// Whether the panel is served, by the options or the rig.
    var servesPanel: Bool { (web ?? rigServers.web) != nil }

    /// The unit file (packaging/systemd/aulos.service is this text for the defaults; a test keeps them equal).
    public var unitText: String {
        let arguments =
            ["play", "--service", "--rig", rigPath]
            + (driver == "jack" ? ["--driver", "jack"] : ["--device", device])
            + ["--control-socket", "/run/aulos/control", "--record-dir", recordingsPath]
            + (web.map { ["--web", $0] } ?? [])
            // %d: the credentials folder systemd makes for this service, readable by its user alone.
            + (passwordSource != nil ? ["--web-password", "%d/web-password"] : [])
            + (osc.map { ["--osc", $0] } ?? [])
            + networkMIDIArguments
            + (songChannel.map { ["--song-channel", String($0)] } ?? [])
            + extraArguments
            + (playlist != nil ? [songsPath] : [])
        return """
            # aulos.service: Aulos as a headless synth, started at boot (docs/service.md, docs/raspberry-pi.md).
            # Written by `aulos service install`; `aulos service uninstall` removes it.
            # Logs: journalctl -u aulos -f    Reload the rig: systemctl reload aulos    State: aulos status
            #
            # Type=notify: aulos sends READY=1 once the audio device plays and MIDI input is up, so "active"
            # means playable; until then (no sound card or keyboard yet at boot) it waits, and says so in
            # the STATUS line. SIGHUP (reload) rebuilds the rig from its file; SIGTERM releases every note
            # and closes the device. A service reads no limits.d (that is PAM), so the unit grants the
            # real-time priority and locked memory itself. The rigs it plays and its recordings are in
            # /var/lib/aulos (StateDirectory), writable by it alone: the panel can replace a rig and record.
            # /dev/snd must stay visible (no PrivateDevices);
            # RestrictRealtime would forbid SCHED_FIFO. No network but AF_UNIX (notify and control
            # sockets; the D-Bus system bus, through which avahi-daemon advertises network MIDI), AF_INET
            # when the web panel, OSC or network MIDI is served, and AF_INET6 for network MIDI (its peers
            # may be IPv6). WatchdogSec: aulos feeds systemd's watchdog only while render
            # cycles complete, so an instrument hung in a plugin is restarted (and a rig whose last start
            # never settled is passed over for the last good one).

            [Unit]
            Description=Aulos headless MIDI synth
            Documentation=man:aulos-service(1) man:aulos-rig(5)
            After=sound.target

            [Service]
            Type=notify
            NotifyAccess=main
            ExecStart=\(binaryPath) \(arguments.joined(separator: " "))
            ExecReload=/bin/kill -HUP $MAINPID
            KillSignal=SIGTERM
            TimeoutStopSec=10
            WatchdogSec=10
            Restart=on-failure
            RestartSec=2
            User=\(user)
            Group=audio
            SupplementaryGroups=audio
            RuntimeDirectory=aulos
            RuntimeDirectoryMode=0750
            StateDirectory=aulos
            StateDirectoryMode=0750
            UMask=0007
            LimitRTPRIO=95
            LimitMEMLOCK=infinity
            StandardOutput=journal
            StandardError=journal
            ProtectSystem=strict
            ProtectHome=read-only
            PrivateTmp=yes
            NoNewPrivileges=yes
            RestrictAddressFamilies=AF_UNIX\(needsNetwork ? " AF_INET" : "")\(needsIPv6 ? " AF_INET6" : "")\(credential)

            [Install]
            WantedBy=multi-user.target

            """
    }

    /// `--network-midi`, `--network-midi-allow`, `--network-midi-latency` and `--network-midi-connect` as given.
    var networkMIDIArguments: [String] {
        var arguments: [String] = []
        if let listen = networkMIDIListen { arguments += ["--network-midi", listen] }
        if let allow = networkMIDIAllow {
            arguments += ["--network-midi-allow", allow.map(\.description).joined(separator: ",")]
        }
        if let latency = networkMIDILatency { arguments += ["--network-midi-latency", latency.clean] }
        if let connect = networkMIDIConnect { arguments += ["--network-midi-connect", connect.joined(separator: ",")] }
        if let midi2 = networkMIDI2Listen { arguments += ["--network-midi2", midi2] }
        return arguments
    }

    /// The unit's line that hands the service the panel's password hash, if it has one.
    var credential: String { passwordSource != nil ? "\nLoadCredential=web-password:" + passwordPath : "" }

    /// Whether the unit must allow IPv4 sockets: the panel, OSC or network MIDI, from the options or the rig file.
    var needsNetwork: Bool {
        web != nil || osc != nil || networkMIDIListen != nil || networkMIDI2Listen != nil || rigServers.needsNetwork
    }
    /// Whether it must allow IPv6 sockets too: network MIDI listens on both, from the options or the rig file.
    var needsIPv6: Bool { networkMIDIListen != nil || networkMIDI2Listen != nil || rigServers.needsIPv6 }

    /// Reads the rig file to be played, refusing one that would not load at boot or a panel beyond this
    /// machine without a password, and keeps its servers for the unit.
    public mutating func readRig() throws(InstallError) {
        guard let rig else { return try checkNetworkMIDI() }
        let set: RigSet
        do { set = try RigSet.load(rig) } catch { throw InstallError("not installing: \(error.message)") }
        rigServers = set.servers
        setMembers = set.entries.compactMap(\.file).filter { !$0.hasPrefix("/") }
        if let outside = setMembers.first(where: { $0.split(separator: "/").contains("..") }) {
            throw InstallError(
                "not installing: the set names '\(outside)', outside its folder; keep a set's rigs beside it "
                    + "(the service plays a copy of that folder's rigs)")
        }
        try checkNetworkMIDI()
        if let spec = web ?? rigServers.web, ListenAddress(spec)?.isLoopback == false, passwordSource == nil {
            throw InstallError(
                "not installing: the web panel on \(spec) is reachable from the network and needs a password: "
                    + "--web-password FILE (made by `aulos web-password -o FILE`)")
        }
    }

    /// Refuses network MIDI options the service would refuse at every start: an allow list, latency or peers to
    /// invite with no port to listen on (neither `--network-midi` nor the rig's `network-midi:`), or a port or peer
    /// that is not one.
    func checkNetworkMIDI() throws(InstallError) {
        if let connect = networkMIDIConnect {
            do { _ = try NetworkMIDISettings.parseConnect(connect) } catch {
                throw InstallError("not installing: --network-midi-connect: \(error.reason)")
            }
            if networkMIDIListen == nil && rigServers.networkMIDI == nil {
                throw InstallError(
                    "not installing: --network-midi-connect needs --network-midi [ADDR:]PORT (or the rig's "
                        + "network-midi:): the local ports Aulos invites from")
            }
        }
        if let listen = networkMIDIListen {
            do { _ = try NetworkMIDISettings.parseListen(listen) } catch {
                throw InstallError("not installing: --network-midi '\(listen)': \(error.reason)")
            }
        }
        if let midi2 = networkMIDI2Listen {
            do { _ = try NetworkMIDISettings.parseListen(midi2) } catch {
                throw InstallError("not installing: --network-midi2 '\(midi2)': \(error.reason)")
            }
        }
        if networkMIDIListen == nil && networkMIDI2Listen == nil && rigServers.networkMIDI == nil
            && (networkMIDIAllow != nil || networkMIDILatency != nil)
        {
            throw InstallError(
                "not installing: --network-midi-allow and --network-midi-latency go with --network-midi [ADDR:]PORT "
                    + "(or the rig's network-midi:)")
        }
    }

    /// Whether a network MIDI secret or users are set (the rig's `network-midi: secret:`, `users:`) with no Network
    /// MIDI 2.0 host to use them (AppleMIDI has no authentication).
    public var hasUnusedNetworkMIDISecret: Bool {
        rigServers.networkMIDI?.hasAuthentication == true && networkMIDI2Listen == nil
            && rigServers.networkMIDI?.midi2 == nil
    }

    /// The password file's hash, refused with what to do when it cannot be read or holds no hash: the
    /// service would otherwise stop at every start, and systemd restart it for ever.
    func readPassword() throws(InstallError) -> [UInt8]? {
        guard let source = passwordSource else { return nil }
        let text: String
        do { text = try FileContents.text(source, limit: 4096) } catch {
            throw InstallError("not installing: cannot read the web panel's password file: \(error.message)")
        }
        guard let hash = text.split(whereSeparator: \.isNewline).first.map(String.init), isPasswordHash(hash) else {
            throw InstallError(
                "not installing: \(source) holds no password hash; make it with `aulos web-password -o \(source)`")
        }
        return Array((hash + "\n").utf8)
    }

    /// Copies the files, writes the unit, and (without `root`) creates the user and enables the service.
    /// Returns what it did, a line per step.
    public mutating func install(executable: String, presets: String, soundFont: String?) throws(InstallError)
        -> [String]
    {
        var done: [String] = []
        // Refuse a rig that would not load at boot, a password the panel would refuse, or a panel without its
        // page, before touching anything.
        try readRig()
        let password = try readPassword()
        let songs: Playlist?
        do { songs = try playlist.map { folder throws(InputFileError) in try Playlist(folder: folder) } } catch {
            throw InstallError("not installing: \(error.message)")
        }
        // The service would refuse it at every start (the factory set's control channel is 16).
        if let songChannel, (try? RigSet.load(rig ?? presets + "/rigs/stage.yaml"))?.controlChannel == songChannel {
            throw InstallError(
                "not installing: --song-channel \(songChannel) is the rig set's control channel (it switches rigs)")
        }
        if servesPanel && (inPlace ? access(sharePath + "/web/index.html", R_OK) != 0 : panelFolder == nil) {
            throw InstallError(
                "not installing: the web panel's page (share/aulos/web) is missing, so the panel could not "
                    + "start; reinstall aulos, or leave out the panel")
        }
        if inPlace {
            done.append("using the installed \(binaryPath) and its data in \(sharePath) where they are")
        } else {
            done += try copyProgram(executable: executable, presets: presets, soundFont: soundFont)
        }
        if let password {
            try makeDirectories(root + "/etc/aulos")
            try write(password, to: root + passwordPath)
            chmod(root + passwordPath, 0o600)
            done.append(
                "installed the panel's password hash in \(root + passwordPath) (root's; systemd hands it to the "
                    + "service)")
        }
        done += try installRigs(presets: presets)
        if let songs { done += try installSongs(songs) }
        try makeDirectories(root + "/etc/systemd/system")
        try write(unitText, to: unitPath)
        done.append("wrote \(unitPath)")
        guard runsSystemCommands && root.isEmpty else { return done }
        if getpwnam(user) == nil {
            try run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--gid", "audio", user])
            done.append("created system user \(user) (group audio)")
        }
        if access("/run/systemd/system", F_OK) == 0 {
            try run(["systemctl", "daemon-reload"])
            try run(["systemctl", "enable", "--now", "aulos.service"])
            done.append("enabled and started aulos.service (journalctl -u aulos -f)")
        } else {
            done.append(
                "systemd is not running here: start it at boot with `systemctl enable --now aulos` on the target")
        }
        return done
    }

    public func uninstall() throws(InstallError) -> [String] {
        var done: [String] = []
        if runsSystemCommands && root.isEmpty, access("/run/systemd/system", F_OK) == 0, access(unitPath, F_OK) == 0 {
            try run(["systemctl", "disable", "--now", "aulos.service"])
            done.append("stopped and disabled aulos.service")
        }
        for path in [unitPath, root + passwordPath] where unlink(path) == 0 { done.append("removed \(path)") }
        rmdir(root + "/etc/aulos")
        if access(programRoot + copiedMarkerPath, F_OK) == 0 {
            if unlink(programRoot + binaryPath) == 0 { done.append("removed \(programRoot + binaryPath)") }
            try run(["rm", "-rf", "--", programRoot + sharePath])
            done.append("removed \(programRoot + sharePath)")
        } else if access(programRoot + binaryPath, F_OK) == 0 {
            done.append(
                "kept \(programRoot + binaryPath) and its data: the service installer did not copy them (remove "
                    + "them with what installed them: apt, make uninstall)")
        }
        if access(root + statePath, F_OK) == 0 {
            done.append(
                "kept \(root + statePath): the rigs the service played, its songs and its recordings are yours "
                    + "to remove")
        }
        if runsSystemCommands && root.isEmpty, access("/run/systemd/system", F_OK) == 0 {
            try? run(["systemctl", "daemon-reload"])
        }
        if done.isEmpty {
            done.append("nothing to remove: aulos is not installed under \(root.isEmpty ? prefix : root + prefix)")
        }
        return done
    }

    /// The binary, its data and the panel's page under the prefix, for an aulos from a build folder; the
    /// marker says they are the service installer's to remove.
    private func copyProgram(executable: String, presets: String, soundFont: String?) throws(InstallError)
        -> [String]
    {
        var done: [String] = []
        try makeDirectories(root + prefix + "/bin")
        try copy(executable, to: root + binaryPath, mode: 0o755)
        done.append("installed \(root + binaryPath)")
        try copyTree(presets, to: root + sharePath + "/presets")
        done.append("installed presets and rigs in \(root + sharePath)/presets")
        if let soundFont {
            try makeDirectories(root + sharePath + "/soundfonts")
            try copy(soundFont, to: root + sharePath + "/soundfonts/AulosGM.sf2", mode: 0o644)
            done.append("installed the SoundFont in \(root + sharePath)/soundfonts")
        }
        if let panelFolder {
            try copyTree(panelFolder, to: root + sharePath + "/web")
            done.append("installed the web panel's page in \(root + sharePath)/web")
        } else {
            done.append("no web panel: its page was not found (a later --web needs it in \(sharePath)/web)")
        }
        let marker = "aulos service install copied the binary and this folder; aulos service uninstall removes them\n"
        try write(marker, to: root + copiedMarkerPath)
        return done
    }

    /// The rigs into the state folder. The factory rigs where no file of that name is there yet, so a
    /// reinstall keeps the rigs changed from the panel; then the rig asked for, with a set's rig files
    /// beside it, where a different file of the same name is first kept as NAME.old.
    private func installRigs(presets: String) throws(InstallError) -> [String] {
        let rigs = root + rigsPath
        try makeDirectories(rigs)
        try makeDirectories(root + recordingsPath)
        var done: [String] = []
        var (added, kept) = (0, 0)
        for (name, isFolder) in FileContents.entries(inFolder: presets + "/rigs") ?? []
        where !isFolder && name.hasSuffix(".yaml") {
            if access(rigs + "/" + name, F_OK) == 0 {
                kept += 1
            } else {
                try copy(presets + "/rigs/" + name, to: rigs + "/" + name, mode: 0o644)
                added += 1
            }
        }
        done.append(
            "installed \(added) factory rigs in \(rigs)" + (kept > 0 ? " (kept \(kept) already there)" : ""))
        guard let rig else { return done }
        let folder = FileContents.folder(of: rig)
        for file in [rigName] + setMembers {
            let (source, destination) = (file == rigName ? rig : folder + "/" + file, rigs + "/" + file)
            try makeDirectories(FileContents.folder(of: destination))
            if let old = try? FileContents.read(destination, limit: 1 << 20),
                let new = try? FileContents.read(source, limit: 1 << 20), old != new
            {
                guard rename(destination, destination + ".old") == 0 else {
                    throw InstallError("cannot keep \(destination): \(String(cString: strerror(errno)))")
                }
                done.append("kept the earlier \(destination) as \(destination).old")
            }
            try copy(source, to: destination, mode: 0o644)
            done.append("installed rig \(destination)")
        }
        return done
    }

    /// The playlist's songs into the state folder, where the service's user can read them whatever the
    /// permissions of the folder they came from; a different file of the same name is first kept as NAME.old.
    private func installSongs(_ playlist: Playlist) throws(InstallError) -> [String] {
        let songs = root + songsPath
        try makeDirectories(songs)
        var done: [String] = []
        for name in playlist.songs {
            let (source, destination) = (playlist.path(playlist.songs.firstIndex(of: name)!), songs + "/" + name)
            if let old = try? FileContents.read(destination, limit: InputFile.sizeLimit),
                let new = try? FileContents.read(source, limit: InputFile.sizeLimit), old != new
            {
                guard rename(destination, destination + ".old") == 0 else {
                    throw InstallError("cannot keep \(destination): \(String(cString: strerror(errno)))")
                }
                done.append("kept the earlier \(destination) as \(destination).old")
            }
            try copy(source, to: destination, mode: 0o644)
        }
        let present = (try? Playlist(folder: songs))?.songs.count ?? playlist.songs.count
        done.append(
            "installed \(playlist.songs.count) songs in \(songs)"
                + (present > playlist.songs.count ? " (it holds \(present) with those from before)" : ""))
        return done
    }

    // MARK: Files

    private func makeDirectories(_ path: String) throws(InstallError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw InstallError("cannot create \(path): \(error.localizedDescription)")
        }
    }

    /// Streams `source` into a file beside `destination`, then renames it into place: replacing a running
    /// binary in place would crash it, and a failed copy leaves the old file whole.
    private func copy(_ source: String, to destination: String, mode: mode_t) throws(InstallError) {
        guard let input = fopen(source, "rb") else {
            throw InstallError("cannot read \(source): \(String(cString: strerror(errno)))")
        }
        defer { fclose(input) }
        let temporary = destination + ".new"
        guard let output = fopen(temporary, "wb") else {
            throw InstallError("cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var failed = false
        while true {
            let count = fread(&buffer, 1, buffer.count, input)
            if count == 0 {
                failed = ferror(input) != 0
                break
            }
            if fwrite(buffer, 1, count, output) != count {
                failed = true
                break
            }
        }
        if fclose(output) != 0 || failed {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw InstallError("cannot copy \(source) to \(destination): \(reason)")
        }
        chmod(temporary, mode)
        guard rename(temporary, destination) == 0 else {
            throw InstallError("cannot install \(destination): \(String(cString: strerror(errno)))")
        }
    }

    private func copyTree(_ source: String, to destination: String) throws(InstallError) {
        try makeDirectories(destination)
        guard let entries = FileContents.entries(inFolder: source) else {
            throw InstallError("cannot read \(source): \(String(cString: strerror(errno)))")
        }
        for (name, isFolder) in entries {
            if isFolder {
                try copyTree(source + "/" + name, to: destination + "/" + name)
            } else {
                try copy(source + "/" + name, to: destination + "/" + name, mode: 0o644)
            }
        }
    }

    private func write(_ text: String, to path: String) throws(InstallError) { try write(Array(text.utf8), to: path) }

    private func write(_ bytes: [UInt8], to path: String) throws(InstallError) {
        do { try FileContents.replace(path, with: bytes) } catch { throw InstallError(error.message) }
    }

    private func run(_ arguments: [String]) throws(InstallError) {
        var pid = pid_t()
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawnp(&pid, arguments[0], nil, nil, argv, environ) == 0 else {
            throw InstallError("cannot run \(arguments[0]): \(String(cString: strerror(errno)))")
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else {
            throw InstallError("\(arguments.joined(separator: " ")) failed (status \(status >> 8))")
        }
    }
}

/// Installing or removing the service failed, as one line saying what and why.
///
/// Threads: a value.
public struct InstallError: ReportableError, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }

}

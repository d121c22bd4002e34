import AulosCore
import AulosMIDI
import AulosRealtime
import AulosRig
import Foundation
import Glibc

/// A rig file tried in full before it replaces the one a live instrument plays: read, every unit built and
/// initialized (SoundFonts loaded, LV2 plugins instantiated, wavetables and tunings read), and a quarter of a
/// second rendered with a note on every part — in a child process (`aulos try-rig`), so a plugin that
/// crashes, calls exit() or spins costs the child, never the instrument. Only a rig that comes through is
/// committed to: the panel's upload and *Load*, and SIGHUP, all go through here first.
///
/// Threads: control thread (it blocks until the child ends, at most `timeout`).
public struct RigTrial: Sendable {
    /// The `aulos` binary to run the trial with (the running one: /proc/self/exe).
    public var executable: String
    /// How long building and rendering may take: a 120 MB SoundFont loads in about a second here (a Pi takes
    /// a few), a plugin that hangs is stopped at this, and the panel's request (15 s) must get its answer.
    public var timeout: Double = 12

    public init(executable: String, timeout: Double = 12) {
        self.executable = executable
        self.timeout = timeout
    }

    /// The running binary, for a trial run by `aulos` itself.
    public static var ownExecutable: RigTrial { RigTrial(executable: "/proc/self/exe") }

    /// Tries the rig or set file at `path` at the live rate and slice; the error says what stands in the way:
    /// the rig's own one-line error, or how the child ended (a signal, an exit of its own, a time-out) with the
    /// plugins the rig loads and the child's last line of output.
    public func attempt(_ path: String, sampleRate: Double, slice: UInt32) throws(RigError) {
        let arguments = [
            executable, "try-rig", path, "--sample-rate", String(Int(sampleRate)), "--slice", String(slice),
        ]
        let outcome: ChildOutcome
        do { outcome = try ChildOutcome.run(arguments, timeout: timeout) } catch {
            throw RigError("cannot try the rig: \(error.message)")
        }
        if outcome.exitStatus == 0 && outcome.lastLine == Self.cameThrough { return }
        let plugins = (try? RigSet.load(path))?.pluginURIs ?? []
        let loading = plugins.isEmpty ? "" : " (it loads \(plugins.joined(separator: ", ")))"
        let lastWords = outcome.lastLine.map { ": last output '\($0.clipped(160))'" } ?? ""
        if outcome.timedOut {
            throw RigError(
                "trying the rig took longer than \(Int(timeout)) s\(loading), so it was stopped; a plugin that hangs "
                    + "would hang the instrument")
        }
        if let signal = outcome.signal {
            throw RigError("trying the rig crashed (\(Self.signalName(signal)))\(loading)\(lastWords)")
        }
        if outcome.exitStatus == 1, let line = outcome.lastLine, line.hasPrefix("aulos: error: ") {
            throw RigError(String(line.dropFirst("aulos: error: ".count)))
        }
        throw RigError("trying the rig ended with exit status \(outcome.exitStatus ?? -1)\(loading)\(lastWords)")
    }

    static func signalName(_ number: Int32) -> String {
        let names: [Int32: String] = [
            SIGSEGV: "SIGSEGV, a segmentation fault", SIGABRT: "SIGABRT, aborted", SIGBUS: "SIGBUS",
            SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGTERM: "SIGTERM",
        ]
        return names[number] ?? "signal \(number)"
    }

    // MARK: The child's side

    /// The child's last line when the rig came through.
    public static let cameThrough = "aulos: the rig came through"

    /// What `aulos try-rig` does in the child: builds `set` offline at `sampleRate` and `slice` exactly as a
    /// live rig is built, plays middle C on every part's first channel for a quarter of a second, and renders
    /// it. Throws the one-line error of anything that stands in the way.
    public static func tryOut(_ set: RigSet, sampleRate: Double, slice: UInt32) throws {
        var set = set
        for index in set.entries.indices {
            set.entries[index].rig.sampleRate = sampleRate
            set.entries[index].rig.slice = slice
        }
        let rig = try PlaybackRig(set: set, fileSample: .float32)
        defer { rig.close() }
        let renderer = try OfflineRenderer(graph: rig.graph, sliceFrames: rig.rig.slice)
        let noteOff = Int64(sampleRate / 8)
        var events = rig.prelude
        for (index, part) in rig.rig.parts.enumerated() {
            let channel = UInt8(max(0, (part.channels.first ?? 1) - 1))
            events.append(
                TimedMIDIEvent(sampleTime: 0, destination: UInt16(index), status: 0x90 | channel, data1: 60, data2: 100)
            )
            events.append(
                TimedMIDIEvent(
                    sampleTime: noteOff, destination: UInt16(index), status: 0x80 | channel, data1: 60, data2: 0))
        }
        rig.timelinePlayer.play(MIDITimeline(events.sorted { $0.sampleTime < $1.sampleTime }))
        try renderer.render(frameCount: Int64(sampleRate / 4)) { _, _ in }
    }
}

extension RigSet {
    /// Every LV2 plugin the set's rigs load: instruments and effects, each once.
    public var pluginURIs: [String] {
        var uris: [String] = []
        for rig in rigs {
            let effects = rig.parts.flatMap(\.effects) + rig.returns.flatMap(\.effects) + rig.masterEffects
            let found =
                rig.parts.compactMap(\.plugin)
                + effects.compactMap { spec -> String? in
                    if case .lv2(let uri) = spec.kind { return uri }
                    return nil
                }
            for uri in found where !uris.contains(uri) { uris.append(uri) }
        }
        return uris
    }
}

/// A child process run to its end or to a deadline, its standard output and error read together (the last
/// 4 KB kept) so neither can fill a pipe and stall it.
///
/// Threads: the calling thread.
struct ChildOutcome {
    /// The exit status when it exited; nil when a signal ended it.
    var exitStatus: Int32?
    var signal: Int32?
    var timedOut = false
    var output: [UInt8] = []

    /// The last non-empty line the child wrote.
    var lastLine: String? {
        String(decoding: output, as: UTF8.self).split(whereSeparator: \.isNewline).last.map(String.init)
    }

    struct Failure: Error {
        var message: String
    }

    static func run(_ arguments: [String], timeout: Double) throws(Failure) -> ChildOutcome {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw Failure(message: String(cString: strerror(errno))) }
        // Not inherited by anything else this process starts meanwhile (the child gets its copy by dup2).
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        // Its own process group, so a time-out ends whatever the child started too.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        guard spawned == 0 else {
            throw Failure(message: "\(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        var outcome = ChildOutcome()
        let deadline = monotonicNanoseconds() + Int64(timeout * 1e9)
        var chunk = [UInt8](repeating: 0, count: 4096)
        var open = true
        while open {
            let left = Double(deadline - monotonicNanoseconds()) / 1e9
            if left <= 0 {
                outcome.timedOut = true
                kill(-pid, SIGKILL)
                break
            }
            var entry = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(left, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR { break }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                open = false
                break
            }
            outcome.output += chunk[..<count]
            if outcome.output.count > 4096 { outcome.output.removeFirst(outcome.output.count - 4096) }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // The child's own process group may hold what it started (a plugin's helper): end it with the child.
        kill(-pid, SIGKILL)
        let signal = status & 0x7F
        if signal == 0 { outcome.exitStatus = (status >> 8) & 0xFF } else { outcome.signal = signal }
        return outcome
    }
}

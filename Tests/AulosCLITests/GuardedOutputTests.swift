import Foundation
import Testing

/// One bad sample costs one slice of one unit: NaN, infinity or absurd values from any unit are played as
/// silence where they appear (the render plan guards every unit's output), so a reverb after them never
/// latches NaN and no full-scale DC reaches the file or the speakers; a wavetable of NaNs is refused when read.
@Suite struct GuardedOutputTests {
    let folder = NSTemporaryDirectory() + "aulos-guard-\(UUID().uuidString)"

    /// The float samples of a 32-bit float WAV written by `aulos render --format float`.
    static func floatSamples(_ path: String) throws -> [Float] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = bytes[offset + 4..<offset + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
            if id == "data" {
                let end = min(bytes.count, offset + 8 + size)
                return stride(from: offset + 8, to: end - 3, by: 4).map { index in
                    Float(bitPattern: bytes[index..<index + 4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                }
            }
            offset += 8 + size + (size & 1)
        }
        return []
    }

    /// A synth part through an effect that writes NaN or 3e38, sending to a reverb return: the render is
    /// finite and within full scale, and the warning names the unit (3e38 used to give a full-scale DC file,
    /// exit 0, no warning).
    @Test(arguments: ["huge", "nan"])
    func aUnitWritingGarbageCostsOnlyItsOwnSlices(_ behaviour: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rig =
            MisbehavingPlugins.rig(behaviour) + "    sends: {reverb: 1}\nreturns:\n  - name: reverb\n"
            + "    effects:\n      - unit: reverb\n"
        try rig.write(toFile: folder + "/rig.yaml", atomically: true, encoding: .utf8)
        try "0s note C4 0.25s\n".write(toFile: folder + "/note.score", atomically: true, encoding: .utf8)
        let result = try runAulos(
            ["render", "note.score", "--rig", "rig.yaml", "-o", "out.wav", "--format", "float", "--tail", "1"],
            in: folder,
            environment: try MisbehavingPlugins.environment())
        #expect(result.status == 0, "\(result.stderr)")
        let samples = try Self.floatSamples(folder + "/out.wav")
        #expect(samples.count > 48_000)
        #expect(
            samples.allSatisfy { $0.isFinite && abs($0) <= 1 },
            "\(samples.first { !($0.isFinite && abs($0) <= 1) } ?? 0)")
        #expect(result.stderr.contains("Misbehaving \(behaviour)"), "\(result.stderr)")
        #expect(result.stderr.contains("silence"), "\(result.stderr)")
    }

    /// A float WAV of NaNs (or infinities, or ±3e38) as a part's wavetable is refused when the rig is read,
    /// naming the sample; it used to turn every later sample of the render into NaN (or zeros at 16 bits).
    @Test(arguments: [(Float.nan, "is NaN"), (Float.infinity, "is infinite"), (3e38, "is 3e+38, not audio")])
    func aWavetableOfGarbageIsRefused(_ value: Float, _ says: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var samples = [Float](repeating: 0.5, count: 2048)
        samples[17] = value
        var wav = Data("RIFF".utf8)
        func le32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { wav.append(contentsOf: $0) } }
        func le16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { wav.append(contentsOf: $0) } }
        le32(UInt32(36 + samples.count * 4))
        wav.append(contentsOf: Array("WAVEfmt ".utf8))
        le32(16)
        le16(3)
        le16(1)
        le32(48_000)
        le32(48_000 * 4)
        le16(4)
        le16(32)
        wav.append(contentsOf: Array("data".utf8))
        le32(UInt32(samples.count * 4))
        for sample in samples { le32(sample.bitPattern) }
        try wav.write(to: URL(fileURLWithPath: folder + "/table.wav"))
        try "name: T\nparts:\n  - name: Lead\n    instrument: synth\n    wavetable: table.wav\n".write(
            toFile: folder + "/rig.yaml", atomically: true, encoding: .utf8)
        let result = try runAulos(["render", "--rig", "rig.yaml", "-o", "out.wav"], in: folder)
        #expect(result.status == 1)
        #expect(result.stderr.contains("sample 17 \(says)"), "\(result.stderr)")
    }
}

/// A plugin that crashes, exits or hangs takes the process with it, but never silently: the crash report names
/// the unit that was rendering, and the watchdog names the unit a cycle is stuck in and lets SIGTERM end aulos.
@Suite(.serialized) struct MisbehavingPluginTests {
    let folder = NSTemporaryDirectory() + "aulos-misbehaving-run-\(UUID().uuidString)"

    func render(_ behaviour: String) throws -> CommandResult {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try MisbehavingPlugins.rig(behaviour).write(toFile: folder + "/rig.yaml", atomically: true, encoding: .utf8)
        return try runAulos(
            ["render", "--rig", "rig.yaml", "-o", "out.wav"], in: folder,
            environment: try MisbehavingPlugins.environment())
    }

    /// A segfault or an exit() in a plugin's run(): one line naming the unit (it used to be Swift's backtrace,
    /// or for exit() no message at all); the process ends as the plugin made it.
    @Test(arguments: [
        ("segv-run", "aulos: fatal: SIGSEGV (a segmentation fault) while rendering unit 'Misbehaving segv-run'"),
        ("exit-run", "aulos: fatal: exit() called while rendering unit 'Misbehaving exit-run'"),
    ])
    func aPluginThatEndsTheProcessIsNamed(_ behaviour: String, _ says: String) throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try render(behaviour)
        #expect(result.status != 0)
        #expect(result.stderr.contains(says), "\(result.stderr)")
    }

    /// A plugin that spins in run(): the service's status names it within two seconds (it said "playing, DSP
    /// 0.0 %"), and SIGTERM ends the process (it was ignored, the stop waiting on the render thread forever).
    @Test func aPluginThatSpinsIsNamedAndSIGTERMStillEndsAulos() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try MisbehavingPlugins.rig("spin-run").write(toFile: folder + "/rig.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/rig.yaml", "--device", "null"], in: folder,
            environment: try MisbehavingPlugins.environment())
        #expect(
            try aulos.waitForStatus {
                ($0["stuckUnit"] as? String)?.contains("inside 'Misbehaving spin-run'") == true
            }, "\(aulos.stderr)")
        #expect(aulos.stderr.contains("it hangs"))
        aulos.signal(SIGTERM)
        let status = aulos.waitForExit(seconds: 5)
        #expect(status != nil && status != 0, "\(aulos.stderr)")
        #expect(aulos.stderr.contains("stopping with the render thread stuck in 'Misbehaving spin-run'"))
    }
}

/// Every file a rig names is opened the guarded way: a FIFO nobody writes to, a directory, a huge line, a
/// pitch outside hearing — each a one-line error at once, never a hang (a FIFO as a wavetable or SoundFont
/// blocked `aulos render` in open(), deaf to SIGTERM, for as long as it was left).
@Suite struct RigNamedFileTests {
    @Test func whatARigNamesIsRefusedInOneLineAndNeverHangs() throws {
        let folder = NSTemporaryDirectory() + "aulos-named-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/folder.wav", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for fifo in ["fifo.wav", "fifo.sf2"] { #expect(mkfifo(folder + "/" + fifo, 0o600) == 0) }
        try ("! long\nlong\n 1\n" + String(repeating: "1", count: 900_000) + "/1\n").write(
            toFile: folder + "/long.scl", atomically: true, encoding: .utf8)
        try "! far\nfar\n 1\n 10000000000000000000000000000000/1\n".write(
            toFile: folder + "/far.scl", atomically: true, encoding: .utf8)
        let synth = "name: T\nparts:\n  - name: Lead\n    instrument: synth\n"
        let cases: [(rig: String, says: String)] = [
            (synth + "    wavetable: fifo.wav\n", "fifo.wav is a named pipe (FIFO), not an audio file"),
            (synth + "    wavetable: folder.wav\n", "folder.wav is a directory, not an audio file"),
            ("name: T\nparts:\n  - name: S\n    instrument: sampler\n    soundfont: fifo.sf2\n", "is a named pipe"),
            (synth + "    tuning: long.scl\n", "'1111111111111111111111111111111111111111…' is not a pitch"),
            (synth + "    tuning: far.scl\n", "more than ten octaves from the tonic"),
        ]
        for (rig, says) in cases {
            try rig.write(toFile: folder + "/rig.yaml", atomically: true, encoding: .utf8)
            let result = try runAulos(["render", "--rig", "rig.yaml", "-o", "out.wav"], in: folder)
            #expect(result.status == 1, "\(rig)")
            #expect(result.stderr.contains(says), "\(result.stderr)")
            #expect(result.stderr.utf8.count < 400 && result.stderr.split(separator: "\n").count == 1)
        }
    }
}

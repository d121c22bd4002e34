import Foundation
import Testing

/// Tests/Fixtures/misbehaving-lv2: LV2 effects that crash, exit or spin in instantiate() or run(), or write
/// NaN or absurd values — compiled with the system's C compiler into a bundle of their own, once per test
/// process. A rig names one as `lv2:urn:aulos:test:misbehaving#BEHAVIOUR` (segv-run, exit-run, spin-run,
/// segv-instantiate, exit-instantiate, spin-instantiate, nan, huge).
enum MisbehavingPlugins {
    /// The folder to put on LV2_PATH (the bundle `misbehaving.lv2` inside it), built on first use.
    static func path() throws -> String { try built.get() }

    /// LV2_PATH with the misbehaving bundle alone (every installed plugin would only slow each trial).
    static func environment() throws -> [String: String] { ["LV2_PATH": try path()] }

    /// A rig with one synth part whose insert effect is the misbehaving `behaviour` (a part's own chain, so it
    /// plays in a set too, where only the first rig's master chain does).
    static func rig(_ behaviour: String, name: String = "Misbehaving") -> String {
        "name: \(name)\nparts:\n  - name: Lead\n    instrument: synth\n    effects:\n"
            + "      - unit: lv2:urn:aulos:test:misbehaving#\(behaviour)\n"
    }

    private static let built = Result<String, any Error>(catching: {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/misbehaving-lv2").path
        let folder = NSTemporaryDirectory() + "aulos-misbehaving-\(getpid())"
        let bundle = folder + "/misbehaving.lv2"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: bundle + "/manifest.ttl")
        try FileManager.default.copyItem(atPath: fixtures + "/manifest.ttl", toPath: bundle + "/manifest.ttl")
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        compiler.arguments = ["-shared", "-fPIC", "-O1", "-o", bundle + "/misbehaving.so", fixtures + "/misbehaving.c"]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cc failed on misbehaving.c"])
        }
        return folder
    })
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `aulos status` as a person reads it, in a terminal.
@Suite struct StatusCommandTests {
    /// Names come from rig files anyone may have written: a terminal escape, a bidi override or a newline
    /// in one used to reach the terminal as it was (recolouring it, reversing text, forging a line). They
    /// are shown escaped; `--json` keeps them as they are, JSON-escaped.
    @Test func namesAreShownWithTheirControlCharactersEscaped() throws {
        let folder = NSTemporaryDirectory() + "aulos-status-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "name: \"Evil\\e[31m\\u202Eexe.txt\\nwarning: forged\"\nparts:\n  - name: Lead\n    instrument: synth\n"
            .write(toFile: folder + "/evil.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--service", "--rig", folder + "/evil.yaml", "--device", "null"], in: folder)
        #expect(
            try aulos.waitForStatus { ($0["rig"] as? String)?.hasPrefix("Evil\u{1B}") == true }, "\(aulos.stderr)")
        let plain = try runAulos(["status", "--socket", aulos.socketPath])
        #expect(plain.status == 0, "\(plain.stderr)")
        let unsafe = plain.stdout.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F || (0x202A...0x202E).contains($0.value)
                || (0x2066...0x2069).contains($0.value)
        }
        #expect(unsafe.isEmpty, "\(plain.stdout.debugDescription)")
        #expect(plain.stdout.contains(#"Evil\u{1B}[31m\u{202E}exe.txt\u{A}warning: forged"#), "\(plain.stdout)")
        #expect(!plain.stdout.contains("\nwarning: forged"), "\(plain.stdout)")
    }
}

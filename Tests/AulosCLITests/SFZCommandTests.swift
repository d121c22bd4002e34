import AulosTestSupport
import Foundation
import Testing

/// The SFZ player from the command line: a score rendered with `--instrument sfz:PATH` sounds, a malformed
/// library is one line with its file and line (and a non-zero exit, never a crash), `presets --sfz` lists a
/// library.
@Suite struct SFZCommandTests {
    static let library = "sfz/aulos-test/aulos-test.sfz"

    @Test func renderingAScoreWithAnSFZLibrarySounds() throws {
        let folder = TestFiles.scratch("sfz-render")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { TestFiles.remove(folder) }
        let score = folder + "/tune.score"
        try "0b tempo 120\n0b note C4 1b vel=100\n1b note E4 1b vel=90\n2b note C2 0.5b\n3b end\n"
            .write(toFile: score, atomically: true, encoding: .utf8)
        let output = folder + "/tune.wav"
        let result = try runAulos(
            ["render", "--instrument", "sfz:" + Self.library, score, "-o", output, "--format", "float"],
            in: repositoryRoot)
        #expect(result.status == 0, "\(result.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        // Past the header, 32-bit float frames: the loudest well above silence.
        let peak = data.dropFirst(100).withUnsafeBytes { bytes in
            (0..<(bytes.count / 4)).reduce(Float(0)) {
                max($0, abs(bytes.loadUnaligned(fromByteOffset: 4 * $1, as: Float.self)))
            }
        }
        #expect(peak > 0.05 && peak <= 1, "peak \(peak)")
    }

    @Test func aMalformedLibraryIsOneLineAndANonZeroExit() throws {
        let folder = TestFiles.scratch("sfz-malformed")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { TestFiles.remove(folder) }
        try "// a library\n<group> lokey=c4\n<region sample=x.wav\n".write(
            toFile: folder + "/bad.sfz", atomically: true, encoding: .utf8)
        try "0b note C4 1b\n".write(toFile: folder + "/a.score", atomically: true, encoding: .utf8)
        let result = try runAulos(["render", "--instrument", "sfz:bad.sfz", "a.score", "-o", "a.wav"], in: folder)
        #expect(result.status != 0 && result.status < 128, "status \(result.status)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("bad.sfz:3"), "\(result.stderr)")
    }

    @Test func presetsListsAnSFZLibrary() throws {
        let result = try runAulos(["presets", "--sfz", Self.library], in: repositoryRoot)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("aulos-test.sfz: 22 regions"), "\(result.stdout)")
        #expect(result.stdout.contains("keyswitches: c1 (24) Sustain, d1 (26) Staccato"), "\(result.stdout)")
    }
}

import Foundation
import Testing

/// Where an aulos finds its data (presets, rigs, the bundled SoundFont, the panel's page) when it is not the
/// checkout's build: an installed copy uses `<its folder>/../share/aulos`, `$AULOS_DATA` comes first, and a
/// copy with no data anywhere says so in one line — it never reaches back into the tree it was built in.
/// Every run here sets `XDG_DATA_DIRS` to an empty folder, so an aulos installed on this machine is not found,
/// and clears `$AULOS_SOUNDFONT` (the test runner's may name the checkout's font).
@Suite struct DataFolderTests {
    let folder: String
    let noSystemData: [String: String]

    init() throws {
        folder = NSTemporaryDirectory() + "aulos-data-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/empty", withIntermediateDirectories: true)
        noSystemData = ["XDG_DATA_DIRS": folder + "/empty", "AULOS_SOUNDFONT": ""]
    }

    /// A prefix laid out as `make install` does, with the checkout's data copied in.
    func installedPrefix(_ name: String) throws -> String {
        let prefix = folder + "/" + name
        let share = prefix + "/share/aulos"
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: share + "/soundfonts", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: aulosBinary, toPath: prefix + "/bin/aulos")
        try FileManager.default.copyItem(atPath: repositoryRoot + "/presets", toPath: share + "/presets")
        try FileManager.default.copyItem(
            atPath: repositoryRoot + "/soundfonts/AulosGM.sf2", toPath: share + "/soundfonts/AulosGM.sf2")
        return prefix
    }

    @Test func anInstalledCopyPlaysFromItsOwnShareFolder() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let prefix = try installedPrefix("prefix")
        let binary = prefix + "/bin/aulos"
        let version = try runAulos(["--version"], environment: noSystemData, executable: binary)
        #expect(version.status == 0)
        #expect(version.stdout.hasSuffix("\ndata: \(prefix)/share/aulos\n"), "\(version.stdout)")
        let presets = try runAulos(["presets"], environment: noSystemData, executable: binary)
        #expect(presets.status == 0 && presets.stdout.contains(prefix + "/share/aulos/presets"), "\(presets.stdout)")
        #expect(!presets.stdout.contains(repositoryRoot), "the checkout is not consulted: \(presets.stdout)")
        // A factory rig by name. (Which SoundFont its sampler parts get is the system's General MIDI font where
        // one is installed, as on this machine; the packaged test, scripts/install-test.sh, has none.)
        let band = try runAulos(
            ["render", "--rig", "band", "--output", folder + "/band.wav"], environment: noSystemData,
            executable: binary)
        #expect(band.status == 0, "\(band.stderr)")
    }

    /// `$AULOS_DATA` comes before the binary's own folder; a copy with no data anywhere says where it looked.
    @Test func theEnvironmentComesFirstAndNoDataIsOneLine() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let prefix = try installedPrefix("prefix")
        let other = try installedPrefix("other")
        let chosen = try runAulos(
            ["--version"], environment: noSystemData.merging(["AULOS_DATA": other + "/share/aulos"]) { $1 },
            executable: prefix + "/bin/aulos")
        #expect(chosen.stdout.hasSuffix("\ndata: \(other)/share/aulos\n"), "\(chosen.stdout)")

        let lone = folder + "/lone"
        mkdir(lone, 0o755)
        try FileManager.default.copyItem(atPath: aulosBinary, toPath: lone + "/aulos")
        let version = try runAulos(["--version"], environment: noSystemData, executable: lone + "/aulos")
        #expect(version.stdout.hasSuffix("\ndata: none found (install aulos, or set AULOS_DATA)\n"))
        let band = try runAulos(
            ["render", "--rig", "band", "--output", folder + "/band.wav"], environment: noSystemData,
            executable: lone + "/aulos")
        #expect(band.status != 0 && band.stderr.split(separator: "\n").count == 1, "\(band.stderr)")
        #expect(!band.stderr.contains(repositoryRoot), "\(band.stderr)")
    }
}

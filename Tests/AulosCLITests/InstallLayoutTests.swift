import Foundation
import Testing

/// `make install` as a packager runs it (`scripts/install.sh` into a DESTDIR, with the aulos built beside these
/// tests): the installed copy finds its own data, the man pages render without a warning, the bash completion
/// loads, and `make uninstall` removes exactly what was installed. The package test (`make test-install`)
/// does the same with the release binary inside a clean Debian system.
@Suite struct InstallLayoutTests {
    let folder = NSTemporaryDirectory() + "aulos-install-\(UUID().uuidString)"

    func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> CommandResult
    {
        try runAulos(arguments, in: repositoryRoot, environment: environment, executable: executable)
    }

    @Test func installThenUninstallLeavesNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (destdir, prefix) = (folder + "/stage", "/opt/aulos-test")
        let environment = ["DESTDIR": destdir, "PREFIX": prefix]
        let installed = try run(
            repositoryRoot + "/scripts/install.sh", ["install", aulosBinary], environment: environment)
        #expect(installed.status == 0, "\(installed.stderr)")
        let root = destdir + prefix
        let record = try String(contentsOfFile: root + "/share/aulos/installed-files", encoding: .utf8)
            .split(separator: "\n").map(String.init)
        for path in record { #expect(access(destdir + path, R_OK) == 0, "\(path) is recorded but missing") }
        for expected in [
            "/bin/aulos", "/share/aulos/presets/rigs/band.yaml", "/share/aulos/soundfonts/AulosGM.sf2",
            "/share/aulos/web/index.html", "/share/aulos/sfz/aulos-test/aulos-test.sfz", "/share/man/man1/aulos.1",
            "/share/man/man1/aulos-render.1", "/share/man/man1/aulos-service-install.1", "/share/man/man5/aulos-rig.5",
            "/share/bash-completion/completions/aulos", "/share/zsh/vendor-completions/_aulos",
            "/share/fish/vendor_completions.d/aulos.fish", "/lib/systemd/system/aulos.service",
            "/lib/sysusers.d/aulos.conf", "/lib/tmpfiles.d/aulos.conf",
        ] {
            #expect(record.contains(prefix + expected), "\(expected) not installed")
        }
        // Every file installed is recorded: nothing under the prefix that uninstall would miss.
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String }.filter {
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + $0, isDirectory: &directory)
                && !directory.boolValue
        }
        #expect(Set(files ?? []).map { prefix + "/" + $0 }.sorted() == record.sorted())

        // The installed binary plays from its own prefix, and its unit and tmpfiles entry name that prefix.
        let version = try run(root + "/bin/aulos", ["--version"], environment: ["XDG_DATA_DIRS": folder])
        #expect(version.stdout.hasSuffix("\ndata: \(root)/share/aulos\n"), "\(version.stdout)")
        let unit = try String(contentsOfFile: root + "/lib/systemd/system/aulos.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(prefix)/bin/aulos play --service"), "\(unit)")
        let tmpfiles = try String(contentsOfFile: root + "/lib/tmpfiles.d/aulos.conf", encoding: .utf8)
        #expect(tmpfiles.contains("C /var/lib/aulos/rigs - - - - \(prefix)/share/aulos/presets/rigs\n"))

        // groff's own reading of every page: no warning (-ww), tables through tbl.
        if access("/usr/bin/groff", X_OK) == 0 {
            for path in record where path.contains("/share/man/") {
                let groff = try runAulos(["-man", "-t", "-ww", "-z", destdir + path], executable: "/usr/bin/groff")
                #expect(groff.status == 0 && groff.stderr.isEmpty, "\(path): \(groff.stderr)")
            }
        } else {
            print("skipped: the man pages through groff (no groff here)")
        }
        let completion = try runAulos(
            ["-c", "source '\(root)/share/bash-completion/completions/aulos' && complete -p aulos"],
            executable: "/bin/bash")
        #expect(completion.status == 0 && completion.stdout.contains(" aulos"), "\(completion.stderr)")

        let removed = try run(repositoryRoot + "/scripts/install.sh", ["uninstall"], environment: environment)
        #expect(removed.status == 0, "\(removed.stderr)")
        let left = FileManager.default.subpaths(atPath: destdir) ?? []
        #expect(left.sorted() == ["opt", "opt/aulos-test"], "left behind: \(left)")
    }
}

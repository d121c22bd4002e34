import ArgumentParser
import AulosCore

#if canImport(Glibc)
import Glibc
#endif

/// Entry point. Help and version print in full; every error is one line on stderr and a non-zero exit
/// (64 for bad usage, 1 for a failure while running), never a crash, a usage dump or a Core Audio code.
func runAulos() -> Never {
    // Past a file-size limit (ulimit -f, a quota) a write should fail with EFBIG and be reported, with
    // the temporary file removed — not kill the process by SIGXFSZ and leave it behind.
    signal(SIGXFSZ, SIG_IGN)
    // A plugin that crashes or calls exit() gets one line naming it (and its last words) before aulos ends.
    aulos_crash_report_install()
    // Qt-based LV2 plugins (synthv1, samplv1, drumkv1, padthv1) abort while being created when there is no
    // display to connect to, as on a headless box; offscreen is what they need there.
    if getenv("DISPLAY") == nil && getenv("WAYLAND_DISPLAY") == nil { setenv("QT_QPA_PLATFORM", "offscreen", 0) }
    do {
        var command = try Aulos.parseAsRoot()
        try command.run()
        exit(0)
    } catch let code as ExitCode {
        exit(code.rawValue)  // the command has said what happened (an interrupted render)
    } catch let error as ReportableError {
        printError("aulos: error: \(error.message)")
        exit(1)
    } catch {
        let code = Aulos.exitCode(for: error)
        if code == .success {
            print(Aulos.fullMessage(for: error))
            exit(0)
        }
        let message = Aulos.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        printError("aulos: error: \(message)")
        exit(code.rawValue)
    }
}

runAulos()

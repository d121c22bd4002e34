import ArgumentParser
import AulosCore
import AulosPlayback

/// `aulos check`: validates MIDI files and scores strictly, rendering nothing.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check MIDI files and scores strictly, rendering nothing.",
        discussion: """
            Each FILE is read as `aulos render --strict` reads it: any deviation from the Standard MIDI File \
            specification is reported with its track and byte, followed by what the forgiving reading (the \
            default of render and play) does to get past every deviation in the file. Exits 1 when any file \
            deviates or cannot be read.
            """)

    @Argument(help: "MIDI files (.mid, .kar, .rmi) or scores.")
    var files: [String]

    func run() throws {
        var failed = 0
        for path in files {
            do {
                let check = try InputCheck.run(path)
                guard let deviation = check.deviation else {
                    print("\(path): valid: \(check.description)")
                    continue
                }
                failed += 1
                printError("aulos: error: \(path): \(deviation)")
                print("\(path): deviates from the specification; \(check.description)")
                for recovery in check.recoveries { print("  \(recovery)") }
            } catch {
                failed += 1
                printError("aulos: error: \(error.message)")
            }
        }
        if failed > 0 { throw ExitCode(1) }
    }
}

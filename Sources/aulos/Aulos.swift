import ArgumentParser
import AulosRig

/// The `aulos` command: one subcommand per thing a user does, each in its own file under Commands/.
struct Aulos: ParsableCommand {
    /// Semantic versioning: CHANGELOG.md says what each version brings; debian/changelog is made from it.
    static let version = "0.2.0"

    /// What `--version` prints: the version, then the data folder this aulos plays from (presets, rigs, the
    /// bundled SoundFont, the web panel's page), so a user can tell an installed aulos from a checkout's.
    static var versionText: String {
        version + "\ndata: " + (SearchPaths.dataFolder ?? "none found (install aulos, or set AULOS_DATA)")
    }

    static let configuration = CommandConfiguration(
        commandName: "aulos",
        abstract: "A real-time MIDI synthesizer and instrument host for Linux, on Core Audio's audio-unit model.",
        version: versionText,
        subcommands: [
            UnitsCommand.self, GraphCommand.self, RenderCommand.self, PlayCommand.self, CheckCommand.self,
            DevicesCommand.self,
            PresetsCommand.self,
            SoundFontCommand.self, StatusCommand.self, SetCommand.self, SaveCommand.self, LearnCommand.self,
            ServiceCommand.self,
            WebPasswordCommand.self, TryRigCommand.self,
        ])
}

import ArgumentParser

/// The `aulos` command: one subcommand per thing a user does, each in its own file under Commands/.
struct Aulos: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "aulos",
        abstract: "A real-time MIDI synthesizer and instrument host for Linux, on Core Audio's audio-unit model.",
        version: version,
        subcommands: [
            UnitsCommand.self, GraphCommand.self, RenderCommand.self, PlayCommand.self, CheckCommand.self,
            DevicesCommand.self,
            PresetsCommand.self,
            SoundFontCommand.self, StatusCommand.self, SetCommand.self, SaveCommand.self, LearnCommand.self,
            ServiceCommand.self,
            WebPasswordCommand.self, TryRigCommand.self,
        ])
}

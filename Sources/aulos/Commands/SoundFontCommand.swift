import ArgumentParser
import AulosCore
import AulosSoundFont

/// `aulos soundfont`: writes the project's own General MIDI SoundFont (how soundfonts/AulosGM.sf2 is made).
struct SoundFontCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundfont",
        abstract: "Write the project's own General MIDI SoundFont (synthesised, deterministic).")

    /// In the current folder by default: an installed aulos runs anywhere, and a checkout's soundfonts/ is
    /// named with `-o soundfonts/AulosGM.sf2`.
    @Option(name: .shortAndLong, help: "Output .sf2 file.")
    var output: String = AulosGMSoundFont.fileName

    func run() throws {
        let bytes = AulosGMSoundFont.make().encode()
        try FileContents.replace(output, with: bytes)
        print("wrote \(output): \(bytes.count) bytes")
    }
}

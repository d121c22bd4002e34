import ArgumentParser
import AulosSoundFont

#if canImport(Glibc)
import Glibc
#endif

/// `aulos soundfont`: writes the project's own General-MIDI-style SoundFont (how soundfonts/AulosGM.sf2 is made).
struct SoundFontCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundfont",
        abstract: "Write the project's own General-MIDI-style SoundFont (synthesised, deterministic).")

    @Option(name: .shortAndLong, help: "Output .sf2 file.")
    var output: String = "soundfonts/" + AulosGMSoundFont.fileName

    func run() throws {
        let bytes = AulosGMSoundFont.make().encode()
        guard let file = fopen(output, "wb") else {
            throw CommandError("cannot write \(output): \(String(cString: strerror(errno)))")
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        guard written == bytes.count else {
            throw CommandError("writing \(output) failed: \(String(cString: strerror(errno)))")
        }
        print("wrote \(output): \(bytes.count) bytes")
    }
}

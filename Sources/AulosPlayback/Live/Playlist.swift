import AulosCore

/// The songs of a playlist folder (`aulos play FOLDER --web …`, the service's `--playlist`): its MIDI files
/// and scores (.mid, .midi, .smf, .kar, .rmi, .score, .txt), in name order with numbers in names compared as
/// numbers ("2 Intro" before "10 Outro"). The folder is read once, when the player starts: a song is picked
/// by its number (from 1) or its name, never by a path, so a request from the network can only reach the
/// folder's own files.
///
/// Threads: the control thread.
public struct Playlist: Equatable, Sendable {
    /// More songs than a set list needs, few enough that the panel's menu and the status stay small.
    static let maximumSongs = 1000
    static let extensions = InputFile.midiFileExtensions + [".score", ".txt"]

    public let folder: String
    /// File names, in playing order.
    public let songs: [String]

    /// The songs in `folder`; an error when it cannot be read or holds none.
    public init(folder: String) throws(InputFileError) {
        guard let entries = FileContents.entries(inFolder: folder) else {
            throw InputFileError("\(folder): cannot read the playlist folder")
        }
        let names = entries.filter { entry in
            !entry.isFolder && !entry.name.hasPrefix(".")
                && Self.extensions.contains(where: entry.name.lowercased().hasSuffix)
        }.map(\.name)
        guard !names.isEmpty else {
            throw InputFileError(
                "\(folder): no songs in the playlist folder (it plays \(Self.extensions.joined(separator: " ")) "
                    + "files)")
        }
        guard names.count <= Self.maximumSongs else {
            throw InputFileError(
                "\(folder): \(names.count) songs; a playlist holds at most \(Self.maximumSongs), split the folder")
        }
        self.folder = folder.hasSuffix("/") && folder.count > 1 ? String(folder.dropLast()) : folder
        songs = names.sorted { Self.naturallyBefore($0, $1) }
    }

    /// The path of song `index` (from 0).
    func path(_ index: Int) -> String { folder + "/" + songs[index] }

    /// The song `choice` names: its number (from 1), its file name, or its name without the extension,
    /// ignoring case.
    func index(of choice: String) -> Int? {
        if let number = Int(choice) { return songs.indices.contains(number - 1) ? number - 1 : nil }
        let wanted = choice.lowercased()
        return songs.firstIndex { $0.lowercased() == wanted }
            ?? songs.firstIndex { Self.title($0).lowercased() == wanted }
    }

    /// A song's name as shown: its file name without the extension.
    static func title(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// Name order as a person reads it: runs of digits compared by their value.
    static func naturallyBefore(_ a: String, _ b: String) -> Bool {
        func parts(_ text: String) -> [(digits: Bool, text: String)] {
            var parts: [(Bool, String)] = []
            for character in text.lowercased() {
                let digit = character.isASCII && character.isNumber
                if let last = parts.last, last.0 == digit {
                    parts[parts.count - 1].1.append(character)
                } else {
                    parts.append((digit, String(character)))
                }
            }
            return parts
        }
        for (x, y) in zip(parts(a), parts(b)) where x.text != y.text {
            if x.digits && y.digits, let m = Int(x.text.prefix(18)), let n = Int(y.text.prefix(18)), m != n {
                return m < n
            }
            return x.text < y.text
        }
        return parts(a).count != parts(b).count ? parts(a).count < parts(b).count : a < b
    }
}

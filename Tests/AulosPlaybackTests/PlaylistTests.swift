import AulosTestSupport
import Foundation
import Testing

@testable import AulosPlayback

/// A playlist folder: its songs in the order a person reads their names, found by number or name (never a
/// path), and a one-line error for a folder with none.
@Suite struct PlaylistTests {
    @Test func songsAreInNaturalOrderAndFoundByNumberOrName() throws {
        let folder = TestFiles.scratch("playlist")
        mkdir(folder, 0o755)
        defer { TestFiles.remove(folder) }
        for name in ["10 Outro.mid", "2 Ballad.score", "1 Intro.MID", "cover.jpg", ".hidden.mid", "Encore.txt"] {
            TestFiles.write("", to: folder + "/" + name)
        }
        mkdir(folder + "/sub.mid", 0o755)
        let playlist = try Playlist(folder: folder + "/")
        #expect(playlist.songs == ["1 Intro.MID", "2 Ballad.score", "10 Outro.mid", "Encore.txt"])
        #expect(playlist.path(1) == folder + "/2 Ballad.score")
        #expect(playlist.index(of: "3") == 2 && playlist.index(of: "5") == nil && playlist.index(of: "0") == nil)
        #expect(playlist.index(of: "2 ballad") == 1 && playlist.index(of: "10 Outro.mid") == 2)
        #expect(playlist.index(of: "encore") == 3 && playlist.index(of: "../2 Ballad.score") == nil)
        #expect(Playlist.naturallyBefore("Song 9", "Song 10") && !Playlist.naturallyBefore("b", "a"))
        #expect(Playlist.title("2 Ballad.score") == "2 Ballad" && Playlist.title(".mid") == ".mid")
    }

    /// Song Position Pointer and the transport's locate convert between a file's beats and seconds by its
    /// tempo map: four beats at 120 BPM, then 60.
    @Test func beatsAndSecondsFollowTheTempoMap() {
        let map: [(beat: Double, bpm: Double)] = [(0, 120), (4, 60)]
        #expect(KeyboardPlayback.seconds(atBeat: 2, in: map) == 1)
        #expect(KeyboardPlayback.seconds(atBeat: 6, in: map) == 4)
        #expect(KeyboardPlayback.beat(atSeconds: 1, in: map) == 2)
        #expect(KeyboardPlayback.beat(atSeconds: 3, in: map) == 5)
        for beat in stride(from: 0.0, through: 12, by: 0.75) {
            #expect(
                abs(KeyboardPlayback.beat(atSeconds: KeyboardPlayback.seconds(atBeat: beat, in: map), in: map) - beat)
                    < 1e-9)
        }
    }

    @Test func aFolderWithoutSongsIsOneLine() throws {
        let folder = TestFiles.scratch("empty-playlist")
        mkdir(folder, 0o755)
        defer { TestFiles.remove(folder) }
        TestFiles.write("", to: folder + "/readme.md")
        #expect(throws: InputFileError.self) { try Playlist(folder: folder) }
        do { _ = try Playlist(folder: folder + "/missing") } catch {
            #expect(error.message == folder + "/missing: cannot read the playlist folder")
        }
    }
}

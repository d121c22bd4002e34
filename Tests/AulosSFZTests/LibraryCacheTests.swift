import AulosCore
import AulosSFZ
import AulosTestSupport
import Foundation
import Testing

/// A library is loaded once while anything holds it: a rig reload preloads the new rig's libraries while the
/// old rig plays, and the build then takes them without reading a file; a library changed on disk is read
/// again; one nothing holds is freed.
@Suite(.serialized) struct LibraryCacheTests {
    /// A one-region library and its sample in a scratch folder.
    static func library(_ name: String) throws -> (folder: String, path: String) {
        let folder = TestFiles.scratch("sfz-cache-\(name)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        SampleFixtures.write(folder + "/tone.wav", SampleFixtures.sine(440, frames: 40_000))
        try "<region> sample=tone.wav pitch_keycenter=69\n".write(
            toFile: folder + "/lib.sfz", atomically: true, encoding: .utf8)
        return (folder, folder + "/lib.sfz")
    }

    @Test func aLibraryHeldIsSharedAndLoadedOnce() throws {
        let (folder, path) = try Self.library("shared")
        defer { TestFiles.remove(folder) }
        let cache = SFZLibraryCache()
        let limits = SFZSampleStore.Limits()
        let first = try cache.library(at: path, limits: limits)
        let second = try cache.library(at: path, limits: limits)
        #expect(first === second)
        #expect(cache.loadCount == 1)
        // Other limits are another store.
        var smaller = limits
        smaller.preloadFrames = 4096
        #expect(try cache.library(at: path, limits: smaller) !== first)
        #expect(cache.loadCount == 2)
    }

    @Test func aLibraryChangedOnDiskIsReadAgain() throws {
        let (folder, path) = try Self.library("changed")
        defer { TestFiles.remove(folder) }
        let cache = SFZLibraryCache()
        let first = try cache.library(at: path, limits: SFZSampleStore.Limits())
        #expect(first.library.regions[0].keycenter == 69)
        try "<region> sample=tone.wav pitch_keycenter=57\n".write(toFile: path, atomically: true, encoding: .utf8)
        let second = try cache.library(at: path, limits: SFZSampleStore.Limits())
        #expect(second !== first)
        #expect(second.library.regions[0].keycenter == 57)
        // A sample rewritten is a change too.
        SampleFixtures.write(folder + "/tone.wav", SampleFixtures.sine(220, frames: 41_000))
        let third = try cache.library(at: path, limits: SFZSampleStore.Limits())
        #expect(third !== second)
        #expect(third.store.info(third.sampleIDs[0]).frames == 41_000)
        #expect(cache.loadCount == 3)
    }

    @Test func aLibraryNothingHoldsIsFreedUnlessPreloaded() throws {
        let (folder, path) = try Self.library("weak")
        defer { TestFiles.remove(folder) }
        let cache = SFZLibraryCache()
        weak var dropped: SFZLoadedLibrary?
        do { dropped = try cache.library(at: path, limits: SFZSampleStore.Limits()) }
        #expect(dropped == nil)
        cache.preload([path])
        #expect(cache.loadCount == 2)
        weak var pinned = try cache.library(at: path, limits: SFZSampleStore.Limits())
        #expect(cache.loadCount == 2, "the preloaded library is taken, not read again")
        cache.releasePreloaded()
        #expect(pinned == nil)
    }

    /// A library whose heads would pass the cap loads with shorter heads (halved down to 2,048 frames), and
    /// says so; one that would pass it even then is refused with the reason.
    @Test func aLibraryOverTheCapGetsShorterHeads() throws {
        let folder = TestFiles.scratch("sfz-cap")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { TestFiles.remove(folder) }
        var text = ""
        for index in 0..<4 {
            SampleFixtures.write(folder + "/s\(index).wav", SampleFixtures.sine(440, frames: 20_000))
            text += "<region> key=\(60 + index) sample=s\(index).wav\n"
        }
        try text.write(toFile: folder + "/lib.sfz", atomically: true, encoding: .utf8)
        var limits = SFZSampleStore.Limits()
        // Four mono heads of 8,192 (+512 guard) frames are 139 KB, of 4,096 74 KB, of 2,048 41 KB.
        limits.maximumPreloadedBytes = 64 << 10
        let loaded = try SFZLibraryCache().library(at: folder + "/lib.sfz", limits: limits)
        #expect(loaded.store.limits.preloadFrames == 2048)
        #expect(loaded.store.info(loaded.sampleIDs[3]).headFrames == 2048)
        #expect(loaded.warnings.contains { $0.contains("heads are 2048 frames") }, "\(loaded.warnings)")
        limits.maximumPreloadedBytes = 32 << 10
        #expect(throws: AudioUnitError.self) { try SFZLibraryCache().library(at: folder + "/lib.sfz", limits: limits) }
    }

    /// Through the unit, as a rig builds it: a second unit of the same library reads nothing.
    @Test func twoUnitsOfOneLibraryShareItsSamples() throws {
        let (folder, path) = try Self.library("units")
        defer { TestFiles.remove(folder) }
        let before = SFZLibraryCache.shared.loadCount
        let first = SFZInstrumentUnit()
        try first.loadLibrary(path)
        let second = SFZInstrumentUnit()
        try second.loadLibrary(path)
        #expect(first.loaded === second.loaded)
        #expect(SFZLibraryCache.shared.loadCount == before + 1)
    }
}

/// A library whose `.sfz` files sit in `Programs/` beside `Samples/` (Karoryfer's, DrumGizmo's kits) loads
/// with its top folder as the root; one that reaches further than two folders up is refused.
@Suite struct LibraryRootTests {
    @Test func aProgramsFolderBesideSamplesLoads() throws {
        let top = TestFiles.scratch("sfz-root")
        defer { TestFiles.remove(top) }
        for folder in ["/kit/Programs", "/kit/Samples", "/outside"] {
            try FileManager.default.createDirectory(atPath: top + folder, withIntermediateDirectories: true)
        }
        SampleFixtures.write(top + "/kit/Samples/a.wav", SampleFixtures.sine(440, frames: 100))
        SampleFixtures.write(top + "/outside/b.wav", SampleFixtures.sine(440, frames: 100))
        try "<region> sample=../Samples/a.wav\n".write(
            toFile: top + "/kit/Programs/kit.sfz", atomically: true, encoding: .utf8)
        let library = try SFZLibrary.load(findingRootOf: top + "/kit/Programs/kit.sfz")
        #expect(library.root == top + "/kit")
        #expect(library.samples == [top + "/kit/Samples/a.wav"])
        // Loaded with its own folder as the root, it is refused, as before.
        #expect(throws: SFZError.self) { try SFZLibrary.load(path: top + "/kit/Programs/kit.sfz") }
        // Three folders up is too far: the error is the first attempt's, naming the file and line.
        try "<region> sample=../../../outside/b.wav\n".write(
            toFile: top + "/kit/Programs/far.sfz", atomically: true, encoding: .utf8)
        do {
            _ = try SFZLibrary.load(findingRootOf: top + "/kit/Programs/far.sfz")
            Issue.record("a sample three folders up was loaded")
        } catch {
            #expect(error.leavesRoot && error.message.hasPrefix(top + "/kit/Programs/far.sfz:1:"), "\(error.message)")
        }
    }
}

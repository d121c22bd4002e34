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

import AulosCore
import Glibc
import Synchronization

/// A library parsed and its samples' heads loaded: what an `SFZInstrumentUnit` plays from. Immutable once
/// made, so two units (the rig playing and the rig replacing it) can share one without copying its heads.
///
/// Threads: made on a control thread; read-only after (the store's descriptors by render and loader threads).
public final class SFZLoadedLibrary: @unchecked Sendable {
    public let library: SFZLibrary
    public let store: SFZSampleStore
    /// Each of `library.samples`' place in the store.
    public let sampleIDs: [SFZSampleID]
    /// What the library uses that is not played, once each (opcode or header, and where first).
    public let warnings: [String]
    /// The inode, size and modification time of every file it was made from (the `.sfz`, its includes, the
    /// samples): a later load reuses it only while they are unchanged.
    let fingerprint: [FileStamp]

    init(
        library: SFZLibrary, store: SFZSampleStore, sampleIDs: [SFZSampleID], warnings: [String],
        fingerprint: [FileStamp]
    ) {
        self.library = library
        self.store = store
        self.sampleIDs = sampleIDs
        self.warnings = warnings
        self.fingerprint = fingerprint
    }

    /// A file's inode, size and modification time (nil fields: it could not be read). The inode catches a
    /// file replaced by rename (how editors save) within the file system's clock tick.
    struct FileStamp: Equatable {
        var inode: UInt64?
        var size: Int64?
        var modified: timespec?

        init(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return }
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
        }

        static func == (a: FileStamp, b: FileStamp) -> Bool {
            a.inode == b.inode && a.size == b.size && a.modified?.tv_sec == b.modified?.tv_sec
                && a.modified?.tv_nsec == b.modified?.tv_nsec
        }
    }

    /// The stamps of the files `library` was made from, in a fixed order.
    static func stamps(of library: SFZLibrary) -> [FileStamp] { (library.files + library.samples).map(FileStamp.init) }

    /// True while no file it was made from has changed.
    var isCurrent: Bool { Self.stamps(of: library) == fingerprint }
}

/// The libraries loaded in this process, so that loading one is paid once: a rig reload loads the new rig's
/// libraries while the old rig still plays (`preload`), and a library the old and new rig share (unchanged on
/// disk) is the same object — no second copy of its heads, no wait. Libraries are held weakly: one no unit
/// plays is freed, but for those preloaded and not yet taken.
///
/// Threads: any control thread (a mutex guards the table; loading happens outside it). Never the render
/// thread.
public final class SFZLibraryCache: Sendable {
    public static let shared = SFZLibraryCache()

    private struct Key: Hashable {
        var path: String
        var limits: SFZSampleStore.Limits
    }

    private struct Entry {
        weak var loaded: SFZLoadedLibrary?
    }

    private struct Table {
        var entries: [Key: Entry] = [:]
        /// Preloaded libraries, held until a unit takes them or `releasePreloaded()`.
        var pinned: [SFZLoadedLibrary] = []
        /// Loads that read files (not found in the table): the tests' and the status's count.
        var loads = 0
    }

    private let table = Mutex(Table())

    public init() {}

    /// The library at `path` loaded with `limits`: the one already loaded when its files are unchanged,
    /// else parsed and loaded now. Errors are one line (`file:line: …`).
    public func library(at path: String, limits: SFZSampleStore.Limits) throws(AudioUnitError) -> SFZLoadedLibrary {
        let key = Key(path: path, limits: limits)
        if let loaded = table.withLock({ $0.entries[key]?.loaded }), loaded.isCurrent { return loaded }
        let loaded = try Self.load(path, limits: limits)
        table.withLock { table in
            table.entries = table.entries.filter { $0.value.loaded != nil }
            table.entries[key] = Entry(loaded: loaded)
            table.loads += 1
        }
        return loaded
    }

    /// Loads `paths` now and holds them until `releasePreloaded()`: called while the old rig still plays,
    /// so building the new one finds them loaded. A library that cannot be loaded is left to the build to
    /// report.
    public func preload(_ paths: [String], limits: SFZSampleStore.Limits = SFZSampleStore.Limits()) {
        let loaded = paths.compactMap { path in try? library(at: path, limits: limits) }
        table.withLock { $0.pinned += loaded }
    }

    /// Lets go of the preloaded libraries (the units that took them keep them alive).
    public func releasePreloaded() { table.withLock { $0.pinned.removeAll() } }

    /// Libraries loaded from disk since the process started (not counting those found loaded).
    public var loadCount: Int { table.withLock { $0.loads } }

    /// Parses the library and loads its samples' heads (control thread).
    static func load(_ path: String, limits: SFZSampleStore.Limits) throws(AudioUnitError) -> SFZLoadedLibrary {
        let library: SFZLibrary
        do {
            library = try SFZLibrary.load(findingRootOf: path)
        } catch {
            throw AudioUnitError(.invalidFile, error.message)
        }
        // Stamped before the samples are read: a file changed while loading makes the next load read again.
        let fingerprint = SFZLoadedLibrary.stamps(of: library)
        // A library whose heads pass the cap (Karoryfer's Weresax: thousands of samples) loads with shorter
        // heads, down to `shortestHead` frames, rather than not at all — said in its warnings.
        // What each sample keeps in memory beyond its head for its loops: the same at every head length, and
        // found by reading every region (and some files' loops), so found once.
        let resident = library.samples.indices.map { SFZInstrumentUnit.residentFrames(library, sample: $0) }
        var limits = limits
        while true {
            do {
                let (store, ids) = try loadSamples(of: library, resident: resident, limits: limits)
                var warnings = library.warnings.map(\.description) + SFZInstrumentUnit.notPlayed(library)
                if store.limits.preloadFrames < SFZSampleStore.Limits().preloadFrames {
                    warnings.append(
                        "\(path): \(library.samples.count) samples: their heads are \(limits.preloadFrames) frames, "
                            + "not \(SFZSampleStore.Limits().preloadFrames), to stay under the "
                            + "\(limits.maximumPreloadedBytes >> 20) MiB cap (a slow disk is more often late)")
                }
                return SFZLoadedLibrary(
                    library: library, store: store, sampleIDs: ids, warnings: warnings, fingerprint: fingerprint)
            } catch  where error.passesCap && limits.preloadFrames > shortestHead {
                limits.preloadFrames /= 2
                limits.wholeBelowFrames = max(limits.preloadFrames, limits.wholeBelowFrames / 2)
            } catch {
                // Say what takes the memory when it is the loops (a voice cannot yet stream a loop longer than
                // its ring: such samples are held whole).
                let looped = resident.filter { $0 > 0 }
                let why =
                    error.passesCap && !looped.isEmpty
                    ? " (\(looped.count) of its \(library.samples.count) samples loop over more than a stream "
                        + "buffer holds, so they are kept whole in memory)" : ""
                throw AudioUnitError(.invalidFile, "SFZ library \(path): \(error.message)\(why)")
            }
        }
    }

    /// The shortest head a sample is given when a library would pass the memory cap: 2,048 frames, the 43 ms
    /// at 48 kHz the loader then has to bring a voice's next frames (a quarter of the default's).
    static let shortestHead = 2048

    /// Every sample of `library` loaded into a new store with `limits`, sample i keeping `resident[i]` frames.
    static func loadSamples(of library: SFZLibrary, resident: [Int], limits: SFZSampleStore.Limits)
        throws(SFZSampleError) -> (SFZSampleStore, [SFZSampleID])
    {
        let store = SFZSampleStore(limits: limits)
        var ids: [SFZSampleID] = []
        for (index, sample) in library.samples.enumerated() {
            ids.append(try store.load(path: sample, residentFrames: resident[index]))
        }
        return (store, ids)
    }
}

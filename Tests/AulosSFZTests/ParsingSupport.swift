import AulosSFZ

/// Files in memory for the SFZ tests: `.sfz` texts as given, and any `.wav` path taken to exist unless it is
/// listed as missing — so a test writes only the text it is about.
///
/// Threads: a value.
struct TestLibraryFiles: SFZFileSource {
    var memory: SFZMemoryFiles
    var missing: Set<String> = []

    init(_ texts: [String: String], missing: Set<String> = []) {
        memory = SFZMemoryFiles(texts: texts)
        self.missing = missing
    }

    func read(_ path: String, limit: Int) throws(SFZFileSourceError) -> [UInt8] {
        try memory.read(path, limit: limit)
    }

    func fileExists(_ path: String) -> Bool {
        memory.fileExists(path) || (path.hasSuffix(".wav") && !missing.contains(path))
    }

    func names(inFolder path: String) -> [String]? { memory.names(inFolder: path) }
}

/// The library `text` makes as lib/test.sfz (with `others` beside it).
func library(_ text: String, others: [String: String] = [:]) throws(SFZError) -> SFZLibrary {
    var texts = others
    texts["lib/test.sfz"] = text
    return try SFZLibrary.load(path: "lib/test.sfz", files: TestLibraryFiles(texts))
}

/// The error loading `text` gives, or nil.
func loadError(_ text: String, others: [String: String] = [:], limits: SFZLimits = SFZLimits()) -> String? {
    var texts = others
    texts["lib/test.sfz"] = text
    do {
        _ = try SFZLibrary.load(path: "lib/test.sfz", files: TestLibraryFiles(texts), limits: limits)
        return nil
    } catch {
        return error.message
    }
}

import Foundation
import Testing

@testable import AulosSFZ

/// An opt-in survey of real SFZ libraries (issue 33): with `AULOS_SFZ_SURVEY` naming a folder whose
/// sub-folders are libraries (for instance the sfzinstruments organisation's, fetched for reading), every
/// `.sfz` file in each is parsed and typed by Aulos and a report is printed — parse errors, regions, the
/// headers and opcodes met, and what Aulos reads but does not play. Samples need not be present: a sample the
/// library names is taken to exist, and those missing from the disk are only counted. Nothing is downloaded;
/// without the variable the test is skipped, so `make test` never runs it.
///
/// A file that fails to load on its own but is `#include`d by a file that loads is a fragment (its defines
/// come from the file including it) and is listed apart from real errors.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["AULOS_SFZ_SURVEY"] != nil,
        "set AULOS_SFZ_SURVEY to a folder of SFZ libraries to survey them"))
struct RealLibrarySurveyTests {
    @Test func surveyLibraries() throws {
        let folder = try #require(ProcessInfo.processInfo.environment["AULOS_SFZ_SURVEY"])
        let libraries = try SurveyedLibrary.folders(in: folder)
        #expect(!libraries.isEmpty, "no library folders in \(folder)")
        var reports: [SurveyedLibrary] = []
        for library in libraries {
            let report = SurveyedLibrary.survey(folder: library)
            print(report.text())
            reports.append(report)
        }
        print(SurveyedLibrary.ranking(reports))
    }
}

/// What the survey found in one library folder.
///
/// Threads: a value, built and printed on the test's thread.
struct SurveyedLibrary {
    /// One `.sfz` file that loaded.
    struct Loaded {
        var path: String
        var library: SFZLibrary
        /// Sample files the library names that are not on the disk (matched without regard to case).
        var missingSamples: Set<String>
    }

    var folder: String
    var loaded: [Loaded] = []
    /// Files that failed to load, with the parser's message, and whether another file includes them.
    var failed: [(path: String, message: String, included: Bool)] = []
    /// Opcode names (a trailing number written N) and headers, with how many times they are written in the
    /// files that loaded (each file read once, however many `.sfz` files include it).
    var opcodes: [String: Int] = [:]
    var headers: [String: Int] = [:]
    /// What Aulos does not play, by the warning's name: the parser's warnings as occurrences summed over the
    /// files that loaded, the unit's "read but not played" items (`unit …`) as the number of files meeting them.
    var notPlayed: [String: Int] = [:]

    /// The library folders under `folder` (its sub-folders), or `folder` itself when it has none.
    static func folders(in folder: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let folders = names.map { folder + "/" + $0 }.filter { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
        }
        return folders.isEmpty ? [folder] : folders
    }

    /// Loads every `.sfz` file under `folder` with `folder` as the root, and tallies what it meets.
    static func survey(folder: String) -> SurveyedLibrary {
        var report = SurveyedLibrary(folder: folder)
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var paths: [String] = []
        while let name = enumerator?.nextObject() as? String {
            if name.lowercased().hasSuffix(".sfz") { paths.append(SFZPath.normalise(folder + "/" + name)) }
        }
        var included = Set<String>()
        var errors: [(String, String)] = []
        for path in paths.sorted() {
            do {
                let library = try SFZLibrary.load(path: path, root: folder, files: SurveyFiles())
                let missing = library.samples.filter { sample in
                    !SFZDiskFiles().fileExists(sample)
                        && SFZLibrary.caseInsensitive(sample, root: library.root, files: SFZDiskFiles()) == nil
                }
                report.loaded.append(Loaded(path: path, library: library, missingSamples: Set(missing)))
                for file in library.files.dropFirst() { included.insert(SFZPath.join(folder, file)) }
            } catch {
                errors.append((path, error.message))
            }
        }
        report.failed = errors.map { (path: $0.0, message: $0.1, included: included.contains($0.0)) }
        var read = Set<String>()
        for entry in report.loaded {
            for file in entry.library.files where read.insert(file).inserted { report.tally(file: file) }
            for warning in entry.library.warnings {
                report.notPlayed[warning.kind.rawValue + " " + warning.name, default: 0] += warning.count
            }
            for line in SFZInstrumentUnit.notPlayed(entry.library) {
                // "file:line: what is read but not played" (the file's name may hold spaces, never ": ").
                let what = line.range(of: ": ", options: .backwards).map { String(line[$0.upperBound...]) } ?? line
                let name = what.replacingOccurrences(of: " is read but not played", with: "")
                report.notPlayed["unit " + name, default: 0] += 1
            }
        }
        return report
    }

    /// Counts the headers and opcode names written in one file (comments skipped; `#define`d names as written).
    mutating func tally(file: String) {
        guard let data = FileManager.default.contents(atPath: file) else { return }
        let text = String(decoding: data, as: UTF8.self)
        for var line in text.split(whereSeparator: \.isNewline) {
            if let comment = line.range(of: "//") { line = line[..<comment.lowerBound] }
            var rest = Substring(line)
            while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
                headers[String(rest[open...close]), default: 0] += 1
                rest = rest[rest.index(after: close)...]
            }
            for word in line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ">" }) {
                guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { continue }
                let name = word[..<equals]
                guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }) else { continue }
                opcodes[SFZRegionBuilder.pattern(String(name)).pattern, default: 0] += 1
            }
        }
    }

    /// The report for one library, as plain text lines.
    func text() -> String {
        var lines = ["== \(folder)"]
        let regions = loaded.map(\.library.regions.count)
        let samples = Set(loaded.flatMap(\.library.samples))
        let missing = loaded.reduce(into: Set<String>()) { $0.formUnion($1.missingSamples) }
        let fragments = failed.filter(\.included).count
        lines.append(
            "sfz files: \(loaded.count + failed.count), loaded: \(loaded.count), "
                + "failed: \(failed.count - fragments), fragments: \(fragments)")
        lines.append("regions: total \(regions.reduce(0, +)), largest \(regions.max() ?? 0)")
        lines.append("sample files named: \(samples.count), missing on disk: \(missing.count)")
        for entry in loaded {
            lines.append(
                "  ok \(entry.path): \(entry.library.regions.count) regions, \(entry.library.warnings.count) warnings")
        }
        for failure in failed {
            lines.append("  \(failure.included ? "fragment" : "FAILED") \(failure.path)\n    \(failure.message)")
        }
        lines.append(
            "headers: " + headers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        lines.append(
            "opcodes: " + opcodes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        lines.append("not played:")
        for (name, count) in notPlayed.sorted(by: { $0.key < $1.key }) { lines.append("  \(name) \(count)") }
        return lines.joined(separator: "\n")
    }

    /// What Aulos does not play, ranked by how many of the libraries meet it.
    static func ranking(_ reports: [SurveyedLibrary]) -> String {
        var libraries: [String: [String]] = [:]
        for report in reports {
            let name = report.folder.split(separator: "/").last.map(String.init) ?? report.folder
            for key in report.notPlayed.keys { libraries[key, default: []].append(name) }
        }
        let ranked = libraries.sorted { ($0.value.count, $1.key) > ($1.value.count, $0.key) }
        return
            (["== not played, by libraries meeting it"]
            + ranked.map { "\($0.value.count) \($0.key): \($0.value.joined(separator: ", "))" }).joined(separator: "\n")
    }
}

/// The disk for `.sfz` files, with every other file (a sample) taken to exist: the survey parses libraries
/// whose samples were not fetched.
///
/// Threads: a value.
struct SurveyFiles: SFZFileSource {
    let disk = SFZDiskFiles()

    func read(_ path: String, limit: Int) throws(SFZFileSourceError) -> [UInt8] { try disk.read(path, limit: limit) }

    func fileExists(_ path: String) -> Bool { disk.fileExists(path) || !path.lowercased().hasSuffix(".sfz") }

    func names(inFolder path: String) -> [String]? { disk.names(inFolder: path) }
}

import Glibc

/// An SFZ library as loaded: its regions typed, the sample files they play (resolved inside the library's
/// root folder and checked to exist, never read here), its curves, the keyswitches and keys it plays, and the
/// opcodes and headers it uses that Aulos does not play — for the instrument unit, for `aulos presets --sfz`,
/// and for the warning shown once per library.
///
/// Paths: `sample=` and `#include` are relative to the folder of the file that was loaded (an included file
/// does not change it, as in other players), after `default_path`; `\` reads as `/`; a name whose case differs
/// from the disk's is matched without regard to case. No sample and no included file may be outside the root
/// folder (by default the loaded file's folder): a library whose `.sfz` files sit in a sub-folder beside their
/// samples (`Programs/` and `Samples/`) is loaded with its top folder as the root.
///
/// Limits: `SFZLimits` (file sizes, regions, includes, defines, line length).
///
/// Threads: a value; loaded on a control thread (it reads the file system), then read anywhere.
public struct SFZLibrary: Sendable {
    /// The file loaded, and the root folder nothing may leave (both normalised).
    public let path: String
    public let root: String
    /// Every region, in file order (a region with no sample or silenced by `end` is kept, and never selected).
    public let regions: [SFZRegion]
    /// Each sample file once (resolved paths), in the order first used.
    public let samples: [String]
    /// The `<curve>`s the library defines, by `curve_index`, plus the built-in ones 0…6 (`SFZCurve`).
    public let curves: [Int: SFZCurve]
    /// The `<effect>` sections as written (read, not played).
    public let effects: [SFZParsedSection]
    /// Opcodes and headers read but not played, once each with their first place.
    public let warnings: [SFZWarning]
    /// `set_ccN`: each controller's value before any message (controllers not listed start at 0).
    public let controllerDefaults: [Int: Int]
    /// `label_ccN` and `label_keyN` (v2), for a panel.
    public let controllerLabels: [Int: String]
    public let keyLabels: [Int: String]
    /// The files read (the loaded one, then those it includes) and their total size in bytes.
    public let files: [String]
    public let bytesRead: Int

    /// Reads the library at `path`: parses it and everything it includes, types every region, resolves and
    /// checks its samples. `root` (default: the folder of `path`) is the folder nothing may leave.
    public static func load(
        path: String, root: String? = nil, files: any SFZFileSource = SFZDiskFiles(), limits: SFZLimits = SFZLimits()
    ) throws(SFZError) -> SFZLibrary {
        let normalised = SFZPath.normalise(path.replacingBackslashes())
        let rootFolder = SFZPath.normalise(root ?? FileFolder.of(normalised))
        var parser = SFZParser(root: rootFolder, files: files, limits: limits)
        let parsed = try parser.parse(file: normalised)
        return try SFZLibrary(parsed: parsed, path: normalised, root: rootFolder, files: files)
    }

    /// The library at `path`, its root found: the `.sfz` file's folder, or — when the library reaches out of
    /// it, as libraries whose `.sfz` files sit in `Programs/` beside `Samples/` do (`sample=../Samples/…`) —
    /// the folder above, or the one above that. Never the file system's root. The error is the first
    /// attempt's when no root holds the library.
    public static func load(
        findingRootOf path: String, files: any SFZFileSource = SFZDiskFiles(), limits: SFZLimits = SFZLimits()
    ) throws(SFZError) -> SFZLibrary {
        var first: SFZError
        do {
            return try load(path: path, files: files, limits: limits)
        } catch {
            guard error.leavesRoot else { throw error }
            first = error
        }
        // Wider roots are found from the absolute path (a relative one has no folder above ".").
        var absolute = path
        if !path.hasPrefix("/"), let cwd = getcwd(nil, 0) {
            absolute = String(cString: cwd) + "/" + path
            free(cwd)
        }
        absolute = SFZPath.normalise(absolute)
        var root = FileFolder.of(absolute)
        for _ in 0..<2 {
            let parent = FileFolder.of(root)
            guard parent != root, parent != "/" else { break }
            root = parent
            do {
                return try load(path: absolute, root: root, files: files, limits: limits)
            } catch {
                guard error.leavesRoot else { throw error }
            }
        }
        throw first
    }

    /// A library from text, as if it were the file `path` (includes and samples are looked up in `files`).
    public static func parse(
        text: String, path: String, root: String? = nil, files: any SFZFileSource = SFZMemoryFiles([:]),
        limits: SFZLimits = SFZLimits()
    ) throws(SFZError) -> SFZLibrary {
        let normalised = SFZPath.normalise(path)
        let rootFolder = SFZPath.normalise(root ?? FileFolder.of(normalised))
        var parser = SFZParser(root: rootFolder, files: files, limits: limits)
        let parsed = try parser.parse(text: text, file: normalised)
        return try SFZLibrary(parsed: parsed, path: normalised, root: rootFolder, files: files)
    }

    init(parsed: SFZParseResult, path: String, root: String, files: any SFZFileSource) throws(SFZError) {
        self.path = path
        self.root = root
        var builder = SFZRegionBuilder()
        var warnings = parsed.warnings
        var regions: [SFZRegion] = []
        regions.reserveCapacity(parsed.regions.count)
        var samples: [String] = []
        var sampleIndex: [String: Int] = [:]
        let folder = FileFolder.of(path)
        for parsedRegion in parsed.regions {
            var region = try builder.region(parsedRegion)
            if case .file(let written) = region.sample {
                let resolved = try SFZLibrary.resolve(written, folder: folder, root: root, files: files, at: region)
                region.samplePath = resolved
                if let index = sampleIndex[resolved] {
                    region.sampleIndex = index
                } else {
                    region.sampleIndex = samples.count
                    sampleIndex[resolved] = samples.count
                    samples.append(resolved)
                }
            } else if case .none = region.sample {
                warnings.add(.regionWithoutSample, "region", at: region.location)
            }
            regions.append(region)
        }
        var curves: [Int: SFZCurve] = [:]
        for index in 0...6 { curves[index] = SFZCurve.builtIn(index) }
        for section in parsed.curves {
            var index: Int?
            var points: [SFZCurvePoint] = []
            for opcode in section.opcodes {
                let value = OpcodeValue(opcode: opcode, noteOffset: 0)
                let (pattern, number) = SFZRegionBuilder.pattern(opcode.name)
                if opcode.name == "curve_index" {
                    index = try value.int(in: 0...SFZCurve.maximumIndex)
                } else if pattern == "vN", let number, (0...127).contains(number) {
                    points.append(SFZCurvePoint(input: number, value: try value.float(in: -1000...1000)))
                } else {
                    warnings.add(.unsupportedOpcode, pattern, at: opcode.location)
                }
            }
            guard let index else {
                throw SFZError("\(section.location): a <curve> needs curve_index=N (0–\(SFZCurve.maximumIndex))")
            }
            curves[index] = SFZCurve(points: points)
        }
        for section in parsed.effects { warnings.add(.unknownHeader, "<effect>", at: section.location) }
        for warning in builder.warnings.warnings {
            for _ in 0..<warning.count { warnings.add(warning.kind, warning.name, at: warning.first) }
        }
        self.regions = regions
        self.samples = samples
        self.curves = curves
        self.effects = parsed.effects
        self.warnings = warnings.warnings
        controllerDefaults = builder.controllerDefaults
        controllerLabels = builder.controllerLabels
        keyLabels = builder.keyLabels
        self.files = [path] + parsed.includedFiles
        bytesRead = parsed.bytesRead
    }

    /// A sample's path inside the root, found on disk (ignoring case where the exact name is missing).
    static func resolve(
        _ written: String, folder: String, root: String, files: any SFZFileSource, at region: SFZRegion
    ) throws(SFZError) -> String {
        let path = SFZPath.join(folder, written)
        guard SFZPath.inside(path, root: root) != nil else {
            throw SFZError(
                "\(region.location): sample \(written.clipped) is outside the library's folder \(root); keep a "
                    + "library's .sfz files and samples under one folder", leavesRoot: true)
        }
        if files.fileExists(path) { return path }
        if let found = caseInsensitive(path, root: root, files: files) { return found }
        throw SFZError(
            "\(region.location): sample \(written.clipped) not found (looked for \(path)); is the library complete?")
    }

    /// `path` matched folder by folder below `root` without regard to case, or nil.
    static func caseInsensitive(_ path: String, root: String, files: any SFZFileSource) -> String? {
        guard let inside = SFZPath.inside(path, root: root) else { return nil }
        var current = root
        for component in inside.split(separator: "/") {
            let wanted = component.lowercased()
            guard let names = files.names(inFolder: current),
                let match = names.first(where: { $0 == component }) ?? names.first(where: { $0.lowercased() == wanted })
            else { return nil }
            current = current == "." ? match : current + "/" + match
        }
        return files.fileExists(current) ? current : nil
    }

    // MARK: What it plays

    /// A keyswitch: its key and the name the library gives it (`sw_label`, else `label_keyN`).
    public struct Keyswitch: Sendable, Hashable {
        public var key: Int
        public var label: String?

        public init(key: Int, label: String?) {
            self.key = key
            self.label = label
        }
    }

    /// Keys that switch articulations (`sw_last` keys, and the `sw_lokey…sw_hikey` ranges), lowest first.
    public var keyswitches: [Keyswitch] {
        var labels: [Int: String?] = [:]
        for region in regions {
            if let key = region.switchLast { labels[key] = labels[key] ?? region.switchLabel ?? keyLabels[key] }
        }
        for region in regions {
            guard region.switchLowKey != nil || region.switchHighKey != nil else { continue }
            let low = region.switchLowKey ?? 0
            let high = region.switchHighKey ?? 127
            guard low <= high else { continue }
            for key in low...high where labels[key] == nil && regions.contains(where: { $0.switchLast == key }) {
                labels[key] = keyLabels[key]
            }
        }
        return labels.keys.sorted().map { Keyswitch(key: $0, label: labels[$0] ?? nil) }
    }

    /// The keys at least one playable note-on region answers, as ranges (lowest first).
    public var playedKeyRanges: [ClosedRange<Int>] {
        var played = [Bool](repeating: false, count: 128)
        for region in regions where region.isAttack && region.sample != .none && !region.isSilenced {
            let low = max(0, region.lowKey)
            let high = min(127, region.highKey)
            guard low <= high else { continue }
            for key in low...high { played[key] = true }
        }
        var ranges: [ClosedRange<Int>] = []
        var start: Int?
        for key in 0...128 {
            let on = key < 128 && played[key]
            if on, start == nil { start = key }
            if !on, let first = start {
                ranges.append(first...(key - 1))
                start = nil
            }
        }
        return ranges
    }

    /// A few lines for `aulos presets --sfz`: regions by trigger, samples, key ranges, velocity layers,
    /// keyswitches, round robins, controllers, and what is not played.
    public func summary() -> String {
        var lines: [String] = []
        let name = path.split(separator: "/").last.map(String.init) ?? path
        lines.append("\(name): \(regions.count) regions, \(samples.count) sample files, \(files.count) SFZ files")
        var triggers: [String: Int] = [:]
        for region in regions { triggers[region.trigger.rawValue, default: 0] += 1 }
        lines.append(
            "  triggers: "
                + SFZTrigger.allCases.compactMap { trigger in
                    triggers[trigger.rawValue].map { "\(trigger.rawValue) \($0)" }
                }.joined(separator: ", "))
        let keys = playedKeyRanges.map { range in
            range.count == 1
                ? "\(SFZNote.name(range.lowerBound)) (\(range.lowerBound))"
                : "\(SFZNote.name(range.lowerBound))–\(SFZNote.name(range.upperBound)) "
                    + "(\(range.lowerBound)–\(range.upperBound))"
        }
        lines.append("  keys: " + (keys.isEmpty ? "none" : keys.joined(separator: ", ")))
        let layers = Set(regions.filter(\.isAttack).map { "\($0.lowVelocity)-\($0.highVelocity)" })
        lines.append("  velocity ranges: \(layers.count)")
        let switches = keyswitches.map { "\(SFZNote.name($0.key)) (\($0.key))" + ($0.label.map { " \($0)" } ?? "") }
        if !switches.isEmpty { lines.append("  keyswitches: " + switches.joined(separator: ", ")) }
        let sequences = Set(regions.map(\.sequenceLength)).subtracting([1]).sorted()
        if !sequences.isEmpty {
            lines.append("  round robin: sequences of " + sequences.map(String.init).joined(separator: ", "))
        }
        if regions.contains(where: { $0.lowRandom > 0 || $0.highRandom < 1 }) {
            lines.append("  random round robin (lorand/hirand)")
        }
        let groups = Set(regions.map(\.offBy)).subtracting([0])
        if !groups.isEmpty { lines.append("  choke groups (off_by): \(groups.count)") }
        let labels = controllerLabels.keys.sorted().map { "cc\($0) \(controllerLabels[$0]!)" }
        if !labels.isEmpty { lines.append("  controllers: " + labels.joined(separator: ", ")) }
        if warnings.isEmpty {
            lines.append("  every opcode is supported")
        } else {
            lines.append("  not played (\(warnings.count)):")
            for warning in warnings { lines.append("    \(warning)") }
        }
        return lines.joined(separator: "\n")
    }
}

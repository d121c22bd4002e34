/// The limits every SFZ read keeps, so a wrong file (a 4 GB video, an include loop, a `#define` chain that
/// doubles at each step) is one clear error instead of exhausted memory or a hang. The defaults are far above
/// what real libraries use (the largest free ones have a few thousand regions in files of under 2 MB).
///
/// Threads: a value.
public struct SFZLimits: Sendable, Equatable {
    /// The most bytes one `.sfz` file (the root or an included one) may hold.
    public var fileBytes = 8 << 20
    /// The most bytes all the files of one library may hold together, counting a file each time it is included.
    public var totalBytes = 32 << 20
    /// The longest line, in bytes.
    public var lineBytes = 65_536
    /// The most regions a library may have.
    public var regions = 32_768
    /// How deep `#include`s may nest (the root file is depth 0).
    public var includeDepth = 16
    /// The most `#include`s a library may perform in all (Ivy Audio's Piano in 162 performs about 3,500: one
    /// per region; `totalBytes` bounds what they read).
    public var includes = 16_384
    /// The most `#define`s a library may make.
    public var defines = 4096
    /// The longest a `#define`'s value, an opcode's name or value may become once `$NAME`s are substituted.
    public var expandedBytes = 4096
    /// The most opcodes a library may write in all (each written once, however many regions inherit it).
    public var opcodes = 1 << 20

    public init() {}
}

/// What parsing a library's text gives: its regions with the opcodes in force for each, its `<curve>` and
/// `<effect>` sections, and the headers it did not know.
///
/// Threads: a value.
public struct SFZParseResult: Sendable {
    public var regions: [SFZParsedRegion] = []
    public var curves: [SFZParsedSection] = []
    public var effects: [SFZParsedSection] = []
    /// Every `#include`d file, in the order first read (paths as the library names them).
    public var includedFiles: [String] = []
    /// The root file and every file it includes, each once, with the bytes they held (for a summary).
    public var bytesRead = 0
    var warnings = SFZWarningList()

    /// Headers the parser does not know (their opcodes are skipped with them), once each.
    public var unknownHeaders: [SFZWarning] { warnings.warnings }
}

/// Reads SFZ text: comments (`//` to the end of the line, `/* … */` across lines), headers with inheritance,
/// `#define $NAME value` and `$NAME` substitution, `#include "file"` confined to the library's root folder, and
/// opcodes whose values may hold spaces. Opcode names are read in lower case (`Sample=` is `sample=`).
///
/// Where a value ends (the rule players follow, since sample names hold spaces): at the end of the line, at a
/// `<` or a `//` or `/*`, or at whitespace followed by what looks like the next opcode (`name=`) or by
/// `#define`/`#include` — so `sample=Piano C4 soft.wav lokey=60` gives `Piano C4 soft.wav`. Trailing whitespace
/// is dropped. A `#define`'s value is one word (`#define $A 1 #define $B 2` defines both), and `#include`
/// paths are relative to the folder of the file loaded at every depth, as in sfizz and ARIA.
///
/// `$NAME` is replaced by the longest defined name the text after `$` starts with, in opcode names, values,
/// `#include` paths and later `#define` values (a define's value is substituted when it is defined, so a chain
/// of defines cannot expand without bound: each value is limited to `SFZLimits.expandedBytes`). An undefined
/// `$NAME` is an error, except in a `sample` value, where `$` may be part of a file's name.
///
/// Errors are one line, `file:line: what is wrong; what to do`. Limits: `SFZLimits`.
///
/// Threads: control side; one parser reads one library on one thread.
public struct SFZParser {
    public let limits: SFZLimits
    let files: any SFZFileSource
    /// The library's root folder (normalised): no file or sample may be outside it.
    let root: String

    private var result = SFZParseResult()
    /// Opcodes of each inheritance level (control, global, master, group, region) as they are read.
    private var levels: [[SFZOpcode]] = [[], [], [], [], []]
    /// The current header: a level (0…4), a curve or effect section, or an unknown header (its opcodes skipped).
    private var current: Current = .none
    private var regionLocation = SFZLocation(file: "", line: 0)
    private var sectionLocation = SFZLocation(file: "", line: 0)
    private var inherited: [SFZOpcode] = []
    private var inheritedVersion = 0
    private var inheritedValid = true
    private var defines: [String: String] = [:]
    /// The files being read, root first, for loops.
    private var stack: [String] = []
    private var includeCount = 0
    private var opcodeCount = 0

    private enum Current {
        case none
        case level(Int)
        case section(SFZHeader)
        case unknown
    }

    /// A parser of the library whose files `files` holds, none of them outside `root`.
    public init(root: String, files: any SFZFileSource = SFZDiskFiles(), limits: SFZLimits = SFZLimits()) {
        self.root = SFZPath.normalise(root)
        self.files = files
        self.limits = limits
    }

    /// Parses the file at `path` (inside the root) and everything it includes.
    public mutating func parse(file path: String) throws(SFZError) -> SFZParseResult {
        let normalised = SFZPath.normalise(path.replacingBackslashes())
        guard SFZPath.inside(normalised, root: root) != nil else {
            throw SFZError("\(path): is outside the library's root folder \(root)")
        }
        let bytes = try read(normalised, from: nil)
        try parse(bytes: bytes, file: normalised)
        return try finish()
    }

    /// Parses `text` as the content of `file` (a path inside the root: includes are read relative to it).
    public mutating func parse(text: String, file: String) throws(SFZError) -> SFZParseResult {
        let bytes = Array(text.utf8)
        guard bytes.count <= limits.fileBytes else {
            throw SFZError("\(file): is larger than \(limits.fileBytes) bytes, the most an SFZ file may be")
        }
        result.bytesRead += bytes.count
        try parse(bytes: bytes, file: SFZPath.normalise(file))
        return try finish()
    }

    private mutating func finish() throws(SFZError) -> SFZParseResult {
        try endRegion()
        try endSection()
        let done = result
        result = SFZParseResult()
        return done
    }

    private mutating func read(_ path: String, from location: SFZLocation?) throws(SFZError) -> [UInt8] {
        let at = location.map { "\($0): " } ?? ""
        let bytes: [UInt8]
        do {
            bytes = try files.read(path, limit: limits.fileBytes)
        } catch {
            throw SFZError("\(at)cannot read \(path): \(error.reason)")
        }
        result.bytesRead += bytes.count
        guard result.bytesRead <= limits.totalBytes else {
            throw SFZError(
                "\(at)the library's files come to more than \(limits.totalBytes >> 20) MiB with \(path); "
                    + "an SFZ library is text of a few MB at most")
        }
        return bytes
    }

    // MARK: Scanning

    private mutating func parse(bytes: [UInt8], file: String) throws(SFZError) {
        guard stack.count <= limits.includeDepth else {
            throw SFZError("\(file): includes nest deeper than \(limits.includeDepth) files")
        }
        stack.append(file)
        defer { stack.removeLast() }
        var scanner = Scanner(bytes: bytes, file: file)
        try scanner.checkLines(limit: limits.lineBytes)
        while true {
            scanner.skipWhitespace()
            guard let byte = scanner.peek() else { break }
            switch byte {
            case UInt8(ascii: "/") where scanner.peek(1) == UInt8(ascii: "/"):
                scanner.skipLine()
            case UInt8(ascii: "/") where scanner.peek(1) == UInt8(ascii: "*"):
                try scanner.skipBlockComment()
            case UInt8(ascii: "<"):
                try header(scanner.header())
            case UInt8(ascii: "#"):
                try directive(&scanner)
            default:
                let location = scanner.location
                let (rawName, rawValue) = try scanner.opcode()
                let expanded = try expand(rawName, at: location, what: "opcode name")
                guard !expanded.isEmpty, expanded.utf8.allSatisfy(Scanner.isNameByte), !expanded.contains("$") else {
                    throw SFZError("\(location): '\(rawName.clipped)' is not an opcode name (letters, digits, _)")
                }
                // Names are read without regard to case, as ARIA and sfizz read them (`Sample=`, `LoKey=`).
                let name = expanded.lowercased()
                let value = try expand(rawValue, at: location, what: name, lenient: name == "sample")
                try opcode(SFZOpcode(name, value, at: location))
            }
        }
    }

    private mutating func directive(_ scanner: inout Scanner) throws(SFZError) {
        let location = scanner.location
        let word = scanner.directiveWord()
        switch word {
        case "#define":
            let (name, rawValue) = try scanner.defineBody()
            guard name.count > 1, name.hasPrefix("$"), name.utf8.dropFirst().allSatisfy(Scanner.isNameByte) else {
                throw SFZError("\(location): #define needs a $NAME and a value (#define $VELOCITY 100)")
            }
            guard defines[name] != nil || defines.count < limits.defines else {
                throw SFZError("\(location): more than \(limits.defines) #defines; no library needs that many")
            }
            defines[name] = try expand(rawValue, at: location, what: name)
        case "#include":
            let rawPath = try scanner.quoted()
            let relative = try expand(rawPath, at: location, what: "#include")
            try include(relative, at: location)
        default:
            throw SFZError("\(location): unknown directive '\(word.clipped)' (SFZ has #define and #include)")
        }
    }

    private mutating func include(_ relative: String, at location: SFZLocation) throws(SFZError) {
        includeCount += 1
        guard includeCount <= limits.includes else {
            throw SFZError("\(location): more than \(limits.includes) #includes in one library")
        }
        // Relative to the folder of the file loaded, at every depth (as sfizz and ARIA read it), not to the
        // including file's folder: `Data/notes.txt` including `Data/region.txt` means `Data/region.txt`.
        let folder = FileFolder.of(stack.first ?? location.file)
        let path = SFZPath.join(folder, relative)
        guard SFZPath.inside(path, root: root) != nil else {
            throw SFZError(
                "\(location): #include \"\(relative.clipped)\" is outside the library's folder \(root); "
                    + "keep included files inside it", leavesRoot: true)
        }
        if let start = stack.firstIndex(of: path) {
            let chain = (stack[start...] + [path]).joined(separator: " → ")
            throw SFZError("\(location): #include loop: \(chain); remove one of these includes")
        }
        guard stack.count <= limits.includeDepth else {
            throw SFZError(
                "\(location): #include \"\(relative.clipped)\" nests deeper than \(limits.includeDepth) files; "
                    + "flatten the includes")
        }
        if !result.includedFiles.contains(path) { result.includedFiles.append(path) }
        let bytes = try read(path, from: location)
        try parse(bytes: bytes, file: path)
    }

    /// `text` with every `$NAME` replaced, within the expansion limit.
    private func expand(
        _ text: String, at location: SFZLocation, what: String, lenient: Bool = false
    ) throws(SFZError) -> String {
        guard text.utf8.contains(UInt8(ascii: "$")) else { return text }
        var output: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "$") else {
                output.append(byte)
                index += 1
                continue
            }
            var end = index + 1
            while end < bytes.count, Scanner.isNameByte(bytes[end]) { end += 1 }
            // The longest defined name the text starts with.
            var found: (length: Int, value: String)?
            var length = end - index
            while length > 1 {
                let candidate = String(decoding: bytes[index..<(index + length)], as: UTF8.self)
                if let value = defines[candidate] {
                    found = (length, value)
                    break
                }
                length -= 1
            }
            if let found {
                output += found.value.utf8
                index += found.length
            } else if lenient {
                output.append(byte)
                index += 1
            } else {
                let name = String(decoding: bytes[index..<end], as: UTF8.self)
                throw SFZError(
                    "\(location): \(name.clipped) is not defined; add #define \(name.clipped) VALUE before it")
            }
            guard output.count <= limits.expandedBytes else {
                throw SFZError(
                    "\(location): \(what.clipped) expands to more than \(limits.expandedBytes) characters; "
                        + "shorten the #define chain")
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    // MARK: Headers and inheritance

    private mutating func header(_ found: (name: String, location: SFZLocation)) throws(SFZError) {
        try endRegion()
        try endSection()
        guard let header = SFZHeader(rawValue: found.name) else {
            result.warnings.add(.unknownHeader, "<\(found.name.clipped)>", at: found.location)
            current = .unknown
            return
        }
        if let level = header.level {
            // A header resets its own level and every level below it.
            for lower in level..<levels.count { levels[lower].removeAll() }
            if level < 4 { inheritedValid = false }
            current = .level(level)
            if header == .region { regionLocation = found.location }
        } else {
            current = .section(header)
            sectionLocation = found.location
        }
    }

    private mutating func opcode(_ opcode: SFZOpcode) throws(SFZError) {
        opcodeCount += 1
        guard opcodeCount <= limits.opcodes else {
            throw SFZError("\(opcode.location): more than \(limits.opcodes) opcodes in one library")
        }
        switch current {
        case .none:
            // Opcodes before any header: SFZ v1 files sometimes start that way; they apply as <global>'s would.
            levels[1].append(opcode)
            inheritedValid = false
        case .level(let level):
            levels[level].append(opcode)
            if level < 4 { inheritedValid = false }
        case .section:
            levels[4].append(opcode)
        case .unknown:
            break
        }
    }

    private mutating func endRegion() throws(SFZError) {
        guard case .level(4) = current else { return }
        current = .none
        guard result.regions.count < limits.regions else {
            throw SFZError(
                "\(regionLocation): more than \(limits.regions) regions; split the library into smaller instruments")
        }
        if !inheritedValid {
            inherited = levels[0] + levels[1] + levels[2] + levels[3]
            inheritedVersion += 1
            inheritedValid = true
        }
        result.regions.append(
            SFZParsedRegion(
                location: regionLocation, inherited: inherited, inheritedVersion: inheritedVersion,
                opcodes: levels[4]))
        levels[4].removeAll(keepingCapacity: true)
    }

    private mutating func endSection() throws(SFZError) {
        guard case .section(let header) = current else { return }
        let section = SFZParsedSection(header: header, location: sectionLocation, opcodes: levels[4])
        if header == .curve { result.curves.append(section) } else { result.effects.append(section) }
        levels[4].removeAll()
        current = .none
    }
}

/// The folder part of a path.
enum FileFolder {
    static func of(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

extension String {
    /// At most 60 characters, for quoting the user's text in an error.
    var clipped: String { count > 60 ? String(prefix(57)) + "..." : self }
}

/// The byte-level reader of one file: positions, lines, comments, headers, opcodes, directives.
///
/// Threads: owned by the parser.
private struct Scanner {
    let bytes: [UInt8]
    let file: String
    var index = 0
    var line = 1

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
        // A UTF-8 byte-order mark, as Windows editors write.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    var location: SFZLocation { SFZLocation(file: file, line: line) }

    static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "_")
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0C }

    func peek(_ ahead: Int = 0) -> UInt8? { index + ahead < bytes.count ? bytes[index + ahead] : nil }

    func checkLines(limit: Int) throws(SFZError) {
        var start = 0
        var number = 1
        for position in bytes.indices where bytes[position] == 0x0A {
            if position - start > limit { break }
            start = position + 1
            number += 1
        }
        let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
        if end - start > limit {
            throw SFZError("\(file):\(number): the line is longer than \(limit) bytes; is this an SFZ file?")
        }
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A {
                line += 1
            } else if !Scanner.isSpace(byte) {
                return
            }
            index += 1
        }
    }

    mutating func skipLine() {
        while index < bytes.count, bytes[index] != 0x0A { index += 1 }
    }

    mutating func skipBlockComment() throws(SFZError) {
        let start = location
        index += 2
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/") {
                index += 2
                return
            }
            if bytes[index] == 0x0A { line += 1 }
            index += 1
        }
        throw SFZError("\(start): the comment /* is never closed; end it with */")
    }

    /// `<name>`, on one line.
    mutating func header() throws(SFZError) -> (name: String, location: SFZLocation) {
        let at = location
        index += 1
        let start = index
        while index < bytes.count, Scanner.isNameByte(bytes[index]) { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">"), index > start else {
            throw SFZError("\(at): a header is a name in angle brackets, like <region>")
        }
        let name = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        return (name, at)
    }

    /// `name=value` (spaces around `=` allowed); the value ends as the parser's documentation says.
    mutating func opcode() throws(SFZError) -> (name: String, value: String) {
        let at = location
        let start = index
        while index < bytes.count, Scanner.isNameByte(bytes[index]) || bytes[index] == UInt8(ascii: "$") {
            index += 1
        }
        let nameEnd = index
        while index < bytes.count, Scanner.isSpace(bytes[index]) { index += 1 }
        guard nameEnd > start, index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
            var end = start
            while end < bytes.count, end - start < 40, bytes[end] != 0x0A, !Scanner.isSpace(bytes[end]) { end += 1 }
            let text = String(decoding: bytes[start..<max(end, min(start + 1, bytes.count))], as: UTF8.self)
            throw SFZError("\(at): expected opcode=value or a <header>, found '\(text.clipped)'")
        }
        let name = String(decoding: bytes[start..<nameEnd], as: UTF8.self)
        index += 1
        while index < bytes.count, Scanner.isSpace(bytes[index]) { index += 1 }
        let valueStart = index
        var valueEnd = index
        scan: while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x0A, UInt8(ascii: "<"):
                break scan
            case UInt8(ascii: "/")
            where index + 1 < bytes.count
                && (bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*")):
                break scan
            case _ where Scanner.isSpace(byte):
                if startsOpcode(after: index) || startsDirective(after: index) { break scan }
                index += 1
            default:
                index += 1
                valueEnd = index
            }
        }
        return (name, String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self))
    }

    /// Whether whitespace at `position` is followed by `name=` (the next opcode).
    private func startsOpcode(after position: Int) -> Bool {
        var probe = position
        while probe < bytes.count, Scanner.isSpace(bytes[probe]) { probe += 1 }
        let start = probe
        while probe < bytes.count, Scanner.isNameByte(bytes[probe]) || bytes[probe] == UInt8(ascii: "$") {
            probe += 1
        }
        guard probe > start else { return false }
        while probe < bytes.count, Scanner.isSpace(bytes[probe]) { probe += 1 }
        return probe < bytes.count && bytes[probe] == UInt8(ascii: "=")
    }

    mutating func directiveWord() -> String {
        let start = index
        index += 1
        while index < bytes.count, Scanner.isNameByte(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func skipSpaces() {
        while index < bytes.count, Scanner.isSpace(bytes[index]) { index += 1 }
    }

    /// `$NAME value`: the value is one word, ending at whitespace, the end of the line or a comment (as ARIA
    /// and sfizz read it); what follows on the line is read as usual, so `#define $A 1 #define $B 2` and
    /// `<group> #define $VEL v1 lovel=1 #include "region.txt"` are two defines, and a define, an opcode and an
    /// include.
    mutating func defineBody() throws(SFZError) -> (name: String, value: String) {
        skipSpaces()
        let nameStart = index
        while index < bytes.count, bytes[index] != 0x0A, !Scanner.isSpace(bytes[index]) { index += 1 }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        skipSpaces()
        let valueStart = index
        while index < bytes.count, bytes[index] != 0x0A, !Scanner.isSpace(bytes[index]) {
            if bytes[index] == UInt8(ascii: "/"), index + 1 < bytes.count,
                bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*")
            {
                break
            }
            index += 1
        }
        return (name, String(decoding: bytes[valueStart..<index], as: UTF8.self))
    }

    /// Whether whitespace at `position` is followed by `#define` or `#include` (a directive after a value on
    /// the same line).
    private func startsDirective(after position: Int) -> Bool {
        var probe = position
        while probe < bytes.count, Scanner.isSpace(bytes[probe]) { probe += 1 }
        for word in ["#define", "#include"] {
            let end = probe + word.utf8.count
            guard end <= bytes.count, bytes[probe..<end].elementsEqual(word.utf8) else { continue }
            if end == bytes.count || Scanner.isSpace(bytes[end]) { return true }
        }
        return false
    }

    /// `"text"` on the current line.
    mutating func quoted() throws(SFZError) -> String {
        let at = location
        skipSpaces()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            throw SFZError("\(at): #include needs a file name in double quotes (#include \"common.sfz\")")
        }
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != 0x0A { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), index > start else {
            throw SFZError("\(at): #include's file name is not closed with \" on the same line")
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        return text
    }
}

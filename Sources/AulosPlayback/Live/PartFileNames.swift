/// Where each part's own recording goes, beside the master's: `take.wav` → `take.Piano.wav`,
/// `take.Bass.wav`, … (`--record-parts`, `aulos render --parts`). A part's name is made a safe file name
/// (letters, digits, `.`, `_` and `-`; anything else becomes `-`), and parts of the same name are numbered.
///
/// Threads: a pure function; any thread.
enum PartFileNames {
    static func paths(beside master: String, parts: [String]) -> [String] {
        let slash = master.lastIndex(of: "/").map { master.index(after: $0) } ?? master.startIndex
        let dot = master[slash...].lastIndex(of: ".") ?? master.endIndex
        let (stem, suffix) = (String(master[..<dot]), String(master[dot...]))
        var taken: Set<String> = []
        return parts.map { part in
            let safe = String(
                part.prefix(60).map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "-" })
            var name = safe.isEmpty || safe.allSatisfy({ $0 == "." }) ? "part" : safe
            var number = 2
            while taken.contains(name) {
                name = "\(safe)-\(number)"
                number += 1
            }
            taken.insert(name)
            return "\(stem).\(name)\(suffix)"
        }
    }
}

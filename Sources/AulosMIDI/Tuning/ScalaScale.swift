import AulosCore

#if canImport(Glibc)
import Glibc
#endif

/// A scale in the Scala `.scl` format (huygens-fokker.org/scala/scl_format.html): a description, then
/// the pitches of its degrees above the tonic — cents (a number with a period: `701.955`) or ratios
/// (`3/2`, `2`) — the last of them the period the scale repeats at (usually the octave, `2/1`).
///
/// Threads: a value.
public struct ScalaScale: Equatable, Sendable {
    public var description: String
    /// Degrees 1…N in cents above the tonic (degree 0, the tonic, is 0 and not listed); the last is the
    /// period.
    public var cents: [Double]

    /// The most degrees a scale may have (Scala's own scales have at most a few hundred).
    public static let maximumDegrees = 4096
    /// The largest `.scl` file read.
    public static let sizeLimit = 1 << 20

    /// Reads `text`; errors name the line (of `file`) and what is wrong.
    public init(text: String, file: String = "scale") throws(TuningError) {
        var lines = TuningLines(text: text)
        guard !text.allSatisfy(\.isWhitespace), let descriptionLine = lines.next(keepingEmpty: true) else {
            throw TuningError("\(file): empty; a .scl file starts with a description line, then the number of notes")
        }
        description = descriptionLine.text
        guard let countLine = lines.next() else {
            throw TuningError("\(file): no note count after the description (line \(descriptionLine.number))")
        }
        guard let count = Int(countLine.firstWord), count >= 0, count <= Self.maximumDegrees else {
            throw TuningError(
                "\(file):\(countLine.number): the number of notes must be 0…\(Self.maximumDegrees), "
                    + "not '\(countLine.firstWord)'")
        }
        var cents: [Double] = []
        cents.reserveCapacity(count)
        while cents.count < count {
            guard let line = lines.next() else {
                throw TuningError("\(file): \(count) notes announced, \(cents.count) found")
            }
            cents.append(try Self.pitch(line, file: file))
        }
        self.cents = cents
    }

    /// A pitch line's value in cents: "701.955" (cents), "3/2" or "2" (a ratio).
    static func pitch(_ line: TuningLines.Line, file: String) throws(TuningError) -> Double {
        let word = line.firstWord
        // The word is clipped in the message: a 900 KB line was echoed whole.
        let problem =
            "\(file):\(line.number): '\(word.clipped(40))' is not a pitch (cents like 701.955, or a ratio like 3/2)"
        let tooFar =
            "\(file):\(line.number): '\(word.clipped(40))' is more than ten octaves from the tonic; every note "
            + "tuned by it would be outside hearing"
        if word.contains(".") {
            guard let value = Double(word), value.isFinite else { throw TuningError(problem) }
            guard abs(value) <= maximumCents else { throw TuningError(tooFar) }
            return value
        }
        let parts = word.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let numerator = Double(parts[0]),
            let denominator = parts.count == 2 ? Double(parts[1]) : 1, numerator > 0, denominator > 0,
            numerator.isFinite, denominator.isFinite, !parts[0].contains("e"), !parts[0].contains("E")
        else {
            throw TuningError(problem + (word.hasPrefix("-") ? "; a ratio must be positive" : ""))
        }
        let cents = 1200 * log2(numerator / denominator)
        guard abs(cents) <= maximumCents else { throw TuningError(tooFar) }
        return cents
    }

    /// The farthest a degree may be from the tonic: ten octaves (a 10^30/1 ratio rendered silence, exit 0).
    static let maximumCents = 12_000.0

    /// The period in cents (the last degree; 1200 for a scale with no degrees, as Scala does).
    public var period: Double { cents.last ?? 1200 }
}

/// The lines of a Scala file that carry something: comments (`!`) skipped, each line's number kept for
/// errors.
///
/// Threads: a value.
struct TuningLines {
    struct Line {
        var number: Int
        var text: String
        /// The first word (what Scala reads; the rest of a line is a comment).
        var firstWord: String { String(text.split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") }
    }

    private var lines: [Substring]
    private var index = 0

    init(text: String) {
        lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
    }

    /// The next line that is not a comment (and, unless `keepingEmpty`, not blank), trimmed.
    mutating func next(keepingEmpty: Bool = false) -> Line? {
        while index < lines.count {
            defer { index += 1 }
            let raw = lines[index].trimmingCharacters(in: [" ", "\t", "\r"])
            if raw.hasPrefix("!") { continue }
            if raw.isEmpty && !keepingEmpty { continue }
            return Line(number: index + 1, text: raw)
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> String {
        var text = self
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

/// A tuning file that cannot be used: one line naming the file, the line and what is wrong.
public struct TuningError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

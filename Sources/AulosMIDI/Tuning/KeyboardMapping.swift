/// A Scala keyboard mapping (`.kbm`, huygens-fokker.org/scala/help.htm#mappings): which MIDI keys play,
/// which key plays the scale's tonic (the middle note), which key sounds at which frequency (the
/// reference), which scale degree is the formal octave, and — optionally — a pattern of degrees across
/// the keys of one repeat (an `x` leaves a key silent).
///
/// Threads: a value.
public struct KeyboardMapping: Equatable, Sendable {
    public var firstKey = 0
    public var lastKey = 127
    /// The key the scale's degree 0 falls on.
    public var middleKey = 60
    /// The key tuned to `referenceFrequency` exactly.
    public var referenceKey = 69
    public var referenceFrequency = 440.0
    /// The scale degree one repeat of the pattern spans (0: the scale's own period).
    public var octaveDegree = 0
    /// The degree each key of one repeat plays (nil: that key is silent). Empty: keys follow the scale
    /// degree by degree.
    public var pattern: [Int?] = []

    /// The mapping Scala uses without a `.kbm`: every key, the tonic on middle C, A above it at 440 Hz.
    public init() {}

    public static let sizeLimit = 1 << 20

    /// Reads `text`; errors name the line (of `file`) and what is wrong.
    public init(text: String, file: String = "keymap") throws(TuningError) {
        var lines = TuningLines(text: text)
        func number(_ what: String, in range: ClosedRange<Int>) throws(TuningError) -> Int {
            guard let line = lines.next() else { throw TuningError("\(file): ends before the \(what)") }
            guard let value = Int(line.firstWord), range.contains(value) else {
                throw TuningError(
                    "\(file):\(line.number): the \(what) must be \(range.lowerBound)…\(range.upperBound), "
                        + "not '\(line.firstWord)'")
            }
            return value
        }
        let size = try number("map size", in: 0...128)
        firstKey = try number("first MIDI note", in: 0...127)
        lastKey = try number("last MIDI note", in: firstKey...127)
        middleKey = try number("middle note", in: 0...127)
        referenceKey = try number("reference note", in: 0...127)
        guard let frequencyLine = lines.next() else {
            throw TuningError("\(file): ends before the reference frequency")
        }
        guard let frequency = Double(frequencyLine.firstWord), frequency > 0, frequency < 1e6 else {
            throw TuningError(
                "\(file):\(frequencyLine.number): the reference frequency must be a positive number of Hz, "
                    + "not '\(frequencyLine.firstWord)'")
        }
        referenceFrequency = frequency
        octaveDegree = try number("octave degree", in: 0...ScalaScale.maximumDegrees)
        for _ in 0..<size {
            // Scala allows the mapping to stop early: the missing keys are silent.
            guard let line = lines.next() else {
                pattern.append(nil)
                continue
            }
            let word = line.firstWord
            if word.lowercased() == "x" {
                pattern.append(nil)
            } else if let degree = Int(word), degree >= 0, degree <= ScalaScale.maximumDegrees {
                pattern.append(degree)
            } else {
                throw TuningError("\(file):\(line.number): a mapping entry is a scale degree or x, not '\(word)'")
            }
        }
    }
}

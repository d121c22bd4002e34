import AulosCore

#if canImport(Glibc)
import Glibc
#endif

/// What each of the 128 MIDI keys sounds: a pitch in MIDI note units (69 is A at 440 Hz, one unit a
/// 12-EDO semitone, fractions allowed), or nil for a key that is silent. The instruments play a key at
/// its pitch, with pitch bend and modulation on top.
///
/// Threads: a value.
public struct TuningTable: Equatable, Sendable {
    public var pitches: [Double?]

    /// Twelve-tone equal temperament at A = 440 Hz: key k plays pitch k.
    public static var equal: TuningTable { TuningTable(pitches: (0..<128).map { Double($0) }) }

    public init(pitches: [Double?]) {
        precondition(pitches.count == 128, "a tuning table has 128 keys")
        self.pitches = pitches
    }

    /// `scale` laid on the keys as `mapping` says (Scala's own arithmetic): each key's degree and repeat
    /// from the middle key, tuned so the reference key sounds the reference frequency.
    public init(scale: ScalaScale, mapping: KeyboardMapping = KeyboardMapping()) throws(TuningError) {
        guard let reference = Self.cents(of: mapping.referenceKey, scale: scale, mapping: mapping) else {
            throw TuningError(
                "the reference note \(mapping.referenceKey) plays no degree of the scale (its mapping is x)")
        }
        let offset = 69 + 12 * log2(mapping.referenceFrequency / 440) - reference / 100
        pitches = (0..<128).map { key in
            guard (mapping.firstKey...mapping.lastKey).contains(key),
                let cents = Self.cents(of: key, scale: scale, mapping: mapping)
            else { return nil }
            let pitch = offset + cents / 100
            // Beyond 0.06 Hz … 20 kHz × 8 nothing can sound: such a key is silent, not a runaway oscillator.
            return pitch > -120 && pitch < 200 ? pitch : nil
        }
    }

    /// Cents above the tonic for `key`, or nil where the mapping leaves it silent.
    static func cents(of key: Int, scale: ScalaScale, mapping: KeyboardMapping) -> Double? {
        let steps = key - mapping.middleKey
        if mapping.pattern.isEmpty {
            return degreeCents(steps, scale: scale)
        }
        let size = mapping.pattern.count
        let repeats = steps >= 0 ? steps / size : -((size - 1 - steps) / size)
        guard let degree = mapping.pattern[steps - repeats * size] else { return nil }
        let octave = mapping.octaveDegree == 0 ? scale.period : degreeCents(mapping.octaveDegree, scale: scale)
        return Double(repeats) * octave + degreeCents(degree, scale: scale)
    }

    /// Cents of scale degree `degree` (any integer: whole periods above or below the listed degrees).
    static func degreeCents(_ degree: Int, scale: ScalaScale) -> Double {
        let count = scale.cents.count
        guard count > 0 else { return Double(degree) * scale.period }
        let periods = degree >= 0 ? degree / count : -((count - 1 - degree) / count)
        let index = degree - periods * count
        return Double(periods) * scale.period + (index == 0 ? 0 : scale.cents[index - 1])
    }

    /// The frequency of `key` in Hz (nil: silent).
    public func frequency(of key: Int) -> Double? {
        pitches[key].map { 440 * exp2(($0 - 69) / 12) }
    }
}

extension TuningTable {
    /// The tuning a Scala scale file and an optional keyboard mapping file give (both read with a size
    /// limit; UTF-8, or Latin-1 as older Scala files are). Errors name the file and the line.
    public static func load(scale scalePath: String, keymap keymapPath: String? = nil) throws(TuningError)
        -> TuningTable
    {
        let scale = try ScalaScale(text: try text(of: scalePath, limit: ScalaScale.sizeLimit), file: scalePath)
        let mapping = try keymapPath.map { path throws(TuningError) in
            try KeyboardMapping(text: try text(of: path, limit: KeyboardMapping.sizeLimit), file: path)
        }
        do {
            return try TuningTable(scale: scale, mapping: mapping ?? KeyboardMapping())
        } catch {
            throw TuningError("\(keymapPath ?? scalePath): \(error.message)")
        }
    }

    private static func text(of path: String, limit: Int) throws(TuningError) -> String {
        let bytes: [UInt8]
        do { bytes = try FileContents.read(path, limit: limit) } catch { throw TuningError(error.message) }
        return String(validating: bytes, as: UTF8.self) ?? String(bytes.map { Character(Unicode.Scalar($0)) })
    }
}

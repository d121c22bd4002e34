import AulosCore
import Foundation

/// A named set of oscillator-synth parameter values, selectable by program number or name. Factory presets
/// are JSON files in `presets/synth/` (see presets/README.md):
/// `{"name": "Warm Pad", "program": 89, "parameters": {"cutoff": 1200, "osc1Waveform": "saw", …}}`, with an
/// optional `"bank"` (bank select MSB, 0…127; default 0). Program numbers follow General MIDI's instrument
/// families, so a General MIDI file finds a fitting sound.
public struct SynthPreset: Sendable, Equatable {
    public var name: String
    public var program: Int
    public var bank: Int
    public var values: [ParameterID: Float]

    public init(name: String, program: Int, bank: Int = 0, values: [ParameterID: Float]) {
        self.name = name
        self.program = program
        self.bank = bank
        self.values = values
    }

    /// The preset's number among the unit's factory presets: bank · 128 + program.
    public var number: Int { bank * 128 + program }

    /// Which preset (index into `presets`) answers each bank · 128 + program, −1 for none. In bank 0 a
    /// program without a preset of its own takes the nearest preset below it in its General MIDI family
    /// (programs in eights: pianos 0–7, chromatic percussion 8–15, …), else the family's first: General
    /// MIDI puts like next to like (Synth Strings 2 after Synth Strings 1, Distortion after Overdriven
    /// Guitar), so a file asking for "Electric Piano 2" gets the electric piano rather than nothing.
    public static func programTable(_ presets: [SynthPreset]) -> [Int16] {
        var table = [Int16](repeating: -1, count: 128 * 128)
        for (row, preset) in presets.enumerated() where table[preset.bank * 128 + preset.program] < 0 {
            table[preset.bank * 128 + preset.program] = Int16(row)
        }
        let own = Array(table[0..<128])
        for program in 0..<128 where own[program] < 0 {
            let family = program / 8 * 8
            let below = (family..<program).reversed().lazy.map { own[$0] }.first { $0 >= 0 }
            if let row = below ?? (program..<family + 8).lazy.map({ own[$0] }).first(where: { $0 >= 0 }) {
                table[program] = row
            }
        }
        return table
    }

    /// What the kernel loads: a row of values for each preset, then one for each bank-0 program that
    /// `SynthProgramLevels` trims (the preset it takes with its volume moved by the trim, within the
    /// volume's range, and the trim's velocity sensitivity); and which row answers each bank · 128 +
    /// program (−1: none).
    static func levelledRows(_ presets: [SynthPreset]) -> (values: [[Float]], table: [Int16]) {
        var table = programTable(presets)
        var values = presets.map(\.orderedValues)
        let volume = OscillatorSynthUnit.Parameter.volume
        let sensitivity = Int(OscillatorSynthUnit.Parameter.velocitySensitivity.rawValue)
        for program in 0..<128 where table[program] >= 0 {
            let row = Int(table[program])
            guard let trim = SynthProgramLevels.trim(program: program, preset: presets[row].name) else { continue }
            var levelled = values[row]
            let slot = Int(volume.rawValue)
            levelled[slot] = min(volume.info.maxValue, max(volume.info.minValue, levelled[slot] + trim.decibels))
            levelled[sensitivity] = min(1, max(0, trim.velocitySensitivity))
            table[program] = Int16(values.count)
            values.append(levelled)
        }
        return (values, table)
    }

    /// The file as JSON: a value is a number or, for indexed parameters, one of its value names.
    private struct File: Decodable {
        enum Value: Decodable {
            case number(Double)
            case name(String)
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let number = try? container.decode(Double.self) {
                    self = .number(number)
                } else {
                    self = .name(try container.decode(String.self))
                }
            }
        }
        var name: String
        var program: Int
        var bank: Int?
        var parameters: [String: Value]
    }

    /// The most a preset file may hold: a preset is a few dozen numbers.
    static let fileSizeLimit = 1 << 16

    /// Reads one preset file; every problem names the file and the key.
    public init(file path: String) throws(AudioUnitError) {
        let bytes: [UInt8]
        do { bytes = try FileContents.read(path, limit: Self.fileSizeLimit) } catch {
            throw AudioUnitError(.invalidFile, error.message)
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            throw AudioUnitError(.invalidFile, "\(path): missing \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw AudioUnitError(.invalidFile, "\(path): \"\(key)\" must be a number or a name")
        } catch {
            throw AudioUnitError(.invalidFile, "\(path): not a JSON preset object")
        }
        guard !file.name.isEmpty else { throw AudioUnitError(.invalidFile, "\(path): empty \"name\"") }
        guard (0...127).contains(file.program) else {
            throw AudioUnitError(.invalidFile, "\(path): \"program\" must be 0…127")
        }
        guard (0...127).contains(file.bank ?? 0) else {
            throw AudioUnitError(.invalidFile, "\(path): \"bank\" must be 0…127")
        }
        var values: [ParameterID: Float] = [:]
        for (key, raw) in file.parameters {
            guard let parameter = OscillatorSynthUnit.Parameter(key: key) else {
                throw AudioUnitError(.invalidFile, "\(path): unknown parameter \"\(key)\"")
            }
            let info = parameter.info
            let value: Float
            switch raw {
            case .name(let text):
                guard let index = info.valueNames.firstIndex(of: text.lowercased()) else {
                    let expected =
                        info.valueNames.isEmpty ? "a number" : "one of \(info.valueNames.joined(separator: ", "))"
                    throw AudioUnitError(.invalidFile, "\(path): \"\(key)\" is \"\(text)\", expected \(expected)")
                }
                value = Float(index)
            case .number(let number):
                value = Float(number)
            }
            guard value.isFinite, value >= info.minValue, value <= info.maxValue else {
                throw AudioUnitError(
                    .invalidFile, "\(path): \"\(key)\" = \(value) is outside \(info.minValue)…\(info.maxValue)")
            }
            values[info.id] = value
        }
        self.init(name: file.name, program: file.program, bank: file.bank ?? 0, values: values)
    }

    /// The full value list, in parameter order, with defaults for what the preset leaves out.
    var orderedValues: [Float] {
        OscillatorSynthUnit.Parameter.allCases.map { values[$0.id] ?? $0.info.defaultValue }
    }
}

/// Loads synth preset files from a folder. Where the factory presets are is the host's business (Aulos's
/// rig layer searches its data folders); a unit made without presets simply has none.
///
/// Threads: control side.
public enum SynthPresetLibrary {
    /// Loads every preset in a folder, failing on the first broken file.
    public static func load(from folder: String) throws(AudioUnitError) -> [SynthPreset] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw AudioUnitError(.invalidFile, "\(folder): cannot read the directory")
        }
        var presets: [SynthPreset] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            presets.append(try SynthPreset(file: folder + "/" + name))
        }
        return presets.sorted { $0.number < $1.number }
    }

    /// Loads every preset in a folder; a broken file is reported on stderr and skipped, so one bad file
    /// cannot take an instrument down.
    public static func loadSkippingBroken(from folder: String) -> [SynthPreset] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var presets: [SynthPreset] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            do {
                presets.append(try SynthPreset(file: folder + "/" + name))
            } catch {
                FileHandle.standardError.write(Data("aulos: warning: skipping preset: \(error.detail)\n".utf8))
            }
        }
        return presets.sorted { $0.number < $1.number }
    }
}

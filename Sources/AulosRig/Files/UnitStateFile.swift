import AulosCore
import Foundation

/// A unit's saved state as a JSON file (sorted keys: the same state always gives the same bytes).
///
/// Threads: control thread.
public enum UnitStateFile {
    public static func save(_ unit: AudioUnit, to path: String) throws(AudioUnitError) {
        let state = try unit.saveState()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(state) else {
            throw AudioUnitError(.invalidFile, "\(path): cannot encode the unit state")
        }
        do { try FileContents.replace(path, with: Array(data)) } catch {
            throw AudioUnitError(.invalidFile, error.message)
        }
    }

    /// The most a state file may hold: a unit's parameters and properties are a few kilobytes.
    static let sizeLimit = 1 << 20

    public static func load(_ path: String) throws(AudioUnitError) -> UnitClassInfo {
        let bytes: [UInt8]
        do { bytes = try FileContents.read(path, limit: sizeLimit) } catch {
            throw AudioUnitError(.invalidFile, error.message)
        }
        do {
            return try JSONDecoder().decode(UnitClassInfo.self, from: Data(bytes))
        } catch {
            throw AudioUnitError(.invalidFile, "\(path): not a unit state file")
        }
    }

    public static func restore(_ unit: AudioUnit, from path: String) throws(AudioUnitError) {
        try unit.restoreState(try load(path))
    }
}

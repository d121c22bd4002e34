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
        guard let data = try? encoder.encode(state), FileManager.default.createFile(atPath: path, contents: data) else {
            throw AudioUnitError(.invalidFile, "\(path): cannot write the unit state")
        }
    }

    public static func load(_ path: String) throws(AudioUnitError) -> UnitClassInfo {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AudioUnitError(.invalidFile, "\(path): cannot read the unit state")
        }
        do {
            return try JSONDecoder().decode(UnitClassInfo.self, from: data)
        } catch {
            throw AudioUnitError(.invalidFile, "\(path): not a unit state file")
        }
    }

    public static func restore(_ unit: AudioUnit, from path: String) throws(AudioUnitError) {
        try unit.restoreState(try load(path))
    }
}

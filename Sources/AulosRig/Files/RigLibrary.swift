import Foundation

/// The factory rigs: `rigs/*.yaml` in the first preset folder that has any (`SearchPaths.presetFolders`).
///
/// Threads: control side.
public enum RigLibrary {
    public struct Entry: Sendable {
        public var path: String
        public var name: String
        public var parts: Int
        /// More than one: a set file (rigs recalled by program change).
        public var rigs: Int
    }

    public static var factory: [Entry] {
        for directory in SearchPaths.presetFolders {
            let folder = directory + "/rigs"
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
                $0.hasSuffix(".yaml")
            }
            guard !names.isEmpty else { continue }
            return names.sorted().compactMap { name in
                guard let set = try? RigSet.load(folder + "/" + name) else { return nil }
                return Entry(
                    path: folder + "/" + name, name: set.name, parts: set.entries.reduce(0) { $0 + $1.rig.parts.count },
                    rigs: set.entries.count)
            }
        }
        return []
    }
}

import AulosCore
import AulosLV2

/// What a playing rig's LV2 plugins hold now, written back into rigs: the rig file "save" keeps a
/// plugin's preset choice, its parameters that differ from their defaults and its own state, so loading
/// the file plays the same sound. And the control thread's part of program changes: an LV2 plugin with
/// presets passes the program changes it receives up from the render thread, and they are applied here.
///
/// Threads: control thread.
extension PlaybackRig {
    /// Rig `index` of the set as it plays now: its LV2 parts' preset, parameters and state taken from their
    /// plugins (other parts as loaded).
    public func savedRig(_ index: Int = 0) throws -> Rig {
        var rig = set.entries[index].rig
        for (partIndex, loaded) in parts.filter({ $0.rigIndex == index }).enumerated() {
            guard let plugin = loaded.instrument as? LV2Unit else { continue }
            try Self.takeLiveState(of: plugin, into: &rig.parts[partIndex])
        }
        return rig
    }

    /// Program changes LV2 plugins received since the last call select their presets (from the next slice).
    /// Called by the live session's status tick and by the offline render after each slice.
    public func applyPluginProgramChanges() {
        // Every plugin, effects too: the call also frees an instance the render thread let go of.
        for plugin in lv2Plugins { plugin.applyProgramRequests() }
    }
}

import AulosCore
import AulosMIDI
import AulosUnits

/// A rig's snapshots (`snapshots:`) recalled while it plays: each value set as `aulos set` sets it — a
/// parameter glides to it over its own smoothing time, so nothing clicks — and each listed channel sent its
/// bank and program. Nothing is built or torn down.
///
/// Threads: control thread.
extension PlaybackRig {
    /// The number `text` stands for as `target`'s value: a number, or an EQ preset's name for an EQ target.
    static func snapshotValue(_ text: String, for target: ControlTarget) -> Float? {
        if let number = Float(text), number.isFinite { return number }
        if case .eqPreset = target.kind { return IPodEQUnit.curveIndex(text).map(Float.init) }
        return nil
    }

    /// Each value of each rig's snapshots resolved in its rig and within its target's range: a snapshot
    /// naming what the rig does not have stops the rig from loading, as a control does.
    func checkSnapshots() throws(RigError) {
        for (index, entry) in set.entries.enumerated() {
            for snapshot in entry.rig.snapshots {
                for (name, text) in snapshot.values {
                    do throws(RigError) {
                        _ = try resolvedValue(name, text, inRig: index)
                    } catch {
                        throw RigError("\(snapshot.source.prefix)snapshot '\(snapshot.name)': \(error.message)")
                    }
                }
            }
        }
    }

    private func resolvedValue(_ name: String, _ text: String, inRig index: Int) throws(RigError)
        -> (ControlTarget, Float)
    {
        let target = try target(name, inRig: index)
        guard let value = Self.snapshotValue(text, for: target), target.range.contains(value) else {
            let range = "\(target.range.lowerBound.clean)…\(target.range.upperBound.clean)"
            throw RigError("\(target.name) takes \(range), not '\(text.clipped(40))'")
        }
        return (target, value)
    }

    /// Recalls the snapshot of rig `rigIndex` named `choice` (or numbered, from 1): its values set, its
    /// programs handed to `send` (a part's index and the messages for it). Returns the snapshot's name.
    public func recall(_ choice: String, ofRig rigIndex: Int, send: (Int, [ChannelMessage]) -> Void)
        throws(RigError) -> String
    {
        let snapshots = set.entries[rigIndex].rig.snapshots
        guard
            let index = snapshots.firstIndex(where: { $0.name.lowercased() == choice.lowercased() })
                ?? Int(choice).flatMap({ snapshots.indices.contains($0 - 1) ? $0 - 1 : nil })
        else {
            let names = snapshots.map(\.name)
            throw RigError(
                "no snapshot '\(choice.clipped(40))' in rig \(set.entries[rigIndex].rig.name) ("
                    + (names.isEmpty ? "it has none" : "it has " + names.joined(separator: ", ")) + ")")
        }
        try setValues(ofSnapshot: index, ofRig: rigIndex)
        for (part, messages) in programMessages(ofSnapshot: index, ofRig: rigIndex) { send(part, messages) }
        return snapshots[index].name
    }

    /// Sets the values of snapshot `index` of rig `rigIndex` (each glides as `aulos set` makes it).
    public func setValues(ofSnapshot index: Int, ofRig rigIndex: Int) throws(RigError) {
        for (name, text) in set.entries[rigIndex].rig.snapshots[index].values {
            let (target, value) = try resolvedValue(name, text, inRig: rigIndex)
            do { try target.apply(value) } catch { throw RigError(error.detail) }
        }
    }

    /// The bank selects and program changes snapshot `index` of rig `rigIndex` sends, by part index.
    public func programMessages(ofSnapshot index: Int, ofRig rigIndex: Int) -> [(part: Int, [ChannelMessage])] {
        let snapshot = set.entries[rigIndex].rig.snapshots[index]
        var sent: [(part: Int, [ChannelMessage])] = []
        for (name, programs) in snapshot.programs.sorted(by: { $0.key < $1.key }) {
            guard let part = parts.firstIndex(where: { $0.rigIndex == rigIndex && $0.part.name == name }) else {
                continue
            }
            for (channel, chosen) in programs.sorted(by: { $0.key < $1.key }) {
                sent.append((part, chosen.messages(onChannel: channel)))
            }
        }
        return sent
    }
}

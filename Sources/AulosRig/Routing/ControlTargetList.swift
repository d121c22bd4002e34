import AulosCore

extension PlaybackRig {
    /// A group of targets a panel shows together: a part, a return, or the output.
    public struct TargetGroup {
        public enum Kind: String { case part, `return`, output }
        public var kind: Kind
        public var name: String
        /// A part's MIDI channels and instrument (synth, sampler, lv2); empty for returns and the output.
        public var channels: [Int] = []
        public var instrument: String?
        public var targets: [ControlTarget]
    }

    /// Every target of rig `rigIndex`, grouped as a panel shows them: its parts, the returns, the output.
    /// Each is resolved by name exactly as `aulos set` resolves it, so what a panel lists it can set.
    ///
    /// Threads: control thread.
    public func targetGroups(ofRig rigIndex: Int) -> [TargetGroup] {
        func resolved(_ names: [String], of owner: String) -> [ControlTarget] {
            var seen = Set<String>()
            return names.compactMap { name in
                guard let target = try? target("\(owner).\(name)", preferring: rigIndex),
                    seen.insert(target.name).inserted
                else { return nil }
                return target
            }
        }
        var groups = parts.filter { $0.rigIndex == rigIndex }.map { loaded in
            TargetGroup(
                kind: .part, name: loaded.part.name, channels: loaded.part.channels,
                instrument: loaded.part.instrument.rawValue,
                targets: resolved(ControlTarget.parameterNames(of: loaded, in: self), of: loaded.part.name))
        }
        groups += returns(ofRig: rigIndex).map { entry in
            TargetGroup(
                kind: .return, name: entry.bus.name,
                targets: resolved(["level"] + ControlTarget.effectParameterNames(entry.units), of: entry.bus.name))
        }
        groups.append(
            TargetGroup(kind: .output, name: "output", targets: resolved(["volume", "eq"], of: "output")))
        return groups
    }

    /// The set's returns that rig `rigIndex` names (a set builds one return per name, shared by the rigs
    /// that name it): the ones its parts can send to and a panel shows with it.
    public func returns(ofRig rigIndex: Int) -> [(bus: ReturnBus, units: [AudioUnit])] {
        let names = Set(set.entries[rigIndex].rig.returns.map(\.name))
        return returns.filter { names.contains($0.bus.name) }
    }
}

import AulosCore
import AulosRig
import AulosUnits
import Synchronization

/// The playing rig's control targets, each resolved once (by name, for the rig active when it was asked)
/// and kept until the rig is replaced: a request names its target in text, and walking every part's
/// parameters for each of a thousand OSC messages a second is work done again for nothing.
///
/// It also lets a parameter change skip the control tick, as a mapped controller does: a `set` whose target
/// has been resolved before, and is a parameter, is one atomic store (`ControlTarget.apply`), safe on the
/// OSC thread or a panel task; anything else (a first use, an EQ preset, a rig switch) goes to the control
/// thread.
///
/// Threads: `attach`, `detach` and `resolve` on the control thread; `setAtOnce` on any thread. The cache is
/// behind a mutex; the MIDI path's lock is taken apart from it, never inside it.
final class ControlTargets: Sendable {
    private struct Key: Hashable {
        let activeRig: Int
        let name: String
    }

    private struct State: @unchecked Sendable {
        var midi: LiveMIDIPath?
        var resolved: [Key: ControlTarget] = [:]
    }

    private let state = Mutex(State())

    /// Serves the rig `midi` plays, from an empty cache. Control thread.
    func attach(_ midi: LiveMIDIPath) { state.withLock { $0 = State(midi: midi) } }

    /// Forgets every target (the rig is being replaced). Control thread.
    func detach() { state.withLock { $0 = State() } }

    /// Targets resolved so far (tests).
    var count: Int { state.withLock { $0.resolved.count } }

    /// Names ignore case, spaces, '-' and '_', as `ControlTarget` reads them.
    private static func key(_ name: String, activeRig: Int) -> Key {
        Key(activeRig: activeRig, name: String(name.lowercased().filter { $0 != " " && $0 != "-" && $0 != "_" }))
    }

    /// `name` in `rig`, parts of rig `activeRig` first: from the cache, or resolved and kept. Control thread.
    func resolve(_ name: String, in rig: PlaybackRig, activeRig: Int) throws(RigError) -> ControlTarget {
        let key = Self.key(name, activeRig: activeRig)
        if let target = state.withLock({ $0.resolved[key] }) { return target }
        // The playing rig's parts only: `set Bass.volume` where the rig playing has no Bass must not quietly
        // move another rig's.
        let target = try rig.target(name, inRig: activeRig)
        state.withLock { if $0.midi != nil { $0.resolved[key] = target } }
        return target
    }

    /// Carries out a `set` of a parameter resolved before, here and now; nil when the request must go to the
    /// control thread instead. Any thread.
    func setAtOnce(_ request: ControlRequest) -> ControlReply? {
        guard case .set(let name, let text) = request, let midi = state.withLock({ $0.midi }),
            let activeRig = midi.activeRig,
            let target = state.withLock({ $0.resolved[Self.key(name, activeRig: activeRig)] }),
            case .parameter = target.kind
        else { return nil }
        return Self.set(target, to: text)
    }

    /// Checks `text` against `target` and sets it: what `set` answers.
    static func set(_ target: ControlTarget, to text: ControlValue) -> ControlReply {
        var value = text.number
        if value == nil, case .eqPreset = target.kind { value = IPodEQUnit.curveIndex(text.text).map(Float.init) }
        guard let value else { return .failure("'\(text.text)' is not a value for \(target.name)") }
        guard target.range.contains(value) else {
            return .failure(
                "\(target.name) takes \(target.range.lowerBound.clean)…\(target.range.upperBound.clean), not "
                    + text.text)
        }
        do {
            try target.apply(value)
        } catch {
            return .failure(error.detail)
        }
        var done = ControlReply.Done()
        done.target = target.name
        done.value = reported(value, of: target)
        return .done(done)
    }

    /// A value as a reply shows it: an EQ curve by its name (`output.eq = Rock`, not its index 16).
    static func reported(_ value: Float, of target: ControlTarget) -> ControlReply.Value {
        if case .eqPreset = target.kind, IPodEQUnit.curves.indices.contains(Int(value)) {
            return .text(IPodEQUnit.curves[Int(value)].name)
        }
        return .number(value)
    }
}

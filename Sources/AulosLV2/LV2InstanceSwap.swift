import AulosCore
import CLilv
import Synchronization

/// A plugin instance as the render thread runs it: the instance and its worker's shared state.
struct LV2LiveInstance {
    let instance: UnsafeMutablePointer<LilvInstance>
    let worker: UnsafeMutablePointer<LV2Worker.Shared>
}

/// How a new instance reaches the render thread — a plugin's state restored while it plays, when the
/// plugin does not declare `state:threadSafeRestore` (LV2 then forbids restore() beside run()): the
/// control thread makes a second instance, restores the state into it and activates it, then publishes
/// it here (`pending`); at the start of its next slice the render thread makes it `current` and hands the
/// old one back (`retired`), which the control thread frees later. Like a render plan: one atomic swap,
/// freed off the render thread.
///
/// Threads: `current` is the render thread's (the control thread reads it only before rendering starts
/// and after it ends); `pending` and `retired` pass between the two.
struct LV2InstanceSlot: ~Copyable {
    var current: UnsafeMutablePointer<LV2LiveInstance>
    let pending = Atomic<UnsafeMutableRawPointer?>(nil)
    let retired = Atomic<UnsafeMutableRawPointer?>(nil)

    init(current: UnsafeMutablePointer<LV2LiveInstance>) { self.current = current }

    /// Render thread, at a slice's start: takes a published instance, and retires the one it replaces.
    @_noAllocation @_noLocks
    mutating func adoptPending() {
        guard let next = pending.exchange(nil, ordering: .acquiring) else { return }
        let old = current
        current = next.assumingMemoryBound(to: LV2LiveInstance.self)
        retired.store(UnsafeMutableRawPointer(old), ordering: .releasing)
    }
}

/// One instance the control side made, with what it must keep alive and free: its features (the worker
/// thread among them) and the live record the render thread sees.
///
/// Threads: control thread.
final class LV2InstanceRecord {
    let live: UnsafeMutablePointer<LV2LiveInstance>
    let features: LV2InstanceFeatures

    init(instance: UnsafeMutablePointer<LilvInstance>, features: LV2InstanceFeatures) {
        self.features = features
        live = .allocate(capacity: 1)
        live.initialize(to: LV2LiveInstance(instance: instance, worker: features.worker.shared))
    }

    var instance: UnsafeMutablePointer<LilvInstance> { live.pointee.instance }

    /// Deactivates and frees the instance, its worker thread stopped first (work() uses the instance).
    func free() {
        // A plugin that crashes while being freed (Debian's padthv1 does) is named by the crash report.
        aulos_crash_report_set_activity("freeing LV2 plugin \(features.pluginName)")
        defer { aulos_crash_report_set_activity(nil) }
        lilv_instance_deactivate(instance)
        features.worker.stop()
        lilv_instance_free(instance)
        live.deallocate()
    }
}

/// The control side of the slot: every instance made and not yet freed, by its live record.
///
/// Threads: control thread.
final class LV2InstanceSet {
    let slot: UnsafeMutablePointer<LV2InstanceSlot>
    private var records: [UnsafeMutableRawPointer: LV2InstanceRecord] = [:]
    /// The instance made last: the one whose state is the plugin's now (running, or about to).
    private(set) var newest: LV2InstanceRecord

    init(first: LV2InstanceRecord) {
        slot = .allocate(capacity: 1)
        slot.initialize(to: LV2InstanceSlot(current: first.live))
        records[UnsafeMutableRawPointer(first.live)] = first
        newest = first
    }

    /// Hands `record` to the render thread for its next slice. A record published before and never taken
    /// is freed at once (the render thread never saw it); one it retired since is freed too.
    func publish(_ record: LV2InstanceRecord) {
        collectRetired()
        records[UnsafeMutableRawPointer(record.live)] = record
        newest = record
        if let untaken = slot.pointee.pending.exchange(
            UnsafeMutableRawPointer(record.live), ordering: .acquiringAndReleasing)
        {
            records.removeValue(forKey: untaken)?.free()
        }
    }

    /// Instances made and not yet freed (1 while nothing is changing hands).
    var count: Int { records.count }

    /// Frees the instance the render thread last let go of, if any.
    func collectRetired() {
        guard let old = slot.pointee.retired.exchange(nil, ordering: .acquiring) else { return }
        records.removeValue(forKey: old)?.free()
    }

    /// Everything freed (the render thread has let go of the kernel: uninitialize, dispose).
    func freeAll() {
        for record in records.values { record.free() }
        records.removeAll()
        slot.deinitialize(count: 1)
        slot.deallocate()
    }
}

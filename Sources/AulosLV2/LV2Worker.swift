import AulosRealtime
import CLV2Log
import CLilv

#if canImport(Glibc)
import Glibc
#endif

/// The host side of LV2's worker (`worker:schedule`): a plugin's non-real-time work — loading a sample,
/// building a reverb's tables — done on a thread of its own, with the results handed back on the render
/// thread after `run()`.
///
/// - From `run()` (the render thread), `schedule` copies the request into a lock-free ring and wakes the
///   worker thread (`sem_post`: no lock, no allocation); the thread calls the plugin's `work()`.
/// - `work()`'s responses go into a second ring; `LV2Kernel` calls `deliverResponses` after each
///   `run()`, which hands them to the plugin's `work_response()` and then calls `end_run()`.
/// - Scheduled from any other thread (during instantiation or a state restore on the control thread),
///   the work is done at once on that thread, as the specification allows; a mutex keeps it from running
///   beside the worker thread's `work()` (the real-time render thread never takes it).
/// - Rendering offline (`synchronous`), work scheduled from `run()` is done at once too, like a DAW's
///   export: a file rendered twice is the same file.
///
/// Threads: created and stopped on the control thread; `schedule` from the render thread (or the control
/// thread); the worker thread runs `work()`. The state the callbacks share lives in unmanaged memory
/// (`Shared`), so the render thread touches no reference-counted object.
final class LV2Worker: @unchecked Sendable {
    struct Shared {
        var requests: SPSCByteRing
        var responses: SPSCByteRing
        var wake = sem_t()
        var lock = pthread_mutex_t()
        var exit = false
        var interface: UnsafePointer<LV2_Worker_Interface>?
        var handle: LV2_Handle?
        /// Where a request is copied for `work()` (worker thread) and a response for `work_response()`
        /// (render thread): messages are at most `messageCapacity` bytes.
        var requestScratch: UnsafeMutableRawPointer
        var responseScratch: UnsafeMutableRawPointer
        /// Requests the render thread could not queue (ring full), and responses dropped likewise.
        var droppedRequests = 0
        /// Jobs the worker thread has done (written and read under `lock`).
        var jobsOnThread = 0
        /// Rendering offline: work scheduled from run() is done at once, on the render thread, so a render
        /// does not depend on how fast the worker thread happens to be (bit-for-bit repeatable files).
        var synchronous = false
    }
    static var messageCapacity: Int { 16_384 }

    let shared: UnsafeMutablePointer<Shared>
    /// The `LV2_Worker_Schedule` struct the feature points at.
    let schedule: UnsafeMutablePointer<LV2_Worker_Schedule>
    private var thread: pthread_t?

    init() {
        shared = .allocate(capacity: 1)
        shared.initialize(
            to: Shared(
                requests: SPSCByteRing(minimumCapacity: 4 * Self.messageCapacity),
                responses: SPSCByteRing(minimumCapacity: 4 * Self.messageCapacity),
                requestScratch: .allocate(byteCount: Self.messageCapacity, alignment: 8),
                responseScratch: .allocate(byteCount: Self.messageCapacity, alignment: 8)))
        sem_init(&shared.pointee.wake, 0, 0)
        pthread_mutex_init(&shared.pointee.lock, nil)
        schedule = .allocate(capacity: 1)
        schedule.initialize(
            to: LV2_Worker_Schedule(handle: UnsafeMutableRawPointer(shared), schedule_work: LV2Worker.scheduleWork))
    }

    /// Starts the worker thread for `instance`, once it exists (its worker interface is known only after
    /// instantiation). A plugin without the interface gets no thread; its schedule calls fail.
    func start(instance: UnsafeMutablePointer<LilvInstance>) {
        guard let data = lilv_instance_get_extension_data(instance, LV2URI.workerInterface) else { return }
        start(
            interface: data.assumingMemoryBound(to: LV2_Worker_Interface.self),
            handle: lilv_instance_get_handle(instance))
    }

    /// Starts the thread for a plugin's worker `interface` and instance `handle`.
    func start(interface: UnsafePointer<LV2_Worker_Interface>, handle: LV2_Handle?) {
        shared.pointee.interface = interface
        shared.pointee.handle = handle
        var created: pthread_t = 0
        if pthread_create(&created, nil, LV2Worker.threadBody, UnsafeMutableRawPointer(shared)) == 0 {
            thread = created
        }
    }

    /// Jobs the worker thread has done so far (control thread; diagnostics and tests).
    var jobsOnThread: Int {
        pthread_mutex_lock(&shared.pointee.lock)
        defer { pthread_mutex_unlock(&shared.pointee.lock) }
        return shared.pointee.jobsOnThread
    }

    /// Stops the thread (before the instance is freed: `work()` uses it) and frees everything.
    func stop() {
        if let thread {
            pthread_mutex_lock(&shared.pointee.lock)
            shared.pointee.exit = true
            pthread_mutex_unlock(&shared.pointee.lock)
            sem_post(&shared.pointee.wake)
            pthread_join(thread, nil)
            self.thread = nil
        }
        shared.pointee.interface = nil
    }

    deinit {
        stop()
        sem_destroy(&shared.pointee.wake)
        pthread_mutex_destroy(&shared.pointee.lock)
        shared.pointee.requests.deallocate()
        shared.pointee.responses.deallocate()
        shared.pointee.requestScratch.deallocate()
        shared.pointee.responseScratch.deallocate()
        shared.deinitialize(count: 1)
        shared.deallocate()
        schedule.deallocate()
    }

    /// Render thread, after `run()`: every response so far to `work_response()`, then `end_run()`.
    @_noAllocation @_noLocks
    static func deliverResponses(_ shared: UnsafeMutablePointer<Shared>) {
        guard let interface = shared.pointee.interface else { return }
        let handle = shared.pointee.handle
        let scratch = shared.pointee.responseScratch
        let responses = shared.pointee.responses
        while let size = responses.read(into: scratch, scratchSize: messageCapacity) {
            if size >= 0, let respond = interface.pointee.work_response {
                _unsafePerformance { _ = respond(handle, UInt32(size), scratch) }
            }
        }
        if let endRun = interface.pointee.end_run { _unsafePerformance { _ = endRun(handle) } }
    }

    private static let scheduleWork:
        @convention(c) (LV2_Worker_Schedule_Handle?, UInt32, UnsafeRawPointer?) -> LV2_Worker_Status = {
            handle, size, data in
            guard let handle, Int(size) <= LV2Worker.messageCapacity else { return LV2_WORKER_ERR_NO_SPACE }
            let shared = handle.assumingMemoryBound(to: Shared.self)
            guard shared.pointee.interface != nil else { return LV2_WORKER_ERR_UNKNOWN }
            if aulos_lv2_log_on_render_thread() != 0 && !shared.pointee.synchronous {
                guard shared.pointee.requests.write(data, size: Int(size)) else {
                    shared.pointee.droppedRequests += 1
                    return LV2_WORKER_ERR_NO_SPACE
                }
                sem_post(&shared.pointee.wake)
                return LV2_WORKER_SUCCESS
            }
            // Not the render thread (or rendering offline): the work is done here and now.
            pthread_mutex_lock(&shared.pointee.lock)
            defer { pthread_mutex_unlock(&shared.pointee.lock) }
            guard let interface = shared.pointee.interface, let work = interface.pointee.work else {
                return LV2_WORKER_ERR_UNKNOWN
            }
            return work(shared.pointee.handle, LV2Worker.respond, handle, size, data)
        }

    /// `work()`'s answer: queued for the render thread (called under the lock, so one producer at a time).
    private static let respond:
        @convention(c) (LV2_Worker_Respond_Handle?, UInt32, UnsafeRawPointer?) -> LV2_Worker_Status = {
            handle, size, data in
            guard let handle, Int(size) <= LV2Worker.messageCapacity else { return LV2_WORKER_ERR_NO_SPACE }
            let shared = handle.assumingMemoryBound(to: Shared.self)
            return shared.pointee.responses.write(data, size: Int(size)) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
        }

    private static let threadBody: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = {
        argument in
        let shared = argument!.assumingMemoryBound(to: Shared.self)
        while true {
            sem_wait(&shared.pointee.wake)
            pthread_mutex_lock(&shared.pointee.lock)
            if shared.pointee.exit {
                pthread_mutex_unlock(&shared.pointee.lock)
                return nil
            }
            let scratch = shared.pointee.requestScratch
            while let size = shared.pointee.requests.read(into: scratch, scratchSize: LV2Worker.messageCapacity) {
                guard size >= 0, let work = shared.pointee.interface?.pointee.work else { continue }
                _ = work(
                    shared.pointee.handle, LV2Worker.respond, UnsafeMutableRawPointer(shared), UInt32(size), scratch)
                shared.pointee.jobsOnThread += 1
            }
            pthread_mutex_unlock(&shared.pointee.lock)
        }
    }
}

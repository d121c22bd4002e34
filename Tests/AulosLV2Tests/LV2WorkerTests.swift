import AulosTestSupport
import CLV2Log
import CLilv
import Foundation
import Testing

@testable import AulosLV2

/// The worker's two paths, driven through a worker interface written here (the installed plugins schedule
/// only on patch messages, which Aulos does not send): scheduled from run() the work happens on the
/// worker's thread and the answer comes back after the run, without an allocation on the render side;
/// scheduled from the control thread it happens at once.
@Suite struct LV2WorkerTests {
    /// What the test plugin saw: the thread work() ran on, the answers delivered, end_run calls.
    struct Record {
        var workThread: pthread_t = 0
        var worked = 0
        /// The answers delivered, one after another (room for 64 bytes: storing them allocates nothing,
        /// so the render side's count is the host's alone).
        var answerBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
        var answerCount = 0
        var endRuns = 0
        var answers: [UInt8] { Array(UnsafeBufferPointer(start: answerBytes, count: answerCount)) }
    }

    static func makeInterface() -> UnsafeMutablePointer<LV2_Worker_Interface> {
        let interface = UnsafeMutablePointer<LV2_Worker_Interface>.allocate(capacity: 1)
        interface.initialize(
            to: LV2_Worker_Interface(
                work: { handle, respond, respondHandle, size, data in
                    let record = handle!.assumingMemoryBound(to: Record.self)
                    // The answer: each byte of the request plus one.
                    var answer = Array(UnsafeRawBufferPointer(start: data, count: Int(size))).map { $0 &+ 1 }
                    record.pointee.workThread = pthread_self()
                    let status = respond!(respondHandle, size, &answer)
                    record.pointee.worked += 1
                    return status
                },
                work_response: { handle, size, data in
                    let record = handle!.assumingMemoryBound(to: Record.self)
                    let count = min(Int(size), 64 - record.pointee.answerCount)
                    (UnsafeMutableRawPointer(record.pointee.answerBytes) + record.pointee.answerCount)
                        .copyMemory(from: data!, byteCount: count)
                    record.pointee.answerCount += count
                    return LV2_WORKER_SUCCESS
                },
                end_run: { handle in
                    handle!.assumingMemoryBound(to: Record.self).pointee.endRuns += 1
                    return LV2_WORKER_SUCCESS
                }))
        return interface
    }

    /// A worker started for the test plugin, handed to `body` with the plugin's record; all freed after.
    static func withWorker(_ body: (LV2Worker, UnsafeMutablePointer<Record>) throws -> Void) rethrows {
        let record = UnsafeMutablePointer<Record>.allocate(capacity: 1)
        record.initialize(to: Record())
        let interface = makeInterface()
        let worker = LV2Worker()
        worker.start(interface: interface, handle: UnsafeMutableRawPointer(record))
        defer {
            worker.stop()
            interface.deallocate()
            record.pointee.answerBytes.deallocate()
            record.deallocate()
        }
        try body(worker, record)
    }

    @Test func workScheduledFromRunIsDoneOnTheWorkersThreadAndAnsweredAfterTheRun() throws {
        try Self.withWorker { worker, record in
            let schedule = worker.schedule.pointee
            var request: [UInt8] = [1, 2, 3, 250]
            var tally = AllocationTally()
            let status = tally.count {
                aulos_lv2_log_set_render_thread(1)
                defer { aulos_lv2_log_set_render_thread(0) }
                return schedule.schedule_work(schedule.handle, 4, &request)
            }
            #expect(status == LV2_WORKER_SUCCESS)
            Wait.until(seconds: 2) { record.pointee.worked != 0 }
            #expect(record.pointee.worked == 1)
            #expect(pthread_equal(record.pointee.workThread, pthread_self()) == 0, "work() ran on the render thread")
            #expect(record.pointee.answers.isEmpty, "answered before the run ended")
            tally.count { LV2Worker.deliverResponses(worker.shared) }
            try expectNoAllocations(tally, "scheduling and delivering from the render thread")
            #expect(record.pointee.answers == [2, 3, 4, 251])
            #expect(record.pointee.endRuns == 1)
        }
    }

    @Test func workScheduledFromTheControlThreadIsDoneAtOnce() {
        Self.withWorker { worker, record in
            let schedule = worker.schedule.pointee
            var request: [UInt8] = [9]
            #expect(schedule.schedule_work(schedule.handle, 1, &request) == LV2_WORKER_SUCCESS)
            #expect(record.pointee.worked == 1)
            #expect(pthread_equal(record.pointee.workThread, pthread_self()) != 0)
            LV2Worker.deliverResponses(worker.shared)
            #expect(record.pointee.answers == [10])
        }
    }
}

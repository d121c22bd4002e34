import AulosCore
import AulosMIDI
import AulosRealtime
import Glibc
import Synchronization

/// JACK MIDI's way off the process thread: channel messages are routed and played inside the process cycle
/// (`JACKProcess.readMIDI`), but system messages (clock, transport, SysEx) are played by the receiver,
/// which allocates, and every message goes to its activity log. The process callback copies each cycle's
/// events into a lock-free ring and posts a semaphore; this thread hands them on: system messages as
/// arrivals, channel messages as heard.
///
/// Threads: `start`/`stop` on the control thread; `run` on its own thread; the ring's producer is JACK's
/// process thread.
final class JACKMIDIReader: @unchecked Sendable {
    /// Every JACK MIDI message comes from this source (one port; its notes are released when it stops).
    static let source = MIDISource(rawValue: JACKProcess.midiSource)

    let ring: SPSCByteRing
    let wake: UnsafeMutablePointer<sem_t>
    private let receiver: any MIDIReceiver
    private var thread = pthread_t()
    /// Set by `start`, cleared by `stop` (control thread); read by the thread between waits.
    private let running = Atomic<Bool>(false)
    private var parser = MIDIParser(maximumSysExLength: JACKProcess.largestMIDIMessage)
    private let scratch = UnsafeMutableRawPointer.allocate(byteCount: 8 + JACKProcess.largestMIDIMessage, alignment: 8)

    init(receiver: any MIDIReceiver) {
        self.receiver = receiver
        ring = SPSCByteRing(minimumCapacity: 64 * 1024)
        wake = .allocate(capacity: 1)
        sem_init(wake, 0, 0)
    }

    deinit {
        sem_destroy(wake)
        wake.deallocate()
        ring.deallocate()
        scratch.deallocate()
    }

    func start() {
        running.store(true, ordering: .releasing)
        let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
            Unmanaged<JACKMIDIReader>.fromOpaque(raw!).takeUnretainedValue().run()
            return nil
        }
        pthread_create(&thread, nil, body, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Stops the thread (after the client is deactivated: nothing writes the ring any more) and releases the
    /// notes JACK MIDI still holds.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        sem_post(wake)
        pthread_join(thread, nil)
        receiver.sourceEnded(Self.source, arrivalNanos: monotonicNanoseconds())
    }

    private func run() {
        while running.load(ordering: .acquiring) {
            sem_wait(wake)
            drain()
        }
        drain()
    }

    private func drain() {
        while let size = ring.read(into: scratch, scratchSize: 8 + JACKProcess.largestMIDIMessage), size > 8 {
            let bytes = UnsafeRawBufferPointer(start: scratch + 8, count: size - 8)
            let status = bytes[0]
            if status >= 0x80 && status < 0xF0 {
                let message = ChannelMessage(
                    status: status, data1: bytes.count > 1 ? bytes[1] & 0x7F : 0,
                    data2: bytes.count > 2 ? bytes[2] & 0x7F : 0)
                receiver.heard(message, from: Self.source)
                continue
            }
            // A JACK event is one whole message: parse it on its own.
            parser.reset()
            let arrival = monotonicNanoseconds()
            parser.parse(bytes) { message in
                receiver.receive(system: message, from: Self.source, arrivalNanos: arrival)
            }
        }
    }
}

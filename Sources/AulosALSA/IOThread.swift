import AulosCore
import AulosIO
import AulosRealtime
import CALSA
import Glibc
import Synchronization

/// Counters shared between the I/O thread (writer) and the control thread (reader).
struct IOCounters: ~Copyable {
    let running = Atomic<Bool>(false)
    let xruns = Atomic<Int>(0)
    let framesPlayed = Atomic<Int64>(0)
    /// DSP load, late and stalled periods (the measure the JACK unit shares).
    let meter = RenderLoadMeter()
    let interrupted = Atomic<Bool>(false)
    /// Fault injection (tests): a negative errno the next write reports as if the device had.
    let injectedError = Atomic<Int32>(0)
    /// Fault injection (tests): a negative errno the next capture read reports as if the device had.
    let injectedCaptureError = Atomic<Int32>(0)
    /// Fault injection (tests): microseconds the next renders sleep, making them overrun for real.
    let injectedDelayMicroseconds = Atomic<Int>(0)
    /// Stop rendering once this many frames have been rendered (0: no limit), so a timed run ends on
    /// the frame rather than whenever the control thread next looks.
    let frameLimit = Atomic<Int64>(0)
    let reachedFrameLimit = Atomic<Bool>(false)
    /// The device took audio faster than real time (null, a file plugin over null) and the thread now
    /// paces it by the clock.
    let unpacedDevice = Atomic<Bool>(false)
}

/// A device that takes audio faster than real time would have the I/O thread render as fast as the CPU
/// allows (a core at 96 %, "played 54 minutes" after one). Such a device is recognised by what it does —
/// it has taken more than twice real time plus a quarter second beyond its buffer, which no sound card
/// does, however far its crystal drifts — and from then on the thread waits for the monotonic clock
/// before each period, as a sound card would make it wait. A real device never trips it, so its timing is
/// never touched.
struct ClockPacing {
    /// Off: render as fast as the device takes it (tests comparing with an offline render, `--unpaced`).
    let enabled: Bool
    var unpaced = false
    /// Since when frames are counted (CLOCK_MONOTONIC ns; 0: start counting at the next period).
    var origin: Int64 = 0
    var frames: Int64 = 0

    /// Nanoseconds to wait before rendering the next period (0: render now).
    mutating func wait(now: Int64, sampleRate: Double, bufferFrames: Int, counters: UnsafePointer<IOCounters>)
        -> Int64
    {
        guard enabled else { return 0 }
        if origin == 0 {
            origin = now
            frames = unpaced ? Int64(bufferFrames) : 0
        }
        let elapsed = Double(now - origin) * sampleRate / 1e9
        if !unpaced {
            guard Double(frames) > 2 * elapsed + Double(bufferFrames) + sampleRate / 4 else { return 0 }
            unpaced = true
            counters.pointee.unpacedDevice.store(true, ordering: .relaxed)
            origin = now
            frames = Int64(bufferFrames)
            return 0
        }
        // A sound card takes a period once the one before it has played out of a full buffer.
        let due = origin + Int64(Double(frames - Int64(bufferFrames)) / sampleRate * 1e9)
        return max(0, due - now)
    }

    /// After a reopen or an xrun: count afresh (an unpaced device stays known as one).
    mutating func restart() { origin = 0 }
}

/// The input element's audio for the current period, already in the graph's canonical format, and where
/// the slice being rendered starts in it. The unit owns it for its whole life (it is the input callback's
/// refCon, installed before the I/O thread exists); only the I/O thread writes or reads it.
struct CaptureBuffer {
    /// Canonical (Float32, non-interleaved, stereo) storage for one period.
    var channels: (UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?) = (nil, nil)
    var active = false
    var sliceOffset = 0
    var frames = 0
}

/// The I/O thread's whole world: no class references, so nothing it touches is reference counted.
///
/// Threads: created and freed by the control thread (the unit) while the I/O thread is not running;
/// owned by the I/O thread in between.
struct IOThreadState {
    var pcm: OpaquePointer?
    let entry: RenderEntry
    let counters: UnsafeMutablePointer<IOCounters>
    let events: SPSCRing<IOEvent>
    /// One period of device-format, interleaved audio.
    let buffers: UnsafeMutablePointer<AudioBufferList>
    let bytes: UnsafeMutableRawPointer
    let bytesPerFrame: Int
    let period: Int
    /// The device buffer (all periods), for working out when a rendered frame will be heard.
    let bufferFrames: Int
    /// The graph's maximumFramesPerSlice: a period longer than it is rendered in several slices.
    let sliceLimit: Int
    let sampleRate: Double
    var sampleTime: Int64 = 0
    /// Between losing the device and the first successful write after reopening it.
    var recovering = false
    var framesSinceReopen = 0
    /// Frames that must be written after a reopen before the device counts as back.
    var recoveryFrames = 0
    /// How to reopen the device after it went away (C strings owned by the unit).
    let reopenName: UnsafePointer<CChar>
    let reopenConfiguration: UnsafePointer<CChar>?
    var reopenRequest: AulosPCMConfig
    /// The input element: a capture PCM (nil when input is off), its device-format period, and the
    /// conversion into the canonical buffer the input callback serves.
    var capturePCM: OpaquePointer?
    let captureList: UnsafeMutablePointer<AudioBufferList>?
    let captureBytesPerFrame: Int
    let captureConversion: FormatConversion?
    let captureCanonical: UnsafeMutablePointer<AudioBufferList>?
    let captureScratch: UnsafeMutablePointer<Float>?
    let capture: UnsafeMutablePointer<CaptureBuffer>
    var pacing: ClockPacing
}

enum IOThread {
    /// The thread body. Renders a period, writes it (blocking: the device paces us), repeats; recovers
    /// from underruns and suspends, parks and reopens when the device goes away.
    static func run(_ state: UnsafeMutablePointer<IOThreadState>) {
        let counters = state.pointee.counters
        var smoothed = 0.0
        while counters.pointee.running.load(ordering: .acquiring) {
            guard let pcm = state.pointee.pcm else {
                reopen(state)
                continue
            }
            let limit = counters.pointee.frameLimit.load(ordering: .relaxed)
            if limit > 0 && state.pointee.sampleTime >= limit {
                // Done: idle until stop(). Sleep rather than snd_pcm_wait, which returns at once on a PCM
                // that is not running (a reopened one, say) and would spin.
                counters.pointee.reachedFrameLimit.store(true, ordering: .releasing)
                usleep(5_000)
                continue
            }
            // Render as late as possible: once the stream runs, wait until a whole period is free, so the
            // slice is computed just before the device needs it (and the write never finds the buffer
            // full). Before the stream starts (buffer filling) and after an error, render straight away.
            if snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING {
                let free = snd_pcm_avail_update(pcm)
                if free >= 0 && Int(free) < state.pointee.period {
                    _ = snd_pcm_wait(pcm, 50)
                    continue
                }
            }
            let wait = state.pointee.pacing.wait(
                now: monotonicNanoseconds(), sampleRate: state.pointee.sampleRate,
                bufferFrames: state.pointee.bufferFrames, counters: counters)
            if wait > 0 {
                usleep(UInt32(min(wait, 20_000_000) / 1000))  // in steps, so stop() is never kept waiting
                continue
            }
            if state.pointee.capturePCM != nil { readCapture(state) }
            let started = monotonicNanoseconds()
            let startedCPU = threadCPUNanoseconds()
            renderPeriod(state, hostNanos: playTime(state, pcm, wokeAt: started))
            let delay = counters.pointee.injectedDelayMicroseconds.load(ordering: .relaxed)
            if delay > 0 { usleep(UInt32(delay)) }
            counters.pointee.meter.record(
                frames: state.pointee.period, sampleRate: state.pointee.sampleRate,
                wallNanos: monotonicNanoseconds() - started, cpuNanos: threadCPUNanoseconds() - startedCPU,
                framesPlayed: counters.pointee.framesPlayed.load(ordering: .relaxed), smoothed: &smoothed)
            write(state, pcm)
        }
    }

    /// When the first frame about to be rendered will be heard (CLOCK_MONOTONIC ns): Core Audio's
    /// mHostTime for an output. From the device's own timestamp of its last position update and how many
    /// frames were queued ahead of the hardware then — so it does not move with this thread's scheduling
    /// — or, where the device gives no timestamp (some plugins), estimated from the wake-up time and the
    /// frames a running stream has queued when a period becomes free. Nil while the stream is not running
    /// (filling the buffer at start or after an xrun: those periods are rendered back to back, and when
    /// they will be heard is not known yet).
    static func playTime(_ state: UnsafeMutablePointer<IOThreadState>, _ pcm: OpaquePointer, wokeAt wake: Int64)
        -> Int64?
    {
        guard snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING else { return nil }
        let nanosPerFrame = 1e9 / state.pointee.sampleRate
        var available: snd_pcm_uframes_t = 0
        var stamp = snd_htimestamp_t()
        if snd_pcm_htimestamp(pcm, &available, &stamp) == 0 && (stamp.tv_sec != 0 || stamp.tv_nsec != 0) {
            let stampNanos = Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec)
            let queued = state.pointee.bufferFrames - Int(available)
            // A stamp on another clock (a plugin ignoring the monotonic request) is seconds away.
            if queued >= 0 && abs(stampNanos - wake) < 1_000_000_000 {
                return stampNanos + Int64(Double(queued) * nanosPerFrame)
            }
        }
        return wake + Int64(Double(state.pointee.bufferFrames - state.pointee.period) * nanosPerFrame)
    }

    /// Pulls the graph for one period into the device buffer (in slices of at most `sliceLimit`).
    /// `hostNanos` is when the period's first frame will be heard (`playTime`); the slices carry it as
    /// their host time (later slices of the period advanced by their frame offset), so render
    /// notifications can relate wall-clock events such as MIDI arrivals to sample time.
    @_noAllocation @_noLocks
    static func renderPeriod(_ state: UnsafeMutablePointer<IOThreadState>, hostNanos: Int64?) {
        var done = 0
        let period = state.pointee.period
        while done < period {
            let frames = min(state.pointee.sliceLimit, period - done)
            state.pointee.capture.pointee.sliceOffset = done
            let target = state.pointee.buffers
            target.pointee.buffers[0].data = state.pointee.bytes + done * state.pointee.bytesPerFrame
            target.pointee.setFrameCount(UInt32(frames), bytesPerFrame: UInt32(state.pointee.bytesPerFrame))
            var flags = RenderActionFlags(rawValue: 0)
            var stamp = AudioTimeStamp()
            stamp.sampleTime = state.pointee.sampleTime
            if let hostNanos {
                stamp.hostTime = UInt64(hostNanos) &+ UInt64(Double(done) * 1e9 / state.pointee.sampleRate)
                stamp.flags = AulosTimeStampFlags.sampleTimeValid.union(.hostTimeValid)
            } else {
                stamp.flags = .sampleTimeValid
            }
            let status = state.pointee.entry.render(
                flags: &flags, timeStamp: &stamp, frameCount: UInt32(frames), ioData: target)
            if status != RenderStatus.noErr { target.pointee.zeroFill() }
            state.pointee.sampleTime += Int64(frames)
            done += frames
        }
    }

    /// Reads one period from the capture PCM (waiting for it: capture and playback run on one clock) and
    /// converts it for the input callback. An overrun or a suspend is recovered by the same policy as
    /// playback (`recover`); any other error turns the input off (silence) without stopping the output.
    static func readCapture(_ state: UnsafeMutablePointer<IOThreadState>) {
        guard let pcm = state.pointee.capturePCM, let list = state.pointee.captureList,
            let canonical = state.pointee.captureCanonical, let conversion = state.pointee.captureConversion,
            let scratch = state.pointee.captureScratch
        else { return }
        let counters = state.pointee.counters
        let period = state.pointee.period
        let bytes = list.pointee.buffers[0].data!
        var offset = 0
        while offset < period {
            let injected = counters.pointee.injectedCaptureError.exchange(0, ordering: .relaxed)
            let result =
                injected != 0
                ? Int(injected)
                : Int(
                    snd_pcm_readi(
                        pcm, bytes + offset * state.pointee.captureBytesPerFrame, snd_pcm_uframes_t(period - offset)))
            if result >= 0 {
                offset += result
                continue
            }
            switch Int32(result) {
            case -EAGAIN:
                guard counters.pointee.running.load(ordering: .relaxed) else { return }
                _ = snd_pcm_wait(pcm, 50)
            case -EPIPE, -ESTRPIPE:
                state.pointee.pacing.restart()
                guard recover(state, pcm, from: Int32(result), capture: true) else { return turnInputOff(state, pcm) }
            case -EINTR:
                continue
            default:
                return turnInputOff(state, pcm)
            }
        }
        list.pointee.setFrameCount(UInt32(period), bytesPerFrame: UInt32(state.pointee.captureBytesPerFrame))
        conversion.convert(list, into: canonical, frameCount: period, scratch: scratch)
        state.pointee.capture.pointee.frames = period
        state.pointee.capture.pointee.active = true
    }

    /// The capture side failed for good: the input element plays silence from now on; the output goes on.
    static func turnInputOff(_ state: UnsafeMutablePointer<IOThreadState>, _ pcm: OpaquePointer) {
        state.pointee.capture.pointee.active = false
        state.pointee.capturePCM = nil
        snd_pcm_close(pcm)
    }

    /// The xrun policy, one function for playback and capture: an underrun or overrun (EPIPE) is counted,
    /// reported and recovered with snd_pcm_prepare; a suspend (ESTRPIPE) is resumed (waiting while the
    /// driver answers EAGAIN), or re-prepared where the device cannot resume. A capture stream is started
    /// again (playback starts itself on the next write). Returns false when the stream could not be
    /// recovered (the caller loses the device, or turns the input off).
    static func recover(
        _ state: UnsafeMutablePointer<IOThreadState>, _ pcm: OpaquePointer, from error: Int32, capture: Bool
    ) -> Bool {
        let counters = state.pointee.counters
        switch error {
        case -EPIPE:
            counters.pointee.xruns.add(1, ordering: .relaxed)
            _ = state.pointee.events.push(capture ? .overrun : .underrun)
            guard snd_pcm_prepare(pcm) >= 0 else { return false }
        case -ESTRPIPE:
            var resumed = snd_pcm_resume(pcm)
            while resumed == -EAGAIN && counters.pointee.running.load(ordering: .relaxed) {
                usleep(10_000)
                resumed = snd_pcm_resume(pcm)
            }
            if resumed < 0 && snd_pcm_prepare(pcm) < 0 { return false }
            _ = state.pointee.events.push(.suspendedAndResumed)
        default:
            return false
        }
        if capture { snd_pcm_start(pcm) }
        return true
    }

    /// The input element as a render callback (Core Audio's AudioUnitRender on element 1 from an input
    /// callback): serves the captured period's frames for the slice being rendered; silence when input is
    /// off. Install it on the node input that should hear the capture.
    static let inputCallback: RenderCallback = { refCon, _, _, _, frameCount, ioData in
        guard let refCon else { return RenderStatus.noErr }
        let capture = refCon.assumingMemoryBound(to: CaptureBuffer.self)
        let frames = Int(frameCount)
        let start = capture.pointee.sliceOffset
        guard capture.pointee.active, start + frames <= capture.pointee.frames,
            let left = capture.pointee.channels.0, let right = capture.pointee.channels.1
        else {
            ioData.pointee.zeroFill()
            return RenderStatus.noErr
        }
        let count = Int(ioData.pointee.bufferCount)
        for index in 0..<count {
            guard let data = ioData.pointee.buffers[index].data else { continue }
            let source = index == 0 ? left : right
            data.assumingMemoryBound(to: Float.self).update(from: source + start, count: frames)
        }
        return RenderStatus.noErr
    }

    /// Writes the period (non-blocking writes, waiting in snd_pcm_wait when the buffer is full), handling
    /// the device's answers with one policy (`recover`): underrun → prepare, count, go on; suspend →
    /// resume; anything else (device gone) → interruption, park, reopen.
    static func write(_ state: UnsafeMutablePointer<IOThreadState>, _ pcm: OpaquePointer) {
        let counters = state.pointee.counters
        var offset = 0
        let period = state.pointee.period
        while offset < period {
            var result: Int
            let injected = counters.pointee.injectedError.exchange(0, ordering: .relaxed)
            if injected != 0 {
                result = Int(injected)
            } else {
                result = Int(
                    snd_pcm_writei(
                        pcm, state.pointee.bytes + offset * state.pointee.bytesPerFrame,
                        snd_pcm_uframes_t(period - offset)))
            }
            if result >= 0 {
                state.pointee.framesSinceReopen += result
                if state.pointee.recovering && state.pointee.framesSinceReopen > state.pointee.recoveryFrames {
                    // Audio has flowed through a whole buffer again: only now is the interruption over (a
                    // reopened PCM can accept its first writes and still fail, as a file PCM whose folder
                    // is gone does once it flushes).
                    state.pointee.recovering = false
                    counters.pointee.interrupted.store(false, ordering: .releasing)
                    _ = state.pointee.events.push(.interruptionEnded)
                }
                offset += result
                state.pointee.pacing.frames += Int64(result)
                counters.pointee.framesPlayed.add(Int64(result), ordering: .relaxed)
                continue
            }
            switch Int32(result) {
            case -EAGAIN:
                // The buffer is full: wait for a period's room, but never so long that stop() waits on us.
                guard counters.pointee.running.load(ordering: .relaxed) else { return }
                _ = snd_pcm_wait(pcm, 50)
            case -EPIPE, -ESTRPIPE:
                guard recover(state, pcm, from: Int32(result), capture: false) else {
                    return lose(state, Int32(result))
                }
            case -EINTR:
                continue
            default:
                // stop() drops the stream to wake a blocked write: that error is not a lost device.
                guard counters.pointee.running.load(ordering: .acquiring) else { return }
                return lose(state, Int32(result))
            }
        }
    }

    /// The device is gone: report, close, and let `run` park in `reopen`.
    static func lose(_ state: UnsafeMutablePointer<IOThreadState>, _ error: Int32) {
        if let pcm = state.pointee.pcm { snd_pcm_close(pcm) }
        state.pointee.pcm = nil
        // One interruption per outage: a reopened device failing again is the same outage.
        guard !state.pointee.recovering else { return }
        state.pointee.recovering = true
        state.pointee.counters.pointee.interrupted.store(true, ordering: .releasing)
        _ = state.pointee.events.push(.interruptionBegan(errno: error))
    }

    /// Parked: every 250 ms, try to open the device again with the settings granted before. Opening
    /// allocates, which is fine here: no audio is flowing. A device that comes back with another rate,
    /// format or channel count is not the same route; keep waiting (the host can rebuild).
    static func reopen(_ state: UnsafeMutablePointer<IOThreadState>) {
        let counters = state.pointee.counters
        var slept = 0
        while slept < 250_000 && counters.pointee.running.load(ordering: .relaxed) {
            usleep(10_000)
            slept += 10_000
        }
        guard counters.pointee.running.load(ordering: .relaxed) else { return }
        var pcm: OpaquePointer?
        guard
            aulos_alsa_open(
                &pcm, state.pointee.reopenName, state.pointee.reopenConfiguration, SND_PCM_STREAM_PLAYBACK,
                PCMDevice.openMode) >= 0,
            let pcm
        else { return }
        var config = state.pointee.reopenRequest
        var stage: UnsafePointer<CChar>?
        let wanted = state.pointee.reopenRequest
        guard aulos_alsa_configure(pcm, &config, &stage) >= 0, config.format == wanted.format,
            config.rate == wanted.rate,
            config.channels == wanted.channels
        else {
            snd_pcm_close(pcm)
            return
        }
        state.pointee.pcm = pcm
        state.pointee.pacing.restart()
        state.pointee.framesSinceReopen = 0
        state.pointee.recoveryFrames = Int(config.buffer) + state.pointee.period
        snd_pcm_prepare(pcm)
    }

    /// The pthread entry point: the state pointer is the argument.
    static let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
        run(raw!.assumingMemoryBound(to: IOThreadState.self))
        return nil
    }
}

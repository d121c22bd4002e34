import AulosCore
import AulosRealtime

/// A MIDI message for the sequencer to send at a host time (CLOCK_MONOTONIC ns).
public struct MIDIClockEvent: BitwiseCopyable, Sendable, Equatable {
    public var hostNanos: Int64
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8
}

/// Aulos as MIDI clock master: 24 Timing Clocks per beat, with Start, Stop, Continue and Song Position
/// Pointer, following the host transport and timed to the audio — each tick is stamped with the time the
/// audio at its beat will be heard, so drum machines and sequencers slaved to it play in time with it.
///
/// The pre-render notification (install after the transport's) reads the slice's beat, tempo and play
/// state through the host callbacks, finds the frames where tick boundaries fall, maps them to host time
/// through its own `MIDIPlacementClock` (fed by the slices' host times: when each will be heard), and
/// queues them. The MIDI thread pops them and hands them to the sequencer scheduled at those times.
/// On (re)starting — the transport starting, or the first slice with a host time — it sends Start at
/// beat 0, otherwise Song Position (the next sixteenth) and Continue, and ticks from that sixteenth on.
/// A jump of the transport (locate, a loop) re-synchronises the same way. Slices without a host time
/// (offline, the buffer filling) send nothing.
///
/// Threads: the notification on the render thread; `pop` on one other thread (the MIDI thread).
public final class MIDIClockOutput: @unchecked Sendable {
    struct RenderState {
        let ring: SPSCRing<MIDIClockEvent>
        var clock: MIDIPlacementClock
        let host: HostCallbackInfo
        let sampleRate: Double
        /// Sending ticks (the transport plays and the receivers were started).
        var running = false
        /// The next tick to send, counted from beat 0 (24 a beat).
        var nextTick: Int64 = 0
    }

    private let state: UnsafeMutablePointer<RenderState>
    private let ring: SPSCRing<MIDIClockEvent>

    public init(host: HostCallbackInfo, sampleRate: Double, periodFrames: Int, capacity: Int = 1024) {
        ring = SPSCRing(minimumCapacity: capacity)
        state = .allocate(capacity: 1)
        state.initialize(
            to: RenderState(
                ring: ring, clock: MIDIPlacementClock(sampleRate: sampleRate, periodFrames: periodFrames),
                host: host, sampleRate: sampleRate))
    }

    deinit {
        ring.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The next message to send (MIDI thread).
    public func pop() -> MIDIClockEvent? { ring.pop() }

    /// Install with `AudioGraph.addRenderNotify`, after the transport's. Valid while this object lives.
    public var renderNotify: RenderCallbackStruct {
        RenderCallbackStruct(MIDIClockOutput.preRender, refCon: UnsafeMutableRawPointer(state))
    }

    static let preRender: RenderCallback = { refCon, flags, timeStamp, _, frameCount, _ in
        guard flags.pointee.contains(.preRender), timeStamp.pointee.flags.contains(.hostTimeValid) else { return 0 }
        MIDIClockOutput.slice(
            refCon!.assumingMemoryBound(to: RenderState.self), sliceStart: timeStamp.pointee.sampleTime,
            hostNanos: Int64(bitPattern: timeStamp.pointee.hostTime), frameCount: Int64(frameCount))
        return 0
    }

    @_noAllocation @_noLocks
    static func slice(
        _ state: UnsafeMutablePointer<RenderState>, sliceStart: Int64, hostNanos: Int64, frameCount: Int64
    ) {
        state.pointee.clock.update(frame: sliceStart, hostNanos: hostNanos)
        guard let now = state.pointee.host.currentBeat() else { return }
        let (beat, tempo) = (now.beat, now.tempo)
        // When the slice's first frame is heard, on the smoothed line; ticks are that plus their offset.
        let sliceLine = state.pointee.clock.nanos(atFrame: sliceStart)
        let sliceNanos = Int64(sliceLine)
        if !now.playing {
            if state.pointee.running {
                state.pointee.running = false
                send(state, MIDIClockEvent(hostNanos: sliceNanos, status: 0xFC, data1: 0, data2: 0))
            }
            return
        }
        let ticksAtStart = beat * 24
        // Started, or the transport jumped away from where the ticks were: tell the receivers where we are.
        if !state.pointee.running || abs(ticksAtStart - Double(state.pointee.nextTick)) > 1.5 {
            state.pointee.running = true
            // ceil() of the sixteenth without FloatingPointRoundingRule (rejected by the real-time checker).
            let exact = beat * 4 - 1e-9
            var sixteenth = Int64(exact)
            if Double(sixteenth) < exact { sixteenth += 1 }
            if sixteenth <= 0 {
                send(state, MIDIClockEvent(hostNanos: sliceNanos, status: 0xFA, data1: 0, data2: 0))
                state.pointee.nextTick = 0
            } else {
                let position = min(sixteenth, 16383)
                send(
                    state,
                    MIDIClockEvent(
                        hostNanos: sliceNanos, status: 0xF2, data1: UInt8(position & 0x7F), data2: UInt8(position >> 7))
                )
                send(state, MIDIClockEvent(hostNanos: sliceNanos, status: 0xFB, data1: 0, data2: 0))
                state.pointee.nextTick = sixteenth * 6
            }
        }
        let framesPerTick = state.pointee.sampleRate * 60 / tempo / 24
        while true {
            let offset = (Double(state.pointee.nextTick) - ticksAtStart) * framesPerTick
            if offset >= Double(frameCount) { break }
            let nanos = sliceLine + max(0, offset) * state.pointee.clock.nanosPerFrame
            send(state, MIDIClockEvent(hostNanos: Int64(nanos), status: 0xF8, data1: 0, data2: 0))
            state.pointee.nextTick += 1
        }
    }

    @_noAllocation @_noLocks
    static func send(_ state: UnsafeMutablePointer<RenderState>, _ event: MIDIClockEvent) {
        _ = state.pointee.ring.push(event)  // full (the MIDI thread stalled): the tick is lost, like a late one
    }
}

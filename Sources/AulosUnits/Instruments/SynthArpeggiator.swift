import AulosCore
import AulosDSP
import AulosMIDI

/// The arpeggiator's state: the keys it holds and the note it sounds.
///
/// Threads: the render thread reads and writes it (a plain value in the kernel's memory); the control thread
/// makes it at initialize.
struct ArpeggiatorState {
    /// Keys held (or latched) live in `arpNotes`, in the order they were played; this many.
    var count = 0
    var keysDown = 0
    var channel = 0
    /// The velocity of the last key (0…127, fractional from MIDI 2.0), which every arpeggiated note plays.
    var velocity: Float = 100
    /// The note sounding now (−1: none) and the absolute sample at which its gate closes.
    var sounding = -1
    var offAt: Int64 = 0
    var random = NoiseGenerator(seed: 0x41_5250)
}

/// What the host said about this slice (beat, tempo, playing), read once at the slice's start.
///
/// Threads: the render thread reads and writes it (a plain value in the kernel's memory); the control thread
/// makes it at initialize.
struct HostSlice {
    var valid = false
    var playing = false
    var beat = 0.0
    var beatsPerFrame = 0.0
}

/// The host's beat for this slice, and the arpeggiator that steps on it.
///
/// Threads: render thread.
extension OscillatorSynthKernel {
    /// Reads beat, tempo and play state for this slice from the host callbacks (if installed).
    @_noAllocation @_noLocks
    func queryHost() {
        hostSlice.pointee.valid = false
        guard let now = host?.currentBeat() else { return }
        hostSlice.pointee = HostSlice(
            valid: true, playing: now.playing, beat: now.beat, beatsPerFrame: now.tempo / 60 / sampleRate)
    }

    /// The frame at which beat `target` is reached in this slice (frames count from the slice start).
    @inline(__always) @_noAllocation @_noLocks
    func frameOffset(ofBeat target: Double) -> Int {
        let host = hostSlice.pointee
        let exact = (target - host.beat) / host.beatsPerFrame
        let whole = Double(Int64(exact))
        // First frame at or after the boundary, robust to rounding in the beat arithmetic.
        return Int(whole) + (exact - whole > 1e-6 ? 1 : 0)
    }

    /// The frame (from the slice start) at which arpeggiator step `k` begins: the first frame at or after
    /// its beat. Every step decision goes through this one function, so "which step starts here" and "where
    /// does the next step start" can never disagree, whether boundaries fall on or between frames.
    @inline(__always) @_noAllocation @_noLocks
    func boundaryFrame(_ k: Int64) -> Int { frameOffset(ofBeat: Double(k) * controls.pointee.arpBeats) }

    /// The step in progress at `frame` (by the beat), as a starting point for the boundary search.
    @inline(__always) @_noAllocation @_noLocks
    func approximateStep(at frame: Int) -> Int64 {
        let host = hostSlice.pointee
        return Int64(max(0, (host.beat + Double(frame) * host.beatsPerFrame) / controls.pointee.arpBeats))
    }

    @_noAllocation @_noLocks
    func nextArpeggiatorFrame(after frame: Int, frameCount: Int) -> Int {
        let host = hostSlice.pointee
        guard controls.pointee.arpMode.isOn, host.valid, host.playing else { return frameCount }
        var next = frameCount
        if arp.pointee.sounding >= 0 {
            let off = Int(arp.pointee.offAt - time.pointee)
            if off > frame && off < next { next = off }
        }
        if arp.pointee.count > 0 {
            let k0 = approximateStep(at: frame)
            for k in k0...(k0 + 2) {
                let boundary = boundaryFrame(k)
                if boundary > frame {
                    if boundary < next { next = boundary }
                    break
                }
            }
        }
        return next
    }

    /// At `frame`: closes the gate of the sounding arpeggio note when due, and plays the next step when a
    /// step boundary falls exactly here.
    @_noAllocation @_noLocks
    func runArpeggiator(at frame: Int) {
        let host = hostSlice.pointee
        guard controls.pointee.arpMode.isOn, host.valid, host.playing else { return }
        let now = time.pointee + Int64(frame)
        if arp.pointee.sounding >= 0 && now >= arp.pointee.offAt {
            noteOff(UInt8(arp.pointee.sounding), channel: arp.pointee.channel)
            arp.pointee.sounding = -1
        }
        guard arp.pointee.count > 0 else { return }
        let k0 = approximateStep(at: frame)
        var step: Int64 = -1
        for k in max(0, k0 - 1)...(k0 + 1) where boundaryFrame(k) == frame { step = k }
        guard step >= 0 else { return }
        if arp.pointee.sounding >= 0 {
            noteOff(UInt8(arp.pointee.sounding), channel: arp.pointee.channel)
            arp.pointee.sounding = -1
        }
        let note = arpeggioNote(step: step)
        guard note >= 0 && note <= 127 else { return }
        noteOn(UInt8(note), velocity: arp.pointee.velocity, channel: arp.pointee.channel)
        arp.pointee.sounding = note
        let stepFrames = controls.pointee.arpBeats / host.beatsPerFrame
        arp.pointee.offAt = now + max(1, Int64(stepFrames * controls.pointee.arpGate))
    }

    /// The note of step `step` of the current pattern.
    @_noAllocation @_noLocks
    func arpeggioNote(step: Int64) -> Int {
        let count = arp.pointee.count
        let octaves = controls.pointee.arpOctaves
        let length = count * octaves
        // Sorted copy into the scratch tail (no allocation): insertion sort of at most 64 notes.
        let sorted = arpNotes + 32
        for index in 0..<count {
            var position = index
            let value = arpNotes[index]
            while position > 0 && sorted[position - 1] > value {
                sorted[position] = sorted[position - 1]
                position -= 1
            }
            sorted[position] = value
        }
        var index: Int
        switch controls.pointee.arpMode {
        case .up: index = Int(step % Int64(length))
        case .down: index = length - 1 - Int(step % Int64(length))
        case .upDown:
            let period = max(1, 2 * length - 2)
            let position = Int(step % Int64(period))
            index = position < length ? position : period - position
        case .random:
            index = Int(UInt32(bitPattern: Int32(arp.pointee.random.next() * 1_000_000)) % UInt32(length))
        case .asPlayed, .off:
            let position = Int(step % Int64(length))
            return Int(arpNotes[position % count]) + 12 * (position / count)
        }
        return Int(sorted[index % count]) + 12 * (index / count)
    }

    @_noAllocation @_noLocks
    func arpeggiatorKeyDown(_ note: UInt8, velocity: Float, channel: Int) {
        // With latch, the first key after all were released starts a new chord.
        if controls.pointee.arpLatch && arp.pointee.keysDown == 0 { arp.pointee.count = 0 }
        arp.pointee.keysDown += 1
        arp.pointee.channel = channel
        arp.pointee.velocity = velocity
        for index in 0..<arp.pointee.count where arpNotes[index] == note { return }
        guard arp.pointee.count < 32 else { return }
        arpNotes[arp.pointee.count] = note
        arp.pointee.count += 1
    }

    @_noAllocation @_noLocks
    func arpeggiatorKeyUp(_ note: UInt8) {
        arp.pointee.keysDown = max(0, arp.pointee.keysDown - 1)
        guard !controls.pointee.arpLatch else { return }
        var write = 0
        for read in 0..<arp.pointee.count where arpNotes[read] != note {
            arpNotes[write] = arpNotes[read]
            write += 1
        }
        arp.pointee.count = write
    }
}

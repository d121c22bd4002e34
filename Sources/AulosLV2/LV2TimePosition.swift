import AulosCore

/// The host's transport as LV2's `time:Position`, for tempo-synced plugins (a delay in note values, an
/// arpeggiator, a metronome): at the start of a slice, when the transport starts or stops, the tempo or
/// meter changes, or the beat jumps (a locate, a cycle), the plugin's atom input gets one position object
/// at frame 0 — speed (1 playing, 0 stopped), tempo, beat within the bar, bar, meter, and the frame.
/// Between changes the plugin counts on from the last one, as LV2 intends.
///
/// Threads: `init` on the control thread; `update` and `write` on the render thread.
struct LV2TimePosition {
    /// The URIDs of the object and its properties (mapped on the control thread).
    struct Keys: BitwiseCopyable {
        var object, position, long, float, int: UInt32
        var frame, speed, beatsPerMinute, bar, barBeat, beatUnit, beatsPerBar: UInt32

        init(map: LV2URIDMap) {
            let time = "http://lv2plug.in/ns/ext/time#"
            let atom = "http://lv2plug.in/ns/ext/atom#"
            (object, position) = (map.map(atom + "Object"), map.map(time + "Position"))
            (long, float, int) = (map.map(atom + "Long"), map.map(atom + "Float"), map.map(atom + "Int"))
            (frame, speed, beatsPerMinute) = (
                map.map(time + "frame"), map.map(time + "speed"), map.map(time + "beatsPerMinute")
            )
            (bar, barBeat) = (map.map(time + "bar"), map.map(time + "barBeat"))
            (beatUnit, beatsPerBar) = (map.map(time + "beatUnit"), map.map(time + "beatsPerBar"))
        }
    }

    /// What the plugin was last told, and where the host's time stood then.
    struct State {
        var told = false
        var beat = 0.0
        var tempo = 0.0
        var playing = false
        var numerator: UInt32 = 4
        var denominator: UInt32 = 4
        var beatsPerFrame = 0.0
        var frames = 0
        /// Whether this slice needs a position (found by `update`, written by `write`).
        var due = false
        var downbeat = 0.0
        var sampleTime: Int64 = 0
    }

    let host: HostCallbackInfo
    let keys: Keys
    let sampleRate: Double
    let state: UnsafeMutablePointer<State>

    init(host: HostCallbackInfo, keys: Keys, sampleRate: Double) {
        (self.host, self.keys, self.sampleRate) = (host, keys, sampleRate)
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    func deallocate() { state.deallocate() }

    /// Render thread, at a slice's start: asks the host where its time is and decides whether the plugin
    /// must be told.
    @_noAllocation @_noLocks
    func update(sampleTime: Int64, frameCount: Int) {
        state.pointee.due = false
        guard let now = host.currentBeat() else { return }
        var (numerator, denominator, downbeat): (UInt32, UInt32, Double) = (4, 4, 0)
        if let location = host.musicalTimeLocation {
            var delta: UInt32 = 0
            var top: Float32 = 4
            var bottom: UInt32 = 4
            var measure = 0.0
            let user = host.hostUserData
            if _unsafePerformance({ location(user, &delta, &top, &bottom, &measure) }) == 0, top >= 1, bottom >= 1 {
                (numerator, denominator, downbeat) = (UInt32(top), bottom, measure)
            }
        }
        let last = state.pointee
        let expected = last.beat + last.beatsPerFrame * Double(last.frames)
        let changed =
            !last.told || now.playing != last.playing || now.tempo != last.tempo || numerator != last.numerator
            || denominator != last.denominator || (now.playing && abs(now.beat - expected) > 1e-6)
        state.pointee = State(
            told: true, beat: now.beat, tempo: now.tempo, playing: now.playing, numerator: numerator,
            denominator: denominator, beatsPerFrame: now.playing ? now.tempo / 60 / sampleRate : 0,
            frames: frameCount, due: changed, downbeat: downbeat, sampleTime: sampleTime)
    }

    /// Render thread: the position object as a sequence event at frame 0, at byte `offset` of `sequence`
    /// (room checked by the caller: `eventSize` bytes). Returns the offset after it.
    @_noAllocation @_noLocks
    func write(into sequence: UnsafeMutableRawPointer, at offset: Int) -> Int {
        let now = state.pointee
        let beatsPerBar = Double(now.numerator)
        // The bar and the beat in it: from the current measure's downbeat when the host gives a plausible
        // one, else counted in whole bars from beat 0 (beats are never negative: truncation is floor).
        let measureStart =
            now.downbeat <= now.beat && now.beat - now.downbeat < beatsPerBar + 1e-9
            ? now.downbeat : Double(Int64(now.beat / beatsPerBar)) * beatsPerBar
        let bar = Int64(measureStart / beatsPerBar + 1e-9)
        let barBeat = now.beat - measureStart
        var out = AtomWriter(base: sequence, offset: offset)
        out.store(Int64(0))  // the event's frame
        out.store(UInt32(Self.eventSize - 16))  // the object atom's body size
        out.store(keys.object)
        out.store(UInt32(0))  // object id: blank
        out.store(keys.position)
        out.property(keys.frame, keys.long, now.sampleTime)
        out.property(keys.speed, keys.float, Float(now.playing ? 1 : 0))
        out.property(keys.beatsPerMinute, keys.float, Float(now.tempo))
        out.property(keys.bar, keys.long, bar)
        out.property(keys.barBeat, keys.float, Float(barBeat))
        out.property(keys.beatUnit, keys.int, Int32(now.denominator))
        out.property(keys.beatsPerBar, keys.float, Float(beatsPerBar))
        return out.offset
    }

    /// An event's bytes: frame (8), atom header (8), object body (8), seven properties of 24.
    static var eventSize: Int { 8 + 8 + 8 + 7 * 24 }
}

/// Writes atoms into a buffer the caller sized: plain values, and object properties padded to 8 bytes.
/// Render thread. (Generic, so unannotated: the checks apply where it is specialized and inlined, inside
/// `LV2TimePosition.write`.)
struct AtomWriter {
    let base: UnsafeMutableRawPointer
    var offset: Int

    @inline(__always)
    mutating func store<T: BitwiseCopyable>(_ value: T) {
        base.storeBytes(of: value, toByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
    }

    /// A property: key, context (none), the value's atom header, the value, padding.
    @inline(__always)
    mutating func property<T: BitwiseCopyable>(_ key: UInt32, _ type: UInt32, _ value: T) {
        store(key)
        store(UInt32(0))
        store(UInt32(MemoryLayout<T>.size))
        store(type)
        store(value)
        if MemoryLayout<T>.size < 8 { store(UInt32(0)) }
    }
}

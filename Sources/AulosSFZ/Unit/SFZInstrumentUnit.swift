import AulosCore
import AulosMIDI
import AulosRealtime
import CSndfile

/// The SFZ player as an instrument unit (`aumu/sfzp/Auls`): an SFZ library's regions played by the
/// selector, the mapping and the voice engine of this module, on all 16 MIDI channels (a region's
/// `lochan`/`hichan` choose), sample-accurate and the same at any slice size.
///
/// Loading: setting the library property (a path) parses the library and loads its samples' heads on the
/// calling control thread; errors are one line (`file:line: …`), opcodes it does not play are listed once in
/// `libraryWarnings`. The library is chosen while the unit is uninitialized: a rig switch builds a whole new
/// rig while the old one plays, so nothing is swapped under the render thread.
///
/// Streaming: samples longer than their preloaded head stream from disk through `SFZStreamer`'s loader
/// thread. Live, a voice whose data is late plays silence and is counted (`underruns`); an offline render
/// sets `waitsForData`, so the render waits for the loader and the file is the same at any disk speed.
///
/// Threads: control side as for every unit; `SFZInstrumentKernel` runs on the render thread; the streamer's
/// loader thread reads sample files.
public final class SFZInstrumentUnit: AudioUnit, MusicDevice, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(
        type: .musicDevice, subtype: "sfzp", manufacturer: .aulos)

    /// The library's `.sfz` file (String): settable while uninitialized.
    public static let libraryProperty = PropertyID(rawValue: 64301)
    /// Voices sounding at once (UInt32, 1…4096, default 64), settable while uninitialized.
    public static let polyphonyProperty = PropertyID(rawValue: 64302)
    /// Voices sounding now (UInt32, read-only).
    public static let activeVoicesProperty = PropertyID(rawValue: 64303)

    /// The default polyphony: 64 voices, a Pi 5's (`docs/sfz.md` gives each model's).
    public static let defaultPolyphony: UInt32 = 64

    public enum Parameter: UInt32, CaseIterable, Sendable {
        case gain

        public var id: ParameterID { ParameterID(rawValue) }

        public var info: ParameterInfo {
            switch self {
            case .gain: .init(id: id, name: "Gain", unit: .linearGain, range: 0...4, defaultValue: 1)
            }
        }
    }

    public let midiInput = MIDIEventQueue(capacity: 4096)
    public let voiceBudget = VoiceBudget()
    public private(set) var polyphony: UInt32 = SFZInstrumentUnit.defaultPolyphony
    public private(set) var libraryPath: String?
    /// The library loaded with the store holding its samples' heads (shared with any other unit playing
    /// the same unchanged library: `SFZLibraryCache`).
    public private(set) var loaded: SFZLoadedLibrary?
    public var library: SFZLibrary? { loaded?.library }
    private var store: SFZSampleStore? { loaded?.store }
    private var sampleIDs: [SFZSampleID] { loaded?.sampleIDs ?? [] }
    /// What the library uses that is not played (opcode or header, and where first), once each.
    public var libraryWarnings: [String] { loaded?.warnings ?? [] }
    /// Offline: wait for streamed data rather than play silence (never set for a live render thread). Read
    /// at initialize.
    public var waitsForData = false
    /// The seed of the selector's random numbers (`lorand`/`hirand`): a render repeats exactly.
    public var seed: UInt64 = 0
    /// Sample memory: how much of each sample is preloaded, and the cap on all of it.
    public var sampleLimits = SFZSampleStore.Limits()
    let activity = UnsafeMutablePointer<SFZInstrumentActivity>.allocate(capacity: 1)
    /// The engine while initialized (its counters, for the status), and its last status after.
    private var engine: SFZVoiceEngine?
    private var lastStatus: SFZVoiceStatus?

    public init(library path: String? = nil) {
        activity.initialize(to: SFZInstrumentActivity())
        super.init(
            description: Self.componentDescription, name: "Aulos: SFZ Player", inputs: 0, outputs: 1,
            parameters: Parameter.allCases.map(\.info))
        if let path { try? loadLibrary(path) }
    }

    deinit {
        activity.deinitialize(count: 1)
        activity.deallocate()
    }

    public var activeVoiceCount: Int { voiceBudget.active }
    /// Note-ons that started a voice, and slices with any sound, since initialize.
    public var playedNotes: Int { activity.pointee.notes.load(ordering: .relaxed) }
    public var audibleSlices: Int { activity.pointee.audibleSlices.load(ordering: .relaxed) }

    /// The engine's counters (voices, underruns, streamed and preloaded bytes), or zeros before it plays.
    public var status: SFZVoiceStatus {
        engine?.status ?? lastStatus
            ?? SFZVoiceStatus(
                activeVoices: 0, underruns: 0, lateFrames: 0, steals: 0, cuts: 0, droppedRequests: 0,
                streamedBytes: 0, preloadedBytes: store?.preloadedBytes ?? 0)
    }

    // MARK: State

    public override var stateProperties: [String: String] {
        var properties = super.stateProperties.merging(["polyphony": String(polyphony)]) { $1 }
        if let libraryPath { properties["library"] = libraryPath }
        return properties
    }

    public override func restoreStateProperties(_ properties: [String: String]) throws(AudioUnitError) {
        try super.restoreStateProperties(properties)
        if let text = properties["polyphony"], let voices = UInt32(text), voices != polyphony {
            try setProperty(Self.polyphonyProperty, scope: .global, element: 0, value: voices)
        }
        if let path = properties["library"], path != libraryPath { try loadLibrary(path) }
    }

    // MARK: Properties

    public override func customPropertyInfo(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> PropertyInfo?
    {
        switch id {
        case Self.libraryProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 0, isWritable: true)
        case Self.polyphonyProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: true)
        case Self.activeVoicesProperty:
            try requireScope(id, scope, element, [.global])
            return PropertyInfo(dataSize: 4, isWritable: false)
        default:
            return nil
        }
    }

    public override func customGetProperty(_ id: PropertyID, scope: Scope, element: Element) throws(AudioUnitError)
        -> Any?
    {
        switch id {
        case Self.libraryProperty:
            guard let libraryPath else { throw AudioUnitError(.propertyNotInUse, "\(name) has no library") }
            return libraryPath
        case Self.polyphonyProperty: return polyphony
        case Self.activeVoicesProperty: return UInt32(activeVoiceCount)
        default: return nil
        }
    }

    public override func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any)
        throws(AudioUnitError) -> Bool
    {
        switch id {
        case Self.libraryProperty:
            guard let path = value as? String else {
                throw AudioUnitError(.invalidPropertyValue, "the SFZ library property takes a path")
            }
            try load(path)
            return true
        case Self.polyphonyProperty:
            guard let voices = value as? UInt32, (1...4096).contains(voices) else {
                throw AudioUnitError(.invalidPropertyValue, "SFZ polyphony must be a UInt32 in 1…4096")
            }
            polyphony = voices
            return true
        default:
            return false
        }
    }

    /// Loads an SFZ library (see `libraryProperty`).
    public func loadLibrary(_ path: String) throws(AudioUnitError) {
        try set(PropertyKey<String>(Self.libraryProperty), path)
    }

    /// Parses the library and loads its samples, or takes them already loaded (`SFZLibraryCache`: a rig
    /// reload preloads its libraries while the old rig plays) — control thread; the unit is uninitialized.
    private func load(_ path: String) throws(AudioUnitError) {
        guard !isInitialized else {
            throw AudioUnitError(.initialized, "\(name): the SFZ library is chosen before the unit starts")
        }
        loaded = try SFZLibraryCache.shared.library(at: path, limits: sampleLimits)
        libraryPath = path
    }

    /// What the parser reads but this unit does not play, once per library with the first region that uses
    /// it (the parser warns of what it does not read at all): never silently ignored.
    static func notPlayed(_ library: SFZLibrary) -> [String] {
        var seen: [String: SFZLocation] = [:]
        var order: [String] = []
        func note(_ what: String, _ region: SFZRegion) {
            guard seen[what] == nil else { return }
            seen[what] = region.location
            order.append(what)
        }
        for region in library.regions {
            if case .generator = region.sample { note("sample=*generator (built-in generators are silent)", region) }
            if region.offsetRandom > 0 { note("offset_random", region) }
            if region.delayRandom > 0 { note("delay_random", region) }
            if region.pitchRandom > 0 { note("pitch_random", region) }
            if region.ampRandom > 0 { note("amp_random", region) }
            if region.filterRandom > 0 { note("fil_random", region) }
            if region.count > 0 { note("count", region) }
            if region.offMode == .time { note("off_mode=time (played as fast)", region) }
            if region.cutoff != nil && SFZRegionPlans.filter(region.filterType) == .none {
                note("fil_type=\(region.filterType.rawValue) (played unfiltered)", region)
            }
            let modulations =
                region.volumeControllers + region.amplitudeControllers + region.panControllers
                + region.cutoffControllers + region.pitchControllers + region.widthControllers
                + region.positionControllers + region.resonanceControllers
            if modulations.contains(where: { $0.smooth > 0 || $0.step > 0 }) {
                note("*_smoothccN/*_stepccN (controllers glide over 10 ms)", region)
            }
        }
        return order.map { "\(seen[$0]!): \($0) is read but not played" }
    }

    /// Frames of sample `index` to keep in memory beyond its head: through the end of the longest loop a
    /// region plays from it when that loop is longer than a voice's stream ring can hold (the loader keeps
    /// a ring's length ahead of the lowest frame a voice may come back to).
    static func residentFrames(_ library: SFZLibrary, sample index: Int) -> Int {
        let streamable = 16384 - 4 * SFZInterpolator.maximumReach - SFZStreamer.chunkFrames
        var fileLoop: (start: Int, end: Int)??
        var frames = 0
        for region in library.regions where region.sampleIndex == index {
            guard region.loopMode != .noLoop && region.loopMode != .oneShot else { continue }
            var start = region.loopStart
            var end = region.loopEnd
            if start == nil || end == nil {
                if fileLoop == nil { fileLoop = .some(Self.fileLoop(library.samples[index])) }
                if let loop = fileLoop ?? nil {
                    start = start ?? loop.start
                    end = end ?? loop.end
                } else if region.loopMode != nil {
                    // Asked to loop with no loop points, the file stating none (jRhodes3c's looped FLACs): the
                    // voice loops from 0 to the region's `end` or the sample's last frame — all of it in memory.
                    start = start ?? 0
                    end = end ?? region.end
                    if end == nil { return Int.max }
                } else {
                    continue  // loop_mode unset and no loop in the file: SFZ v1 plays it once
                }
            }
            guard let first = start, let last = end, last - first + 1 > streamable else { continue }
            frames = max(frames, last + 1 + SFZInterpolator.maximumReach)
        }
        return frames
    }

    /// The loop a sample file states (a WAV's `smpl` chunk), read before the store loads it.
    static func fileLoop(_ path: String) -> (start: Int, end: Int)? {
        var format = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &format) else { return nil }
        defer { sf_close(file) }
        return SFZSampleStore.fileLoop(file)
    }

    // MARK: Kernel

    /// Output 1, when the host asks for two outputs, is the effect-send output (`enableEffectSendOutput`).
    public override func canChangeElementCount(_ scope: Scope) -> Bool { scope == .output }

    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        try super.validateFormat(format, scope: scope, element: element)
        if scope == .output { try checkInstrumentOutput(format, element: element) }
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let format = outputFormat(0)
        try checkInstrumentOutput(format, element: 0)
        if hasEffectSendOutput { try checkInstrumentOutput(outputFormat(1), element: 1) }
        guard outputBusCount <= 2 else {
            throw AudioUnitError(
                .invalidPropertyValue, "\(name) has at most two outputs (the mix and its effect sends)")
        }
        guard let library, let store else {
            throw AudioUnitError(.failedInitialization, "\(name) needs an SFZ library: set its library first")
        }
        let configuration = SFZVoiceEngine.Configuration(
            sampleRate: format.sampleRate, polyphony: Int(polyphony), waitsForData: waitsForData)
        let streams = (0..<store.count).contains { !store.infos[$0].isResident }
        let streamer = streams ? SFZStreamer(store: store, slots: configuration.slots) : nil
        if let streamer { retainForKernel(streamer) }
        retainForKernel(store)
        let engine = SFZVoiceEngine(store: store, streamer: streamer, configuration: configuration)
        self.engine = engine
        lastStatus = nil
        let fileLoops = sampleIDs.map { store.info($0).loopStart >= 0 }
        let rootKeys = sampleIDs.map { store.info($0).rootKey }
        let plans = SFZRegionPlans(
            library: library, samples: sampleIDs, fileLoops: fileLoops, rootKeys: rootKeys,
            sampleRate: format.sampleRate)
        let selector = UnsafeMutablePointer<SFZSelector>.allocate(capacity: 1)
        selector.initialize(to: SFZSelector(library: library, sampleRate: format.sampleRate, seed: seed))
        let recordCount = configuration.slots
        let records = UnsafeMutablePointer<SFZVoiceRecord>.allocate(capacity: recordCount)
        records.initialize(repeating: SFZVoiceRecord(), count: recordCount)
        let starts = UnsafeMutableBufferPointer<SFZStart>.allocate(capacity: 256)
        let pedals = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
        pedals.initialize(repeating: 0, count: 16)
        let bends = UnsafeMutablePointer<Int32>.allocate(capacity: 16)
        bends.initialize(repeating: 0, count: 16)
        let keysDown = UnsafeMutablePointer<UInt64>.allocate(capacity: 32)
        keysDown.initialize(repeating: 0, count: 32)
        let latched = UnsafeMutablePointer<UInt64>.allocate(capacity: 32)
        latched.initialize(repeating: 0, count: 32)
        let clock = UnsafeMutablePointer<(frame: Int64, age: UInt64)>.allocate(capacity: 1)
        clock.initialize(to: (0, 0))
        activity.pointee.notes.store(0, ordering: .relaxed)
        activity.pointee.audibleSlices.store(0, ordering: .relaxed)
        let frames = Int(maximumFramesPerSlice)
        let sends = hasEffectSendOutput ? ChannelEffectSends(maximumFrames: frames) : nil
        let mixed = UnsafeMutablePointer<Float>.allocate(capacity: sends == nil ? 1 : 6 * frames)
        mixed.initialize(repeating: 0, count: sends == nil ? 1 : 6 * frames)
        let cycle = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        cycle.initialize(to: .max)
        let silent = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        silent.initialize(to: true)
        let kernel = SFZInstrumentKernel(
            events: midiInput.list, parameters: renderParameters, budget: voiceBudget.counters, engine: engine,
            selector: selector, plans: plans, records: records, recordCount: recordCount, starts: starts,
            pedals: pedals, bends: bends, keysDown: keysDown, latched: latched, clock: clock, activity: activity,
            sends: sends, mixed: mixed, mixFrames: frames, computedCycle: cycle, computedSilent: silent)
        return UnitKernel.make(kernel, render: SFZInstrumentKernel.render) { kernel in
            kernel.engine.deallocate()
            kernel.selector.deinitialize(count: 1)
            kernel.selector.deallocate()
            kernel.plans.deallocate()
            kernel.records.deallocate()
            kernel.starts.deallocate()
            kernel.pedals.deallocate()
            kernel.bends.deallocate()
            kernel.keysDown.deallocate()
            kernel.latched.deallocate()
            kernel.clock.deallocate()
            kernel.sends?.deallocate()
            kernel.mixed.deallocate()
            kernel.computedCycle.deallocate()
            kernel.computedSilent.deallocate()
        }
    }

    public override func willUninitialize() throws(AudioUnitError) {
        lastStatus = engine?.status
        engine = nil
    }
}

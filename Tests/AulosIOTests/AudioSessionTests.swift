import AulosCore
import AulosGraph
import AulosIO
import AulosUnits
import Testing

/// The audio session on the dummy driver: the same activation, sizing, event relay and card polling the
/// ALSA and JACK units get, with the test pulling the periods and holding the clock — nothing sleeps.
@Suite struct AudioSessionTests {
    /// A USB interface plugged in or out is a route change naming the cards. The card list and the clock
    /// are the injected parts; the polling (at most twice a second) and the notice are the real ones.
    @Test func cardsComingAndGoingAreRouteChanges() {
        var cards = ["0: HDA Intel PCH"]
        let session = AudioSession(driver: DummyDriver.driver(cards: { cards }))
        var now: Int64 = 1_000_000_000
        session.clock = { now }
        var routes: [AudioSession.RouteChangeReason] = []
        session.addRouteChangeListener { routes.append($0) }
        session.dispatchEvents()
        #expect(routes.isEmpty)  // the first look only learns what is there
        cards.append("1: Scarlett 2i2 USB")
        now += 510_000_000
        session.dispatchEvents()
        cards.removeFirst()
        now += 100_000_000
        session.dispatchEvents()  // within half a second of the last look: not polled yet
        #expect(routes.count == 1)
        now += 410_000_000
        session.dispatchEvents()
        #expect(
            routes == [
                .cardsChanged(added: ["1: Scarlett 2i2 USB"], removed: []),
                .cardsChanged(added: [], removed: ["0: HDA Intel PCH"]),
            ])
    }

    /// Activation opens the driver's unit with the session's preferences, sizes every unit of the graph by
    /// the grant before it initializes, and refuses out-of-order calls; the unit's events arrive as the
    /// session's interruption and route-change notices.
    @Test func activationSizesTheGraphAndRelaysEvents() throws {
        let session = AudioSession(driver: DummyDriver.driver(inputAvailable: true), device: "dummy")
        try session.setPreferredIOBufferFrames(128)
        try session.setPreferredSampleRate(44_100)
        #expect(session.isInputAvailable)
        let rig = try DummyRig(session)
        defer { rig.close() }
        #expect(session.grant?.period == 128 && session.sampleRate == 44_100)
        #expect(rig.graph.units.allSatisfy { $0.maximumFramesPerSlice >= 128 })
        #expect(throws: AudioUnitError.self) { try session.setPreferredPeriods(4) }
        var interruptions: [AudioSession.Interruption] = []
        var routes: [AudioSession.RouteChangeReason] = []
        session.addInterruptionListener { interruptions.append($0) }
        session.addRouteChangeListener { routes.append($0) }
        try rig.graph.start()
        let period = rig.io.pull()
        #expect(period.count == 256)  // 128 stereo frames
        #expect(period.contains { $0 != 0 })  // the tone, through the converting kernel
        rig.io.post(.interruptionBegan(errno: -19))
        rig.io.post(.underrun)
        session.dispatchEvents()
        rig.io.post(.interruptionEnded)
        session.dispatchEvents()
        #expect(interruptions == [.began, .ended])
        #expect(
            routes.filter { if case .cardsChanged = $0 { false } else { true } } == [
                .deviceLost(errno: -19), .deviceBack,
            ])
        #expect(rig.io.statistics.xruns == 1 && rig.io.statistics.framesPlayed == 128)
        #expect(throws: AudioUnitError.self) { try session.deactivate() }  // still running
    }

    /// A frame limit ends the run on its frame, as the ALSA unit's does; the host times follow the clock.
    @Test func theFrameLimitStopsRendering() throws {
        let session = AudioSession(driver: DummyDriver.driver(), device: "dummy")
        try session.setPreferredIOBufferFrames(64)
        let rig = try DummyRig(session)
        defer { rig.close() }
        rig.io.stopRendering(after: 128)
        try rig.graph.start()
        #expect(!rig.io.pull().isEmpty && !rig.io.hasReachedFrameLimit)
        #expect(!rig.io.pull().isEmpty && rig.io.hasReachedFrameLimit)
        #expect(rig.io.pull().isEmpty)
        #expect(rig.io.statistics.framesPlayed == 128)
    }
}

/// Dummy I/O ← tone generator on a session, activated and initialized, not started.
final class DummyRig {
    let graph: AudioGraph
    let io: DummyIOUnit
    let session: AudioSession

    init(_ session: AudioSession) throws {
        self.session = session
        let registry = BuiltInUnits.registry()
        registry.register(session.outputComponent)
        graph = AudioGraph(registry: registry)
        let output = try graph.addNode(DummyIOUnit.componentDescription)
        let node = try graph.addNode(ToneGeneratorUnit.componentDescription)
        graph.open()
        io = try graph.unit(for: output) as! DummyIOUnit
        try graph.connectNodeInput(node, sourceOutput: 0, output, destinationInput: 0)
        try session.activate(for: io, sizing: graph.units)
        try graph.initialize()
    }

    func close() {
        try? graph.stop()
        try? graph.uninitialize()
        try? session.deactivate()
    }
}

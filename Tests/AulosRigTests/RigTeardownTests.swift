import AulosCore
import AulosGraph
import AulosMIDI
import AulosRig
import AulosUnits
import Testing

/// A closed playback rig frees its graph, transport and timeline player (checked for both instruments).
@Suite struct RigTeardownTests {
    @Test(arguments: [InstrumentChoice.synth, .sampler])
    func playbackRigIsFreed(instrument: InstrumentChoice) throws {
        weak var weakRig: PlaybackRig?
        weak var weakGraph: AudioGraph?
        weak var weakTransport: HostTransport?
        weak var weakPlayer: MIDITimelinePlayer?
        do {
            let rig = try PlaybackRig(
                Rig(name: "x", parts: [Rig.Part(name: "p", instrument: instrument, channels: [1])]))
            weakRig = rig
            weakGraph = rig.graph
            weakTransport = rig.transport
            weakPlayer = rig.timelinePlayer
            rig.close()
        }
        #expect(weakRig == nil, "rig")
        #expect(weakGraph == nil, "graph")
        #expect(weakTransport == nil, "transport")
        #expect(weakPlayer == nil, "timeline player")
    }
}

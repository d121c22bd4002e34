import AulosFluid
import AulosRig
import Testing

/// A sampler locks its font's samples in memory (FluidSynth's `synth.lock-memory`) for live play only: an
/// offline render has no deadline to miss, and locking a large font's whole sample pool was about half of
/// `aulos render`'s start-up beyond `fluidsynth -F`'s.
@Suite struct SamplerMemoryLockTests {
    @Test func anOfflineRigsSamplersDoNotLockTheirSamples() throws {
        #expect(FluidSynthSamplerUnit().locksSampleMemory, "a sampler made alone keeps FluidSynth's default")
        let rig = try Rig(yaml: "parts:\n  - instrument: sampler\n    channels: [1]\n")
        let playback = try PlaybackRig(rig, fileSample: .float32)
        defer { playback.close() }
        #expect((playback.instruments[0] as! FluidSynthSamplerUnit).locksSampleMemory == false)
    }
}

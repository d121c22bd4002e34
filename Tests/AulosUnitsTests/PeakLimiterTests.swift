import AulosCore
import AulosTestSupport
import AulosUnits
import Testing

/// The output stage as a unit: gain, ceiling and latency as it reports them, its counters, and a render
/// path that allocates nothing while it limits.
@Suite struct PeakLimiterTests {
    /// A full-scale 997 Hz sine turned up 12 dB: held at the ceiling, counted, delayed by the latency.
    @Test func aLoudSineIsHeldAtTheCeilingAndCounted() throws {
        let rig = try EffectRig(PeakLimiterUnit.componentDescription, signal: -997) { unit in
            try unit.setParameter(PeakLimiterUnit.Parameter.gain.id, value: 12)
        }
        let limiter = rig.effect as! PeakLimiterUnit
        #expect(limiter.latencyFrames == 64)
        #expect(abs(limiter.latency - 64.0 / 48_000) < 1e-9)
        let left = rig.render(48_000, slice: 64)
        #expect(left.prefix(64).allSatisfy { $0 == 0 }, "the look-ahead: silence first")
        let peak = left.map(abs).max()!
        // Held at the ceiling less the detector's margin: -1.2 dBFS.
        #expect(peak <= 0.871 && peak > 0.86, "peak \(peak)")
        let activity = limiter.activity
        #expect(activity.limitedSamples > 40_000)
        #expect(abs(activity.deepestReduction - 13) < 0.5, "\(activity.deepestReduction) dB")
        #expect(activity.fullScaleSamples == 0)
    }

    /// Not limiting: the gain alone, no delay, and what passes full scale is counted, not touched.
    @Test func offItIsTheGainAloneAndCountsTheOvers() throws {
        let rig = try EffectRig(PeakLimiterUnit.componentDescription, signal: -997) { unit in
            (unit as! PeakLimiterUnit).limiting = false
            try unit.setParameter(PeakLimiterUnit.Parameter.gain.id, value: 6)
        }
        let limiter = rig.effect as! PeakLimiterUnit
        #expect(limiter.latencyFrames == 0 && limiter.latency == 0)
        let left = rig.render(4800, slice: 64)
        #expect(left[0] == 0 && left[1] != 0, "no delay")
        #expect(left.map(abs).max()! > 1.9)
        #expect(limiter.activity.fullScaleSamples > 0 && limiter.activity.limitedSamples == 0)
    }

    @Test func limitingAllocatesNothing() throws {
        let rig = try EffectRig(PeakLimiterUnit.componentDescription, signal: 3) { unit in
            try unit.setParameter(PeakLimiterUnit.Parameter.gain.id, value: 18)
        }
        for cycle in 0..<5_000 {
            if cycle % 50 == 0 {
                try rig.effect.setParameter(PeakLimiterUnit.Parameter.gain.id, value: Float(cycle % 24))
                try rig.effect.setParameter(PeakLimiterUnit.Parameter.release.id, value: Float(20 + cycle % 500))
            }
            rig.harness.renderSlice(64, counting: true)
        }
        #expect((rig.effect as! PeakLimiterUnit).activity.limitedSamples > 0)
        try expectNoAllocations(rig.harness.allocations)
    }
}

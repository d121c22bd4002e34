import AulosSFZ
import Foundation
import Testing

@Suite struct ModelTests {
    @Test func aBareRegionHasTheSpecificationsDefaults() throws {
        let region = try library("<region> sample=a.wav").regions[0]
        #expect(region.lowKey == 0 && region.highKey == 127 && region.lowVelocity == 0 && region.highVelocity == 127)
        #expect(
            region.lowChannel == 1 && region.highChannel == 16 && region.lowBend == -8192 && region.highBend == 8192)
        #expect(region.lowRandom == 0 && region.highRandom == 1 && region.sequenceLength == 1)
        #expect(region.sequencePosition == 1 && region.trigger == .attack && region.group == 0 && region.offBy == 0)
        #expect(region.offMode == .fast && region.polyphony == nil && region.sustainSwitch && region.sostenutoSwitch)
        #expect(region.keycenter == 60 && region.pitchKeytrack == 100 && region.tune == 0 && region.transpose == 0)
        #expect(region.bendUp == 200 && region.bendDown == -200 && region.pitchVeltrack == 0)
        #expect(region.volume == 0 && region.amplitude == 100 && region.pan == 0 && region.width == 100)
        #expect(region.ampVeltrack == 100 && region.ampVelcurve.isEmpty && region.ampKeytrack == 0)
        #expect(region.amplitudeEnvelope == SFZRegionEnvelope() && region.amplitudeEnvelope.sustain == 100)
        #expect(region.amplitudeEnvelope.release == 0 && region.filterEnvelope.depth == 0)
        #expect(region.filterType == .lpf2p && region.cutoff == nil && region.resonance == 0)
        #expect(region.loopMode == nil && region.loopStart == nil && region.end == nil && region.offset == 0)
        #expect(region.amplitudeLFO == SFZRegionLFO() && region.volumeControllers.isEmpty)
        #expect(region.crossfadeInKeys == SFZSpan(low: 0, high: 0))
        #expect(region.crossfadeOutKeys == SFZSpan(low: 127, high: 127))
        #expect(region.crossfadeKeyCurve == .power && !region.isSilenced && region.isAttack)
    }

    /// ARIA's level volumes are read at their headers and inherited, beside the region's own `volume`.
    @Test func levelVolumesAreReadBesideVolume() throws {
        let region = try library(
            "<global> global_volume=-6 <master> master_volume=-3 <group> group_volume=-2 volume=-1\n"
                + "<region> sample=a.wav"
        ).regions[0]
        #expect(region.globalVolume == -6 && region.masterVolume == -3 && region.groupVolume == -2)
        #expect(region.volume == -1)
    }

    @Test func opcodesSetTheirFieldsAndClampToTheirRanges() throws {
        let lib = try library(
            """
            <region> sample=a.wav key=c#3 pan=300 volume=-200 tune=12 transpose=-2 loop_mode=loop_sustain
             loop_start=100 loop_end=2000 offset=10 end=5000 trigger=release rt_decay=6 group=3 off_by=4
             off_mode=time off_time=0.2 polyphony=4 note_polyphony=1 sustain_sw=off seq_length=4 seq_position=2
             lorand=0.25 hirand=0.5 locc1=64 hicc1=100 sw_lokey=c1 sw_hikey=d1 sw_last=c#1 sw_default=c1
             sw_label=Legato pitch_keycenter=sample amp_velcurve_64=0.5 amp_velcurve_1=0.1
            <region> sample=*sine pitch_keycenter=a4 pitch_keytrack=0 ampeg_attack=0.5 ampeg_vel2attack=-0.4
             ampeg_attackcc1=1 ampeg_release_oncc7=2 fileg_depth=1200 fileg_vel2depth=600 pitcheg_decay=0.3
             amplfo_freq=5 amplfo_depth=3 fillfo_depthcc1=300 pitchlfo_delay=1 pitchlfo_fade=0.5
             volume_oncc7=-12 volume_curvecc7=4 pan_oncc10=100 cutoff=500 cutoff_cc1=2400 resonance=50
             fil_type=hpf_1p pitch_oncc1=100 tune_oncc2=50 amplitude_oncc11=100 amplitude_smoothcc11=20
             xfin_lokey=c4 xfin_hikey=e4 xfout_lovel=100 xfout_hivel=120 xfin_locc1=10 xfin_hicc1=20 xf_velcurve=gain
            """)
        let a = lib.regions[0]
        #expect(a.lowKey == 49 && a.highKey == 49 && a.keycenterFromSample)
        #expect(a.pan == 100 && a.volume == -144 && a.tune == 12 && a.transpose == -2)
        #expect(
            a.loopMode == .loopSustain && a.loopStart == 100 && a.loopEnd == 2000 && a.offset == 10 && a.end == 5000)
        #expect(a.trigger == .release && a.releaseDecay == 6 && a.group == 3 && a.offBy == 4 && a.offMode == .time)
        #expect(a.offTime == 0.2 && a.polyphony == 4 && a.notePolyphony == 1 && !a.sustainSwitch)
        #expect(a.sequenceLength == 4 && a.sequencePosition == 2 && a.lowRandom == 0.25 && a.highRandom == 0.5)
        #expect(a.controllerRanges == [SFZCCRange(controller: 1, low: 64, high: 100)])
        #expect(a.switchLowKey == 24 && a.switchHighKey == 26 && a.switchLast == 25 && a.switchDefault == 24)
        #expect(a.switchLabel == "Legato")
        #expect(a.ampVelcurve == [SFZCurvePoint(input: 1, value: 0.1), SFZCurvePoint(input: 64, value: 0.5)])
        let b = lib.regions[1]
        #expect(b.sample == .generator("*sine") && b.samplePath == nil && b.keycenter == 69 && b.pitchKeytrack == 0)
        #expect(b.amplitudeEnvelope.attack == 0.5 && b.amplitudeEnvelope.velocityToAttack == -0.4)
        #expect(
            b.amplitudeEnvelope.controllers == [
                SFZEnvelopeControl(stage: .attack, controller: 1, amount: 1),
                SFZEnvelopeControl(stage: .release, controller: 7, amount: 2),
            ])
        #expect(
            b.filterEnvelope.depth == 1200 && b.filterEnvelope.velocityToDepth == 600 && b.pitchEnvelope.decay == 0.3)
        #expect(b.amplitudeLFO.frequency == 5 && b.amplitudeLFO.depth == 3 && b.pitchLFO.delay == 1)
        #expect(b.filterLFO.depthControllers == [SFZCCModulation(controller: 1, depth: 300)] && b.pitchLFO.fade == 0.5)
        #expect(b.volumeControllers == [SFZCCModulation(controller: 7, depth: -12, curve: 4)])
        #expect(b.panControllers == [SFZCCModulation(controller: 10, depth: 100)])
        #expect(b.cutoff == 500 && b.cutoffControllers == [SFZCCModulation(controller: 1, depth: 2400)])
        #expect(b.resonance == 40 && b.filterType == .hpf1p)
        #expect(
            b.pitchControllers == [
                SFZCCModulation(controller: 1, depth: 100), SFZCCModulation(controller: 2, depth: 50),
            ])
        #expect(b.amplitudeControllers == [SFZCCModulation(controller: 11, depth: 100, smooth: 20)])
        #expect(
            b.crossfadeInKeys == SFZSpan(low: 60, high: 64) && b.crossfadeOutVelocities == SFZSpan(low: 100, high: 120))
        #expect(b.crossfadeInControllers == [SFZCCRange(controller: 1, low: 10, high: 20)])
        #expect(b.crossfadeVelocityCurve == .gain && lib.warnings.isEmpty)
    }

    @Test func noteAndOctaveOffsetsShiftKeysReadAfterThem() throws {
        let lib = try library("<control> note_offset=2 octave_offset=-1\n<region> sample=a.wav lokey=60 hikey=c5")
        #expect(lib.regions[0].lowKey == 50 && lib.regions[0].highKey == 62)
    }

    @Test func velocityGainFollowsTheDefaultCurveVeltrackAndVelcurvePoints() throws {
        let lib = try library(
            """
            <region> sample=a.wav
            <region> sample=a.wav amp_veltrack=0
            <region> sample=a.wav amp_veltrack=50
            <region> sample=a.wav amp_velcurve_64=0.8
            <region> sample=a.wav amp_velcurve_1=1 amp_velcurve_127=1
            """)
        let r = lib.regions
        #expect(SFZGain.velocity(r[0], 127) == 1)
        #expect(abs(SFZGain.velocity(r[0], 64) - Float(64 * 64) / Float(127 * 127)) < 1e-6)
        #expect(SFZGain.velocity(r[1], 10) == 1)
        #expect(abs(SFZGain.velocity(r[2], 0) - 0.5) < 1e-6)
        #expect(abs(SFZGain.velocity(r[3], 64) - 0.8) < 1e-6)
        #expect(abs(SFZGain.velocity(r[3], 32) - 0.4) < 1e-6)
        #expect(abs(SFZGain.velocity(r[3], 127) - 1) < 1e-6)
        #expect(SFZGain.velocity(r[4], 20) == 1)
    }

    @Test func crossfadesSumToConstantPowerOrGain() throws {
        let lib = try library(
            """
            <region> sample=low.wav xfout_lokey=60 xfout_hikey=72
            <region> sample=high.wav xfin_lokey=60 xfin_hikey=72
            <region> sample=soft.wav xfout_lovel=40 xfout_hivel=90 xf_velcurve=gain
            <region> sample=loud.wav xfin_lovel=40 xfin_hivel=90 xf_velcurve=gain
            <region> sample=cc.wav xfin_locc1=0 xfin_hicc1=127
            <region> sample=cc2.wav xfout_locc1=0 xfout_hicc1=127
            """)
        let r = lib.regions
        for key in 50...80 {
            let low = SFZGain.crossfade(r[0], key: key, velocity: 100) { _ in 0 }
            let high = SFZGain.crossfade(r[1], key: key, velocity: 100) { _ in 0 }
            #expect(abs(low * low + high * high - 1) < 1e-5, "key \(key)")
            if key <= 60 { #expect(low == 1 && high == 0) }
            if key >= 72 { #expect(low == 0 && high == 1) }
        }
        for velocity in 1...127 {
            let soft = SFZGain.crossfade(r[2], key: 60, velocity: velocity) { _ in 0 }
            let loud = SFZGain.crossfade(r[3], key: 60, velocity: velocity) { _ in 0 }
            #expect(abs(soft + loud - 1) < 1e-5, "velocity \(velocity)")
        }
        for value in 0...127 {
            let a = SFZGain.crossfade(r[4], key: 60, velocity: 100) { $0 == 1 ? value : 0 }
            let b = SFZGain.crossfade(r[5], key: 60, velocity: 100) { $0 == 1 ? value : 0 }
            #expect(abs(a * a + b * b - 1) < 1e-5, "cc1 \(value)")
        }
        // No crossfade written: full gain everywhere, the edges included.
        let plain = try library("<region> sample=a.wav").regions[0]
        for key in [0, 127] { #expect(SFZGain.crossfade(plain, key: key, velocity: 127) { _ in 127 } == 1) }
    }

    @Test func curvesAreBuiltInOrDefinedByCurveSections() throws {
        let lib = try library(
            """
            <curve> curve_index=17 v000=0 v063=1 v127=0
            <curve> curve_index=2 v127=0.5
            <region> sample=a.wav volume_oncc7=-6 volume_curvecc7=17
            """)
        #expect(lib.curves[17]?[63] == 1 && lib.curves[17]?[127] == 0)
        #expect(abs((lib.curves[17]?[95] ?? 0) - 0.5) < 1e-6)
        // A library may redefine a built-in curve.
        #expect(lib.curves[2]?[127] == 0.5 && lib.curves[2]?[0] == 0)
        #expect(lib.curves[0]?[127] == 1 && lib.curves[1]?[0] == -1 && lib.curves[4]?[127] == 1)
        #expect(lib.regions[0].volumeControllers == [SFZCCModulation(controller: 7, depth: -6, curve: 17)])
    }

    @Test func theSummaryNamesKeysSwitchesAndWhatIsNotPlayed() throws {
        let lib = try library(
            """
            <global> sw_lokey=c1 sw_hikey=d1
            <region> sample=a.wav lokey=c3 hikey=c5 sw_last=c1 sw_label=Sustain
            <region> sample=b.wav lokey=c3 hikey=c5 sw_last=d1 sw_label=Staccato seq_length=2 foo=1
            <region> sample=c.wav key=c6 trigger=release
            """)
        #expect(lib.keyswitches == [.init(key: 24, label: "Sustain"), .init(key: 26, label: "Staccato")])
        #expect(lib.playedKeyRanges == [48...72])
        let summary = lib.summary()
        #expect(summary.contains("test.sfz: 3 regions, 3 sample files"))
        #expect(summary.contains("keys: c3–c5 (48–72)"))
        #expect(summary.contains("keyswitches: c1 (24) Sustain, d1 (26) Staccato"))
        #expect(summary.contains("triggers: attack 2, release 1"))
        #expect(summary.contains("round robin: sequences of 2"))
        #expect(summary.contains("lib/test.sfz:3: opcode foo is not supported"))
    }
}

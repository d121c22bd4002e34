import AulosCore
import AulosTestSupport
import Foundation
import Testing

@testable import AulosRig

/// The per-part CPU meter on a rig set rendered offline: each part charged with its own units' time, the
/// shared units and the notifications apart, each rig's peak kept only once it has played, and the rig-switch
/// prediction and warning from those figures. Loads are compared by ordering and ratio only (the machine may
/// be loaded); the prediction's arithmetic is checked exactly, from the meter's own figures.
@Suite struct RigCPUMeterTests {
    /// Rig One: Lead (channel 1, which plays) and Idle (channel 2, silent), Lead sending to a reverb return;
    /// rig Two: Pad; rig Three: Organ. Two and Three never play here.
    static func set() throws -> RigSet {
        let one = try Rig(
            yaml: "name: One\nreturns:\n  - name: hall\n    effects:\n      - unit: reverb\nparts:\n"
                + "  - name: Lead\n    instrument: synth\n    channels: [1]\n    eq: Rock\n    sends: {hall: 0.4}\n"
                + "  - name: Idle\n    instrument: synth\n    channels: [2]\n")
        let two = try Rig(yaml: "name: Two\nparts:\n  - name: Pad\n    instrument: synth\n")
        let three = try Rig(yaml: "name: Three\nparts:\n  - name: Organ\n    instrument: synth\n")
        return RigSet(
            name: "Set", controlChannel: 16,
            entries: [one, two, three].enumerated().map { RigSet.Entry(bank: 0, program: $0, rig: $1) })
    }

    @Test func partsAreChargedTheirOwnUnitsAndRigsTheirPeaks() throws {
        let playback = try PlaybackRig(set: try Self.set(), fileSample: .float32)
        defer { playback.close() }
        #expect(playback.parts.map(\.part.name) == ["Lead", "Idle", "Pad", "Organ"])
        // The Lead's units: its instrument and its EQ.
        #expect(playback.parts[0].units.count == 2)
        let meter = RigCPUMeter(rig: playback, period: 256)
        for note: UInt8 in [48, 52, 55, 60, 64, 67, 72, 76] {
            playback.scheduler.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: 0)
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        let started = Date()
        for slice in 1...400 {
            harness.renderSlice(256)
            if slice % 20 == 0 { meter.update(framesPlayed: harness.sampleTime, dspLoad: 0.5) }
        }
        let wall = Date().timeIntervalSince(started)

        // The part that plays costs more than the idle one beside it and than the rigs that play nothing.
        let (lead, idle, pad, organ) = (meter.parts[0], meter.parts[1], meter.parts[2], meter.parts[3])
        #expect(lead > 0 && idle > 0 && pad > 0 && organ > 0, "\(meter.parts)")
        #expect(lead > 2 * idle && lead > 2 * pad && lead > 2 * organ, "\(meter.parts)")
        // The mixers, the reverb return, the master EQ and the output are measured, and so are the notifications.
        #expect(meter.shared > 0 && meter.meters > 0)
        // Nothing counted twice: the buckets' time over the run fits within the time the render took.
        let audioSeconds = Double(harness.sampleTime) / 48_000
        let buckets = (meter.partMeans.reduce(0, +) + meter.sharedMean + meter.metersMean) * audioSeconds
        #expect(buckets <= wall, "\(buckets) s in buckets, \(wall) s rendering")

        // Rig One played; Two and Three did not: not yet measured, nothing predicted, no warning.
        #expect(meter.activeRig == 0)
        #expect((meter.peaks[0] ?? 0) >= meter.load(ofRig: 0) && (meter.peaks[0] ?? 0) > 0)
        #expect(meter.peaks[1] == nil && meter.peaks[2] == nil)
        let unmeasured = meter.prediction(switchingTo: 1)
        #expect(unmeasured.peak == nil && unmeasured.predicted == nil && unmeasured.fits == nil)
        #expect(unmeasured.warning == nil)

        // The prediction: the DSP load now, less the parts of the rig playing, plus the target's peak.
        let leaving = meter.load(ofRig: 0)
        meter.update(framesPlayed: harness.sampleTime, dspLoad: leaving + 0.3)  // no new frames: the total alone
        #expect(meter.load(ofRig: 0) == leaving)
        meter.injectPeak(0.95, ofRig: 1)
        meter.injectPeak(0.2, ofRig: 2)
        let heavy = meter.prediction(switchingTo: 1)
        #expect(abs(heavy.total - (leaving + 0.3)) < 1e-12 && heavy.leaving == leaving && heavy.peak == 0.95)
        #expect(abs((heavy.predicted ?? 0) - 1.25) < 1e-9)
        #expect(heavy.fits == false)
        let warning = try #require(heavy.warning)
        #expect(warning.hasPrefix("rig 2 'Two' may not fit the period: "), "\(warning)")
        #expect(warning.contains("+ 95 % its parts took at their peak") && warning.contains("= 125 %"), "\(warning)")
        #expect(warning.contains("over 90 %") && warning.contains("not a guarantee"), "\(warning)")
        #expect(!warning.contains("\n"))
        let light = meter.prediction(switchingTo: 2)
        #expect(abs((light.predicted ?? 0) - 0.5) < 1e-9 && light.fits == true && light.warning == nil)

        // Once Two plays, its peak is what it measured at most, never less than what was known.
        meter.noteSwitch(to: 1)
        for note: UInt8 in [60, 64, 67] {
            playback.scheduler.schedule(
                .noteOn(channel: 0, note: note, velocity: 100), at: harness.sampleTime, destination: 2)
        }
        for slice in 1...40 {
            harness.renderSlice(256)
            if slice % 20 == 0 { meter.update(framesPlayed: harness.sampleTime, dspLoad: 0.5) }
        }
        #expect(meter.activeRig == 1 && (meter.peaks[1] ?? 0) >= 0.95)
        #expect(meter.predictions.map(\.rig) == [0, 1, 2])
    }
}

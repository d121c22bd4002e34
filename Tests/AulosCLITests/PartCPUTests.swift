import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Per-part CPU through the live path, as a user sees it: `aulos play --device null` with its control socket,
/// the status read with `aulos status`. The figures are measured per unit on the render thread; the rig-switch
/// warning comes from each rig's peak the last time it played.
@Suite(.serialized) struct PartCPUTests {
    static func folder(_ name: String) throws -> String {
        let folder = NSTemporaryDirectory() + "aulos-cpu-\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    /// The parts' CPU, the shared units' and the notifications' add up to the DSP load the I/O thread measures
    /// around each period. Both are sums of nanoseconds over the same cycles (the means since the start), so a
    /// loaded machine moves both alike; the difference is the driver's own work around the graph.
    @Test func thePartsSharedAndMetersAddUpToTheDSPLoad() throws {
        let folder = try Self.folder("sum")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        name: Duo
        returns:
          - name: hall
            effects:
              - unit: reverb
        parts:
          - name: Lead
            instrument: synth
            channels: [1]
            eq: Rock
            sends: {hall: 0.5}
          - name: Pad
            instrument: synth
            channels: [2]
        """.write(toFile: folder + "/duo.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--rig", folder + "/duo.yaml", "--device", "null", "--slice", "256"],
            in: folder)
        #expect(try aulos.waitForStatus { $0["cpu"] != nil }, "\(aulos.stderr)")
        // Chords on both parts, held: the parts do real work for the whole stretch measured.
        for (channel, notes) in [(0x90, [48, 52, 55, 60, 64]), (0x91, [36, 43, 67, 72])] {
            for note in notes {
                let reply = aulos.request("midi \(String(channel, radix: 16)) \(String(note, radix: 16)) 64") ?? ""
                #expect(reply.contains(#""ok":true"#), "\(reply)")
            }
        }
        #expect(try aulos.waitForStatus { (Self.number($0["seconds"]) ?? 0) > 3 }, "\(aulos.stderr)")
        let status = try #require(try aulos.status())
        let cpu = try #require(status["cpu"] as? [String: Any])
        let parts = try #require(cpu["parts"] as? [[String: Any]])
        #expect(parts.map { $0["part"] as? String } == ["Lead", "Pad"])
        let partMeans = parts.compactMap { Self.number($0["mean"]) }
        let shared = try #require(Self.number(cpu["sharedMean"]))
        let meters = try #require(Self.number(cpu["metersMean"]))
        let mean = try #require(Self.number(status["meanLoad"]))
        let sum = partMeans.reduce(0, +) + shared + meters
        #expect(partMeans.count == 2 && partMeans.allSatisfy { $0 > 0 } && shared > 0 && meters > 0, "\(cpu)")
        #expect(mean > 0 && abs(sum - mean) <= 0.1 * mean, "buckets \(sum) against the DSP load \(mean): \(cpu)")
        // The smoothed figures are there for the panel, each part's with its rig.
        #expect(parts.allSatisfy { Self.number($0["cpu"]) != nil && $0["rig"] as? Int == 0 })
        // `aulos status` says it in a line.
        let text = try runAulos(["status", "--socket", aulos.socketPath]).stdout
        #expect(
            text.contains("cpu: Lead ") && text.contains(", Pad ") && text.contains("; shared ")
                && text.contains("; meters and recorders "), "\(text)")
        aulos.signal(SIGINT)
        #expect(aulos.waitForExit() == 0, "\(aulos.stderr)")
    }

    /// A rig whose parts peaked too high the last time it played (the peak injected with AULOS_INJECT_RIG_PEAK,
    /// the prediction and the warning the real ones) is warned of when it is switched to, from the control
    /// socket and by a program change alike; a rig that never played is "not yet measured" and not warned of.
    @Test func aSwitchToARigThatWouldNotFitIsWarnedOf() throws {
        let folder = try Self.folder("switch")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["One", "Two", "Three"] {
            try "name: \(name)\nparts:\n  - name: \(name) Part\n    instrument: synth\n".write(
                toFile: folder + "/\(name.lowercased()).yaml", atomically: true, encoding: .utf8)
        }
        try """
        name: Set
        control-channel: 16
        rigs:
          - program: 0
            rig: one.yaml
          - program: 1
            rig: two.yaml
          - program: 2
            rig: three.yaml
        """.write(toFile: folder + "/set.yaml", atomically: true, encoding: .utf8)
        let aulos = try BackgroundAulos(
            ["play", "--rig", folder + "/set.yaml", "--device", "null"], in: folder,
            environment: ["AULOS_INJECT_RIG_PEAK": "2:0.97"])
        // Rig One plays and is measured; Two is known (injected) not to fit; Three has not played.
        var loads: [[String: Any]] = []
        #expect(
            try aulos.waitForStatus { status in
                loads = status["rigLoads"] as? [[String: Any]] ?? []
                return loads.count == 3 && loads[0]["measured"] as? Bool == true
            }, "\(aulos.stderr)")
        #expect(loads.map { $0["name"] as? String } == ["One", "Two", "Three"])
        #expect(loads[1]["fits"] as? Bool == false && Self.number(loads[1]["peak"]) == 0.97, "\(loads)")
        #expect(loads[1]["measured"] as? Bool == true && (Self.number(loads[1]["predicted"]) ?? 0) >= 0.97)
        #expect(loads[2]["measured"] as? Bool == false && loads[2]["peak"] == nil && loads[2]["fits"] == nil)
        // (Whether One itself fits is left alone: on a loaded machine a debug build's rig may not.)
        let text = try runAulos(["status", "--socket", aulos.socketPath]).stdout
        #expect(text.contains("2 'Two' peak 97.0 %, may not fit ("), "\(text)")
        #expect(text.contains("3 'Three' not yet measured"), "\(text)")

        let warning = "aulos: warning: rig 2 'Two' may not fit the period: "
        #expect(aulos.request("rig 2")?.contains(#""rig":"Two""#) == true)
        #expect(try aulos.waitForStatus { _ in aulos.stderr.contains(warning) }, "\(aulos.stderr)")
        let line = aulos.stderr.split(separator: "\n").first { $0.hasPrefix(warning) }.map(String.init) ?? ""
        #expect(line.contains("+ 97 % its parts took at their peak when it last played = "), "\(line)")
        #expect(aulos.stderr.contains("rig 2: Two (chosen from the control socket)"), "\(aulos.stderr)")
        // Back to One and to Three (not yet measured: never warned of).
        #expect(aulos.request("rig 1")?.contains(#""rig":"One""#) == true)
        #expect(aulos.request("rig 3")?.contains(#""rig":"Three""#) == true)
        #expect(aulos.request("rig 1")?.contains(#""rig":"One""#) == true)
        // A program change on the control channel: the same warning, the road named.
        #expect(aulos.request("midi cf 01")?.contains(#""ok":true"#) == true)
        #expect(
            try aulos.waitForStatus { _ in aulos.stderr.contains("rig 2: Two (chosen by program change)") },
            "\(aulos.stderr)")
        aulos.signal(SIGINT)
        #expect(aulos.waitForExit() == 0, "\(aulos.stderr)")
        let warnings = aulos.stderr.split(separator: "\n").filter { $0.contains("may not fit the period") }
        #expect(warnings.filter { $0.hasPrefix(warning) }.count == 2, "\(aulos.stderr)")
        #expect(!warnings.contains { $0.contains("'Three'") }, "\(aulos.stderr)")
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The one typed control road seen from outside: a rig and a part whose names hold spaces chosen on the
/// control socket (quoted), over OSC (a string as it is) and from the panel; the panel's HTTP status from
/// the reply's kind; a bad request answered in one line on every road.
@Suite(.serialized) struct ControlRoadTests {
    @Test func namesWithSpacesWorkOnEveryRoad() throws {
        let folder = NSTemporaryDirectory() + "aulos-road-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "name: One\nparts:\n  - name: Lead\n    instrument: synth\n".write(
            toFile: folder + "/one.yaml", atomically: true, encoding: .utf8)
        try "name: Grand Piano\nparts:\n  - name: Left Hand\n    instrument: synth\n".write(
            toFile: folder + "/grand.yaml", atomically: true, encoding: .utf8)
        try "name: Set\nrigs:\n  - program: 0\n    rig: one.yaml\n  - program: 1\n    rig: grand.yaml\n".write(
            toFile: folder + "/set.yaml", atomically: true, encoding: .utf8)
        let oscPort = UInt16(20_000 + (getpid() + 11_003) % 20_000)
        let webPort = oscPort + 1
        let aulos = try BackgroundAulos(
            [
                "play", "--service", "--rig", folder + "/set.yaml", "--device", "null", "--osc", "127.0.0.1:\(oscPort)",
                "--web", "127.0.0.1:\(webPort)",
            ], in: folder)
        #expect(try aulos.waitForStatus { ($0["rigs"] as? [String])?.count == 2 }, "\(aulos.stderr)")

        // The control socket: quoted.
        let chosen = aulos.request(#"rig "Grand Piano""#) ?? "no reply"
        #expect(chosen.contains(#""rig":"Grand Piano""#), "\(chosen)")
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Grand Piano" })
        let set = aulos.request(#"set "Left Hand.volume" 0.5"#) ?? "no reply"
        #expect(set.contains(#""ok":true"#) && set.contains("Left Hand.volume"), "\(set)")
        #expect(aulos.request(#"get "Left Hand.volume""#)?.contains(#""value":0.5"#) == true)
        #expect(aulos.request("rig 1")?.contains(#""rig":"One""#) == true)
        // A part of a rig not playing is not set behind the player's back: it is named, with the way there.
        let elsewhere = aulos.request(#"set "Left Hand.volume" 0.3"#) ?? "no reply"
        #expect(
            elsewhere.contains(#""error""#) && elsewhere.contains("'Left Hand' is in rig 2, Grand Piano"),
            "\(elsewhere)")
        // An EQ curve is answered by its name, not its index (`output.eq = 16.0` before): the first `set` puts the
        // EQ into the signal path, the second and the `get` reach its curve parameter.
        for _ in 0..<2 {
            let eq = aulos.request("set output.eq Rock") ?? "no reply"
            #expect(eq.contains(#""value":"Rock""#), "\(eq)")
        }
        let curve = aulos.request("get output.eq") ?? "no reply"
        #expect(curve.contains(#""value":"Rock""#), "\(curve)")

        // OSC: the string as it is.
        let client = OSCCommandTests.Client(port: oscPort)
        let osc = client.send(OSCCommandTests.Client.message("/aulos/rig", ["Grand Piano"]))
        #expect(osc?.address == "/aulos/reply" && osc?.text.contains("Grand Piano") == true, "\(osc.debugDescription)")
        #expect(try aulos.waitForStatus { $0["rig"] as? String == "Grand Piano" })
        let bad = client.send(OSCCommandTests.Client.message("/aulos/rig", ["Upright Piano"]))
        #expect(bad?.text.contains("no rig 'Upright Piano'") == true, "\(bad.debugDescription)")

        // The panel: the same words in JSON; the status code from the reply's kind.
        let csrf = try #require(
            WebPanelTests.json(WebPanelTests.http("GET", "/api/session", port: webPort)?.body ?? "")?["csrf"] as? String
        )
        func panel(_ line: String) -> WebPanelTests.Response? {
            let body = String(decoding: try! JSONSerialization.data(withJSONObject: ["request": line]), as: UTF8.self)
            return WebPanelTests.http(
                "POST", "/api/control", port: webPort, headers: ["X-Aulos-CSRF": csrf], body: body)
        }
        let one = panel("rig One")
        #expect(one?.status == 200 && one?.body.contains(#""rig":"One""#) == true, "\(one.debugDescription)")
        let grand = panel(#"rig "Grand Piano""#)
        #expect(grand?.status == 200 && grand?.body.contains("Grand Piano") == true, "\(grand.debugDescription)")
        let missing = panel(#"rig "Upright Piano""#)
        #expect(missing?.status == 400 && missing?.body.contains(#""error""#) == true, "\(missing.debugDescription)")
        let unknown = panel("quit now")
        #expect(unknown?.status == 400 && unknown?.body.contains("unknown request") == true)
        let unterminated = panel(#"rig "Grand"#)
        #expect(unterminated?.status == 400 && unterminated?.body.contains("quote") == true)
        #expect(panel(#"set "Left Hand.volume" 0.25"#)?.status == 200)
        #expect(aulos.request(#"get "Left Hand.volume""#)?.contains(#""value":0.25"#) == true)

        // A bad socket request: one line, and the instrument plays on.
        let refused = aulos.request("set Lead.cutoff") ?? "no reply"
        #expect(refused.hasPrefix(#"{"error":"unknown request"#), "\(refused)")
        #expect(aulos.process.isRunning)

        // Every rig switch is in the log with the road it came by (only program changes' were).
        for line in [
            "rig 2: Grand Piano (chosen from the control socket)", "rig 2: Grand Piano (chosen from OSC)",
            "rig 1: One (chosen from the web panel)",
        ] {
            #expect(aulos.stderr.contains(line), "no '\(line)' in the log:\n\(aulos.stderr)")
        }
    }
}

import AulosCore
import AulosMIDI
import AulosRig
import AulosTestSupport
import Testing

/// A rig's snapshots: read, written and checked like every key; recalled while the rig plays, they leave it
/// sounding as the same state built from a file does, sample for sample, once the parameters have glided
/// there.
@Suite struct SnapshotTests {
    static let parts =
        "parts:\n  - name: Lead\n    instrument: synth\n    preset: Warm Pad\n    channels: [1, 2]\n"
        + "    eq: Flat\n"

    /// A chord half a second in, rendered for two seconds from `rig` (its snapshot `recalling` recalled
    /// before the first slice, its programs scheduled at frame 0).
    func render(_ yaml: String, recalling snapshot: String? = nil) throws -> [Float] {
        let playback = try PlaybackRig(try Rig(yaml: yaml), fileSample: .float32)
        defer { playback.close() }
        // What a session plays first: the rig's own prelude (its parts' banks and programs).
        playback.timelinePlayer.play(MIDITimeline(playback.prelude))
        if let snapshot {
            _ = try playback.recall(snapshot, ofRig: 0) { part, messages in
                for message in messages {
                    playback.scheduler.schedule(
                        TimedMIDIEvent(
                            sampleTime: 0, destination: UInt16(part), status: message.status, data1: message.data1,
                            data2: message.data2))
                }
            }
        }
        for note: UInt8 in [60, 64, 67] {
            playback.scheduler.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: 24_000)
            playback.scheduler.schedule(.noteOn(channel: 1, note: note - 12, velocity: 90), at: 24_000)
        }
        let harness = RenderHarness(playback.graph.renderEntry!, format: playback.fileFormat)
        var samples: [Float] = []
        for _ in 0..<375 {
            harness.renderSlice(256)
            samples += harness.interleaved(frames: 256)
        }
        return samples
    }

    @Test func aRecalledSnapshotSoundsAsTheSameStateBuiltFromAFile() throws {
        let snapshot =
            "snapshots:\n  - name: Verse\n    values: {Lead.volume: 0.5, Lead.pan: -0.3, Lead.cutoff: 900, "
            + "Lead.eq: Rock, output.volume: 0.8}\n    programs: {Lead: {2: 5}}\n"
        let recalled = try render("output:\n  eq: Flat\n" + Self.parts + snapshot, recalling: "verse")
        let built = try render(
            "output:\n  volume: 0.8\n  eq: Flat\n"
                + Self.parts.replacingOccurrences(of: "eq: Flat", with: "eq: Rock")
                + "    volume: 0.5\n    pan: -0.3\n    parameters: {cutoff: 900}\n    programs: {2: 5}\n")
        let plain = try render("output:\n  eq: Flat\n" + Self.parts + snapshot)
        #expect(built.map(abs).max()! > 0.01)
        let first = zip(recalled, built).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(first == nil, "first different frame \((first ?? 0) / 2)")
        #expect(plain != built, "the snapshot changes the sound")
    }

    /// A program change on the rig's snapshot channel recalls the snapshot answering it and is not played;
    /// one no snapshot answers is dropped; other channels, and the live player's file, play as before.
    @Test func programChangesOnTheSnapshotChannelRecallSnapshots() throws {
        let yaml = Self.parts + "snapshot-channel: 2\nsnapshots:\n  - name: Verse\n  - name: Chorus\n    program: 7\n"
        let playback = try PlaybackRig(try Rig(yaml: yaml))
        defer { playback.close() }
        var router = RigRouter(rig: playback)
        for (program, expected) in [(0, 0), (7, 1), (1, nil)] as [(UInt8, Int?)] {
            let routed = router.route(ChannelMessage(status: 0xC1, data1: program), from: .file)
            #expect(routed.deliveries.isEmpty, "program \(program) is not played")
            if let expected {
                guard case .snapshotRecalled(rig: 0, let snapshot) = routed.actions.first else {
                    Issue.record("program \(program): \(routed.actions)")
                    continue
                }
                #expect(snapshot == expected)
            } else {
                #expect(routed.actions.isEmpty, "program \(program) recalls nothing")
            }
        }
        #expect(router.route(ChannelMessage(status: 0xC0, data1: 7), from: .file).deliveries.count == 1)
        var player = RigRouter(rig: playback, switchingRigs: false)
        let played = player.route(ChannelMessage(status: 0xC1, data1: 7), from: .file)
        #expect(played.deliveries.count == 1 && played.actions.isEmpty, "the player's file plays whole")
    }

    @Test func snapshotsAreReadWrittenAndChecked() throws {
        let yaml =
            Self.parts + "snapshots:\n  - name: Verse\n    values: {Lead.cutoff: 900, Lead.eq: Rock}\n"
            + "    programs: {Lead: {1: [1, 5]}}\n  - name: Chorus\n"
        let rig = try Rig(yaml: yaml)
        #expect(rig.snapshots.map(\.name) == ["Verse", "Chorus"])
        #expect(rig.snapshots[0].programs == ["Lead": [1: Rig.Program(bank: 1, program: 5)]])
        #expect(try Rig(yaml: rig.yaml()) == rig, "\(rig.yaml())")
        let recalling = try Rig(
            yaml: yaml.replacingOccurrences(of: "  - name: Chorus\n", with: "  - name: Chorus\n    program: 9\n")
                + "snapshot-channel: 16\n")
        #expect(recalling.snapshotChannel == 16 && recalling.snapshots.map(\.program) == [nil, 9])
        #expect(try Rig(yaml: recalling.yaml()) == recalling, "\(recalling.yaml())")
        for (yaml, expected) in [
            (
                Self.parts + "snapshots:\n  - name: A\n  - name: B\n    program: 0\n",
                "snapshots[1].program: program 0 recalls snapshot 'A' already"
            ),
            (Self.parts + "snapshots:\n  - name: A\n    program: 128\n", "snapshots[0].program"),
            (Self.parts + "snapshot-channel: 17\n", "snapshot-channel"),
            (Self.parts + "snapshots:\n  - name: A\n  - name: A\n", "'A' names an earlier snapshot too"),
            (Self.parts + "snapshots:\n  - values: {}\n", "missing 'name'"),
            (Self.parts + "snapshots:\n  - name: A\n    programs: {Bass: {1: 2}}\n", "no part 'Bass'"),
            (Self.parts + "snapshots:\n  - name: A\n    programs: {Lead: {3: 2}}\n", "channel 3 is not one"),
        ] {
            do {
                _ = try Rig(yaml: yaml, file: "test.yaml")
                Issue.record("expected an error for \(yaml)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
        // Targets are checked as the rig is built, naming the snapshot and the line.
        for (values, expected) in [
            ("{Bass.volume: 1}", "snapshot 'A': no part 'Bass'"),
            ("{Lead.volume: 7}", "snapshot 'A': Lead.volume takes 0…2, not '7'"),
            ("{Lead.eq: Nope}", "snapshot 'A': Lead.eq takes"),
        ] {
            let rig = try Rig(yaml: Self.parts + "snapshots:\n  - name: A\n    values: \(values)\n", file: "t.yaml")
            do {
                let playback = try PlaybackRig(rig, fileSample: .float32)
                playback.close()
                Issue.record("expected an error for \(values)")
            } catch let error as RigError {
                #expect(error.message.contains(expected) && error.message.hasPrefix("t.yaml:"), "\(error.message)")
            }
        }
    }
}

import ArgumentParser
import AulosCore
import AulosIO
import AulosJACK
import AulosPlayback
import AulosRig

/// `aulos play`'s choice of audio driver and, for JACK, where its ports connect and what it does with JACK's
/// transport.
struct DriverOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The audio driver: alsa (a PCM, --device) or jack (a client of the running JACK server, or of PipeWire "
                + "with pipewire-jack). Default: the rig's driver: key, or alsa.", valueName: "alsa|jack"))
    var driver: String?

    @Option(
        name: .customLong("connect-outputs"),
        help: ArgumentHelp(
            "JACK: connect out_1, out_2 to these ports (comma-separated), or 'none'. Default: the physical "
                + "playback ports.", valueName: "port,port"))
    var connectOutputs: String?

    @Flag(
        name: .customLong("jack-timebase"),
        help: ArgumentHelp(
            "JACK: be the timebase master: publish the tempo (--tempo, or the control socket's tempo) as JACK's "
                + "bar/beat/tick. Without it, live play follows JACK's transport and a master's tempo."))
    var jackTimebase = false

    @Flag(
        name: .customLong("jack-part-outputs"),
        help: ArgumentHelp(
            "JACK: also give every part a pair of output ports of its own (PART_L, PART_R: after its effects and EQ, "
                + "before its volume and pan), for recording parts apart."))
    var jackPartOutputs = false

    func validate() throws {
        if let driver, !["alsa", "jack"].contains(driver) {
            throw ValidationError("--driver must be alsa or jack, not '\(driver)'")
        }
        // --driver alsa with them is a usage error; a rig that plays through ALSA is caught by `configure`.
        if driver == "alsa" && asksForJACK { throw ValidationError(Self.jackOnly) }
        if let connectOutputs, connectOutputs != "none",
            connectOutputs.split(separator: ",", omittingEmptySubsequences: false).contains(where: {
                !$0.contains(":") || $0.hasPrefix(":") || $0.hasSuffix(":")
            })
        {
            throw ValidationError(
                "--connect-outputs takes JACK port names as client:port, comma-separated (or 'none'), "
                    + "not '\(connectOutputs)'"
            )
        }
    }

    /// Options that only the JACK driver takes were given.
    var asksForJACK: Bool { connectOutputs != nil || jackTimebase || jackPartOutputs }
    static let jackOnly =
        "--connect-outputs, --jack-timebase and --jack-part-outputs are for the JACK driver (--driver jack)"

    /// Which driver plays `set`: --driver, else the first rig's `driver:` key, else ALSA.
    func driverName(for set: RigSet) -> String { driver ?? set.entries[0].rig.driver ?? "alsa" }

    /// Points `session` at the JACK unit when JACK plays: a client named after the rig, its outputs
    /// connected as asked, its inputs (with --input) from `input` ('physical' or ports), MIDI from hardware
    /// and the --connect names, the transport followed (live) or published (--jack-timebase).
    func configure(
        _ session: AudioSession, for set: RigSet, live: Bool, input: String?, midiConnections: [String],
        midiAutoconnect: Bool
    ) throws {
        guard driverName(for: set) == "jack" else {
            if asksForJACK { throw CommandError(Self.jackOnly) }
            return
        }
        if jackTimebase && !live { throw CommandError("--jack-timebase is for live play (no file)") }
        var settings = JACKSettings(clientName: JACKSettings.clientName(forRig: set.name))
        if let connectOutputs {
            settings.outputConnections =
                connectOutputs == "none" ? [] : connectOutputs.split(separator: ",").map(String.init)
        }
        if let input, input != "physical" { settings.inputConnections = input.split(separator: ",").map(String.init) }
        settings.midiAutoconnect = midiAutoconnect
        settings.midiConnections = midiConnections
        settings.transport = jackTimebase ? .master : (live ? .follow : .off)
        settings.partOutputs = jackPartOutputs
        let jack = AudioDriver.jack(settings)
        session.outputComponent = jack.outputComponent
        session.minimumSliceCapacity = jack.minimumSliceCapacity
        session.outputHasMIDIInput = jack.hasMIDIInput
    }
}

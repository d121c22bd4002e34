import ArgumentParser
import AulosALSA
import AulosNetworkMIDI

#if canImport(Glibc)
import Glibc
#endif

/// `aulos devices`: where sound can go and where MIDI can come from on this machine.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract:
            "List ALSA PCM devices (outputs and inputs), as 'aplay -L' names them, MIDI ports, and network MIDI "
            + "peers on the local network.")

    func run() throws {
        let devices = PCMDeviceList.all()
        print("PCM devices (use the name with --device):")
        for device in devices {
            let direction = device.playback && device.capture ? "out+in" : device.playback ? "out" : "in"
            print(
                "  \(device.name) [\(direction)\(device.isUnpaced ? ", unpaced" : "")]"
                    + (device.description.isEmpty ? "" : ": \(device.description)"))
        }
        if devices.contains(where: \.isUnpaced) {
            print(
                "unpaced devices take audio faster than real time: aulos plays to them paced by the clock "
                    + "(--unpaced: as fast as they take it)")
        }
        if devices.isEmpty { print("  none") }
        if access("/dev/snd", F_OK) != 0 {
            print("no sound card: this machine has no /dev/snd; only software PCMs (null, file, jack) can play")
        }
        print("MIDI ports (ALSA sequencer; use the name or client:port with --connect):")
        do {
            let ports = try SequencerPort.all().filter { $0.address.client != SequencerAddress.systemClient }
            for port in ports {
                let direction =
                    port.isReadable && port.isWritable
                    ? "in+out" : port.isReadable ? "in" : port.isWritable ? "out" : "-"
                print(
                    "  \(port.address) \(port.clientName): \(port.portName) "
                        + "[\(direction)\(port.isKernelClient ? ", device" : "")]"
                )
            }
            if ports.isEmpty { print("  none") }
        } catch {
            print("  none: \(error.message)")
        }
        listNetworkPeers()
    }

    /// The AppleMIDI and Network MIDI 2.0 services avahi-daemon finds in about a second (DNS-SD), this machine's
    /// own among them; without the daemon, one line says so and the command still succeeds.
    func listNetworkPeers() {
        print("Network MIDI peers (DNS-SD through Avahi):")
        switch AvahiBrowser.browse() {
        case .success(let peers):
            for peer in peers {
                let kind = peer.type == DNSServiceName.appleMIDI ? "AppleMIDI" : "Network MIDI 2.0"
                print(
                    "  \(StatusCommand.shown(peer.name)): \(kind) \(Self.endpoint(peer.address, peer.port)) on "
                        + "\(peer.interface) (\(StatusCommand.shown(peer.host))\(peer.isLocal ? ", this machine" : ""))"
                )
            }
            if peers.isEmpty { print("  none found") }
        case .failure(let unavailable):
            print("  none: \(unavailable.reason); peers can still be reached by address")
        }
    }

    /// `192.168.1.5:5004`, `[fe80::1]:5004`.
    static func endpoint(_ address: String, _ port: UInt16) -> String {
        address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }
}

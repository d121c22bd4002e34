import ArgumentParser
import AulosALSA

#if canImport(Glibc)
import Glibc
#endif

/// `aulos devices`: where sound can go and where MIDI can come from on this machine.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List ALSA PCM devices (outputs and inputs), as 'aplay -L' names them, and MIDI ports.")

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
    }
}

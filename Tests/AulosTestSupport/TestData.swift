#if canImport(Glibc)
import Glibc
#endif

/// Test data several test targets share: rigs as text and an ALSA device that needs no sound card.
public enum TestData {
    /// A split (bass below C4, an octave down, hard velocity; lead above, a velocity curve) and a pad on
    /// channel 2 at a fixed velocity, with the lead's cutoff on CC 1, the pad's volume on CC 7 of channel 2
    /// and the output volume on CC 20.
    public static let splitRig = """
        name: Split
        parts:
          - name: Bass
            instrument: synth
            preset: Round Bass
            channels: [1]
            keys: C-1-B3
            transpose: -12
            velocity: hard
          - name: Lead
            instrument: synth
            preset: Bright Lead
            channels: [1]
            keys: [C4, G9]
            velocity: {curve: 0.5, min: 40, max: 120}
          - name: Pad
            instrument: synth
            channels: [2]
            velocity: 90
        controls:
          - cc: 1
            target: Lead.cutoff
            min: 300
            max: 8000
          - cc: 7
            channel: 2
            target: pad.volume
          - cc: 20
            target: output.volume
        """

    /// Writes a rig set into `folder` (made if missing): rig One (a Glass Bell synth) on program 0, rig Two
    /// (a Bright Lead at half the output volume through the Rock EQ) on bank 1 program 5, switched on
    /// channel 16. Returns the set file's path.
    public static func writeRigSet(in folder: String) -> String {
        mkdir(folder, 0o755)
        TestFiles.write(
            "name: One\nparts:\n  - name: Sine\n    instrument: synth\n    preset: Glass Bell\n    channels: [1]\n",
            to: folder + "/one.yaml")
        TestFiles.write(
            "name: Two\noutput:\n  volume: 0.5\n  eq: Rock\nparts:\n"
                + "  - name: Saw\n    instrument: synth\n    preset: Bright Lead\n    channels: [1]\n",
            to: folder + "/two.yaml")
        TestFiles.write(
            "name: Set\ncontrol-channel: 16\nrigs:\n"
                + "  - program: 0\n    rig: one.yaml\n  - bank: 1\n    program: 5\n    rig: two.yaml\n",
            to: folder + "/set.yaml")
        return folder + "/set.yaml"
    }

    /// The name of the ALSA PCM `fileDeviceConfiguration` defines.
    public static let fileDevice = "aulostest"

    /// An in-process ALSA configuration defining `fileDevice`: alsa-lib's `file` PCM (writes a WAV of exactly
    /// what is played to `path`) over a `null` PCM (takes everything at once, unpaced). Real alsa-lib code
    /// paths, no sound card, no files or environment.
    public static func fileDeviceConfiguration(_ path: String) -> String {
        #"pcm.aulostest { type file slave.pcm { type null } file "\#(path)" format wav }"#
    }

    /// The bundled SoundFont with the sample headers for which `breaks(index)` holds moved 50 million frames
    /// past the sample data (what a corrupt or badly truncated font looks like to a loader). The font has
    /// 19 samples; index 18 is one no melodic program uses.
    public static func soundFont(breakingSamples breaks: (Int) -> Bool) -> [UInt8] {
        var bytes = TestFiles.bytes(TestFiles.bundledFont)
        func word(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = word(offset + 4)
            if bytes[offset..<(offset + 4)] == ArraySlice("LIST".utf8),
                bytes[(offset + 8)..<(offset + 12)] == ArraySlice("pdta".utf8)
            {
                var inner = offset + 12
                while inner + 8 <= offset + 8 + size {
                    let innerSize = word(inner + 4)
                    if bytes[inner..<(inner + 4)] == ArraySlice("shdr".utf8) {
                        for index in 0..<(innerSize / 46 - 1) where breaks(index) {
                            for field in 0..<4 {
                                let at = inner + 8 + index * 46 + 20 + field * 4
                                let moved = UInt32(word(at)) &+ 50_000_000
                                for byte in 0..<4 { bytes[at + byte] = UInt8(truncatingIfNeeded: moved >> (8 * byte)) }
                            }
                        }
                    }
                    inner += 8 + innerSize + (innerSize & 1)
                }
            }
            offset += 8 + size + (size & 1)
        }
        return bytes
    }
}

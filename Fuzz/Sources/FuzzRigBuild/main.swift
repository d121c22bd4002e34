// libFuzzer entry: a rig built and played, not only read. The input is split at "\n%%%\n" into a rig file
// (rig.yaml) and the files it may name, written to a private folder that is the working directory: a
// wavetable (table.wav), a Scala scale and keyboard mapping (scale.scl, map.kbm) and a SoundFont (font.sf2).
// The rig is then built in full at 48 kHz with 64-frame slices — every unit created and initialized, the
// wavetable, tunings and SoundFont loaded — and played for a quarter of a second with a note on every part
// (`RigTrial.tryOut`, what a live instrument runs before it takes a new rig). Building either succeeds or
// throws an error with a message: never a crash, a hang, a NaN that latches, or unbounded memory.
import AulosPlayback
import AulosRig
import FuzzSupport
import Glibc

let folder = "/tmp/aulos-fuzz-rigbuild-\(getpid())"
mkdir(folder, 0o700)
// The rig names its files relative to the working directory (scripts/fuzz.sh passes libFuzzer absolute paths).
chdir(folder)
// No LV2 plugin is installed for the fuzzer: a rig naming one fails to build, as it should, without the
// fuzzer exploring whatever plugins the machine has.
setenv("LV2_PATH", folder + "/no-plugins", 1)
let names = ["rig.yaml", "table.wav", "scale.scl", "map.kbm", "font.sf2"]

runFuzzer { data, count in
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    // Split on the separator by bytes: the binary files need not be UTF-8.
    let separator = Array("\n%%%\n".utf8)
    var parts: [[UInt8]] = [[]]
    var index = 0
    while index < bytes.count {
        if parts.count < names.count, bytes[index...].starts(with: separator) {
            parts.append([])
            index += separator.count
        } else {
            parts[parts.count - 1].append(bytes[index])
            index += 1
        }
    }
    for (name, part) in zip(names, parts) {
        let file = fopen(name, "wb")!
        _ = part.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }
    if let set = try? RigSet.load("rig.yaml") {
        try? RigTrial.tryOut(set, sampleRate: 48_000, slice: 64)
    }
    for name in names { unlink(name) }
    return 0
}

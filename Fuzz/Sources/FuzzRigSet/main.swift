// libFuzzer entry: a rig set made of several files. The input is split at "\n%%%\n" into up to eight
// files, f0.yaml … f7.yaml, written to a private folder; f0.yaml is loaded as a set (or a rig). The seeds
// are sets that list each other in cycles, list files that are missing, and nest YAML deeply, so mutation
// starts where loaders break. Loading either succeeds or throws a RigError: never a crash, a hang or
// unbounded memory (sets listing themselves used to recurse until the stack overflowed).
import AulosRig
import FuzzSupport
import Glibc

let folder = "/tmp/aulos-fuzz-rigset-\(getpid())"
mkdir(folder, 0o700)

runFuzzer { data, count in
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    var paths: [String] = []
    for (index, part) in text.split(separator: "\n%%%\n", omittingEmptySubsequences: false).prefix(8).enumerated() {
        let path = folder + "/f\(index).yaml"
        let bytes = Array(part.utf8)
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        paths.append(path)
    }
    _ = try? RigSet.load(folder + "/f0.yaml")
    for path in paths { unlink(path) }
    return 0
}

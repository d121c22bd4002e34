// libFuzzer entry: any text as a rig file (docs/rigs.md, YAML through Yams). Loading either succeeds or
// throws a RigError naming the problem; a rig that loads must write itself back out and read that
// back to the same rig.
import AulosRig
import FuzzSupport
import Glibc

runFuzzer { data, count in
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    if let rig = try? Rig(yaml: text, file: "fuzz") {
        let again = try? Rig(yaml: rig.yaml(), file: "fuzz-again")
        if again != rig {
            // Release builds drop precondition messages: say what differed first.
            let report = "rig did not round-trip:\n\(rig.yaml())\nread back as:\n\(again?.yaml() ?? "an error")\n"
            _ = report.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
            fatalError("rig did not round-trip")
        }
    }
    return 0
}

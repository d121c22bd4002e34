import LV2HostWork

// The LV2 hosting benchmark's work outside the benchmark framework, for instruction counts and for checking
// that both hosts compute the same thing:
//
//   lv2host-render c [blocks]       the bare C lilv host renders the demo (or its first `blocks` blocks)
//   lv2host-render aulos [blocks]   the Aulos graph renders the same
//   lv2host-render compare          renders both, twice each, and prints the largest sample differences
//
// c and aulos print the block count and the last block's energy. Under callgrind, a run with 0 blocks
// counts the setup (lilv loading every installed plugin's description, instantiation), so the render's
// instructions are the difference between a full run and that one.
// Environment: LV2HOST_EFFECT overrides the effect URI ("none": the instrument alone).
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "compare"
let blocks = arguments.dropFirst().first.flatMap { Int($0) }
let effectURI = LV2HostWork.effect

struct HostError: Error {}

let demo = try DemoEvents()

/// Channel 0 and 1 of every block, rendered by one host.
func render(_ host: String) throws -> [Float] {
    var samples = [Float](repeating: 0, count: 2 * demo.frameCount)
    let frames = LV2HostWork.blockSize
    if host == "c" {
        guard let chain = ReferenceChain(effectURI: effectURI) else { throw HostError() }
        chain.render(demo) { block in
            let (left, right) = (chain.left, chain.right)
            for index in 0..<frames {
                samples[2 * (block * frames + index)] = left[index]
                samples[2 * (block * frames + index) + 1] = right[index]
            }
        }
    } else {
        let chain = try AulosChain(demo, effectURI: effectURI)
        chain.render(demo) { block in
            let (left, right) = (chain.left, chain.right)
            for index in 0..<frames {
                samples[2 * (block * frames + index)] = left[index]
                samples[2 * (block * frames + index) + 1] = right[index]
            }
        }
    }
    return samples
}

func largestDifference(_ a: [Float], _ b: [Float]) -> (difference: Float, at: Int, peak: Float) {
    var result: (difference: Float, at: Int, peak: Float) = (0, -1, 0)
    for index in a.indices {
        result.peak = max(result.peak, abs(a[index]), abs(b[index]))
        let difference = abs(a[index] - b[index])
        if difference > result.difference { (result.difference, result.at) = (difference, index) }
    }
    return result
}

switch mode {
case "c", "aulos":
    // Exactly the benchmark's loop (nothing done between blocks); the last block's energy as a check.
    let count = min(blocks ?? demo.blockCount, demo.blockCount)
    let left: UnsafeMutablePointer<Float>
    var keep: AnyObject
    if mode == "c" {
        guard let chain = ReferenceChain(effectURI: effectURI) else { exit(1) }
        chain.render(demo, blocks: count)
        (left, keep) = (chain.left, chain)
    } else {
        let chain = try AulosChain(demo, effectURI: effectURI)
        chain.render(demo, blocks: count)
        (left, keep) = (chain.left, chain)
    }
    let energy = (0..<LV2HostWork.blockSize).reduce(0.0) { $0 + Double(left[$1] * left[$1]) }
    print("\(mode): \(count) blocks of \(LV2HostWork.blockSize) frames, last block's left-channel energy \(energy)")
    withExtendedLifetime(keep) {}
case "compare":
    print(
        "demo: \(demo.timeline.count) events, \(demo.blockCount) blocks of \(LV2HostWork.blockSize) frames"
            + " (\(demo.frameCount) frames), effect \(effectURI ?? "none")")
    let c1 = try render("c")
    let c2 = try render("c")
    let aulos1 = try render("aulos")
    let aulos2 = try render("aulos")
    for (name, a, b) in [("C vs C", c1, c2), ("Aulos vs Aulos", aulos1, aulos2), ("Aulos vs C", aulos1, c1)] {
        let result = largestDifference(a, b)
        let frame = result.at / 2
        print(
            "\(name): largest difference \(result.difference)"
                + (result.at >= 0 ? " at frame \(frame) (block \(frame / LV2HostWork.blockSize))" : "")
                + ", peak \(result.peak), identical \(a == b)")
    }
default:
    print("usage: lv2host-render c|aulos [blocks] | compare")
    exit(2)
}

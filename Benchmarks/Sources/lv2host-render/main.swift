import LV2HostWork

// The LV2 hosting benchmark's work outside the benchmark framework, for instruction counts and for checking
// that both hosts compute the same thing:
//
//   lv2host-render c [blocks]       the bare C lilv host renders the demo (or its first `blocks` blocks)
//   lv2host-render aulos [blocks]   the Aulos graph renders the same
//   lv2host-render compare          renders both, twice each, and prints the largest sample differences
//
// Each rendering prints its block count and the output's energy. Under callgrind, a run with 0 blocks
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
            for index in 0..<frames {
                samples[2 * (block * frames + index)] = chain.left[index]
                samples[2 * (block * frames + index) + 1] = chain.right[index]
            }
        }
    } else {
        let chain = try AulosChain(demo, effectURI: effectURI)
        chain.render(demo) { block in
            for index in 0..<frames {
                samples[2 * (block * frames + index)] = chain.left[index]
                samples[2 * (block * frames + index) + 1] = chain.right[index]
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
    var energy = 0.0
    let frames = LV2HostWork.blockSize
    var rendered = 0
    if mode == "c" {
        guard let chain = ReferenceChain(effectURI: effectURI) else { exit(1) }
        chain.render(demo, blocks: blocks) { _ in
            for index in 0..<frames { energy += Double(chain.left[index] * chain.left[index]) }
            rendered += 1
        }
    } else {
        let chain = try AulosChain(demo, effectURI: effectURI)
        chain.render(demo, blocks: blocks) { _ in
            for index in 0..<frames { energy += Double(chain.left[index] * chain.left[index]) }
            rendered += 1
        }
    }
    print("\(mode): \(rendered) blocks of \(frames) frames, left-channel energy \(energy)")
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

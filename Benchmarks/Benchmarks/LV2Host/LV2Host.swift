import Benchmark
import LV2HostWork

// LV2 hosting (issue 16): the demo piece played on mda JX10 into Dragonfly Plate Reverb, 48 kHz, 64-frame
// blocks, the piece plus a second of tail — by Aulos (two LV2 units in an AudioGraph, the demo read from its
// timeline) and by a bare C lilv host doing the same work (CReferenceLV2Host: the same events at the same
// frames in the same order, the same default control values). Each iteration renders the whole piece on
// fresh instances (made and torn down outside the measurement). `lv2host-render compare` checks that the
// two outputs agree; `lv2host-render c|aulos` is the same work for callgrind.

let demo = try! DemoEvents()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        timeUnits: .microseconds, scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 40)

    Benchmark("Aulos graph: \(LV2HostWork.chainName), demo piece, 64-frame slices") { benchmark in
        for _ in benchmark.scaledIterations {
            let chain = try AulosChain(demo)
            benchmark.startMeasurement()
            chain.render(demo)
            benchmark.stopMeasurement()
            blackHole(chain.left[0])
        }
    }

    Benchmark("Bare C lilv host: \(LV2HostWork.chainName), demo piece, 64-frame blocks") { benchmark in
        for _ in benchmark.scaledIterations {
            guard let chain = ReferenceChain() else { fatalError("the C host could not load the plugins") }
            benchmark.startMeasurement()
            chain.render(demo)
            benchmark.stopMeasurement()
            blackHole(chain.left[0])
        }
    }
}

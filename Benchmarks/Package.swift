// swift-tools-version: 6.1
// Benchmarks live in their own package so `make test` never builds the benchmark framework (~4 minutes).
// Run with `make bench` from the repository root.
import PackageDescription

let package = Package(
    name: "AulosBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Aulos", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The peer: the same pull chain written in plain C with function pointers, no framework.
        .target(name: "CReferenceGraph", path: "Sources/CReferenceGraph", cSettings: [.unsafeFlags(["-O2"])]),
        .executableTarget(
            name: "GraphOverhead",
            dependencies: [
                "CReferenceGraph",
                .product(name: "AulosEngine", package: "Aulos"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/GraphOverhead",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        .target(name: "CReferenceVoice", path: "Sources/CReferenceVoice", cSettings: [.unsafeFlags(["-O2"])]),
        // The plain C voice: written for speed, not shaped like the synth (see its header).
        .target(name: "CPlainVoice", path: "Sources/CPlainVoice", cSettings: [.unsafeFlags(["-O3"])]),
        // What the synth benchmarks and the synth-render driver (callgrind) share: the synth's graph setup.
        .target(
            name: "SynthWork", dependencies: [.product(name: "AulosEngine", package: "Aulos")],
            path: "Sources/SynthWork"),
        .executableTarget(
            name: "Instruments",
            dependencies: [
                "CReferenceVoice",
                "CPlainVoice",
                "SynthWork",
                .product(name: "AulosEngine", package: "Aulos"),
                .product(name: "AulosPlayback", package: "Aulos"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Instruments",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        // The LV2 hosting peer: a bare lilv host in plain C (lilv's headers and library through pkg-config).
        .systemLibrary(
            name: "CLilvReference", path: "Sources/CLilvReference", pkgConfig: "lilv-0",
            providers: [.apt(["liblilv-dev"])]),
        .target(
            name: "CReferenceLV2Host", dependencies: ["CLilvReference"], path: "Sources/CReferenceLV2Host",
            cSettings: [.unsafeFlags(["-O2"])]),
        // What the LV2Host benchmark and the lv2host-render driver (callgrind, output comparison) share: the
        // demo's events, the Aulos graph and the C host, each rendering the piece block by block.
        .target(
            name: "LV2HostWork",
            dependencies: [
                "CReferenceLV2Host",
                .product(name: "AulosEngine", package: "Aulos"),
                .product(name: "AulosLV2", package: "Aulos"),
            ],
            path: "Sources/LV2HostWork"),
        .executableTarget(
            name: "LV2Host",
            dependencies: ["LV2HostWork", .product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/LV2Host",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        .executableTarget(name: "lv2host-render", dependencies: ["LV2HostWork"], path: "Sources/lv2host-render"),
        .executableTarget(
            name: "synth-render",
            dependencies: [
                "SynthWork", "CReferenceVoice", "CPlainVoice", .product(name: "AulosEngine", package: "Aulos"),
            ],
            path: "Sources/synth-render"),
        // SFZ voices per core against FluidSynth playing the same looped stereo sample from an SF2 (wall-clock
        // medians and, under callgrind, instruction counts): docs/performance.md.
        .executableTarget(
            name: "sfz-voices",
            dependencies: [
                .product(name: "AulosSFZ", package: "Aulos"), .product(name: "AulosEngine", package: "Aulos"),
            ],
            path: "Sources/sfz-voices"),
        .executableTarget(
            name: "Effects",
            dependencies: [
                .product(name: "AulosEngine", package: "Aulos"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Effects",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        .executableTarget(
            name: "FullRig",
            dependencies: [
                .product(name: "AulosEngine", package: "Aulos"),
                .product(name: "AulosPlayback", package: "Aulos"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/FullRig",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
    ]
)

// swift-tools-version: 6.1
// Aulos: a real-time MIDI synthesizer and instrument host for Linux, built on Core Audio's audio-unit model.
//
// One target per layer; the folders under Sources/ are the architecture (see docs/architecture.md).
// Only the C shim targets touch system headers; only AulosAudioFile imports libsndfile.
import PackageDescription

let package = Package(
    name: "Aulos",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "aulos", targets: ["aulos"]),
        .library(name: "AulosHost", targets: ["AulosHost"]),
        // The engine layers, for the benchmark package and for hosts embedding Aulos.
        .library(name: "AulosEngine", targets: ["AulosCore", "AulosGraph", "AulosMIDI", "AulosUnits", "AulosFluid", "AulosDSP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    ],
    targets: [
        // The render ABI as C declarations (Core Audio's CoreAudioTypes.h analogue): C-convention
        // callbacks can only carry C-representable types, so the time stamp, buffer list and flags live here.
        .target(name: "CAulosRender", path: "Sources/CAulosRender"),
        .systemLibrary(
            name: "CFluidSynth", path: "Sources/CFluidSynth", pkgConfig: "fluidsynth",
            providers: [.apt(["libfluidsynth-dev"])]),
        .systemLibrary(
            name: "CSamplerate", path: "Sources/CSamplerate", pkgConfig: "samplerate",
            providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(
            name: "CSndfile", path: "Sources/CSndfile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]),

        // alsa-lib: headers plus a small C shim (its error handler is variadic; hw_params negotiation).
        .target(name: "CALSA", path: "Sources/CALSA", linkerSettings: [.linkedLibrary("asound")]),

        .target(name: "AulosRealtime", path: "Sources/AulosRealtime"),
        .target(name: "AulosDSP", dependencies: ["CSamplerate"], path: "Sources/AulosDSP"),
        .target(name: "AulosCore", dependencies: ["AulosRealtime", "CAulosRender"], path: "Sources/AulosCore"),
        .target(name: "AulosGraph", dependencies: ["AulosCore", "AulosRealtime"], path: "Sources/AulosGraph"),
        .target(name: "AulosSoundFont", dependencies: ["AulosDSP"], path: "Sources/AulosSoundFont"),
        .target(name: "AulosMIDI", dependencies: ["AulosCore", "AulosRealtime"], path: "Sources/AulosMIDI"),
        .target(name: "AulosUnits", dependencies: ["AulosCore", "AulosMIDI", "AulosDSP"], path: "Sources/AulosUnits"),
        .target(
            name: "AulosFluid", dependencies: ["AulosCore", "AulosMIDI", "AulosRealtime", "CFluidSynth"],
            path: "Sources/AulosFluid"),
        .target(name: "AulosALSA", dependencies: ["AulosCore", "AulosMIDI", "AulosRealtime", "AulosUnits", "CALSA"], path: "Sources/AulosALSA"),
        .target(name: "AulosAudioFile", dependencies: ["AulosCore", "CSndfile"], path: "Sources/AulosAudioFile"),
        .target(
            name: "AulosHost",
            dependencies: ["AulosCore", "AulosGraph", "AulosUnits", "AulosAudioFile", "AulosMIDI", "AulosFluid", "AulosALSA",
                           .product(name: "Yams", package: "Yams")],
            path: "Sources/AulosHost"),
        .executableTarget(
            name: "aulos",
            dependencies: ["AulosHost", "AulosALSA", "AulosAudioFile", "AulosCore", "AulosSoundFont", "AulosUnits", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/aulos"),

        // Test support: a malloc/free interposer that counts allocations made by the calling thread only,
        // so the zero-allocation tests measure the render thread and nothing else.
        .target(name: "CAllocationCounter", path: "Tests/CAllocationCounter"),
        .target(name: "AulosTestSupport", dependencies: ["AulosCore"], path: "Tests/AulosTestSupport"),
        .testTarget(
            name: "AulosCoreTests", dependencies: ["AulosCore", "AulosRealtime", "CAllocationCounter", "AulosTestSupport"],
            path: "Tests/AulosCoreTests"),
        .testTarget(
            name: "AulosGraphTests",
            dependencies: ["AulosGraph", "AulosUnits", "AulosCore", "AulosDSP", "CAllocationCounter", "AulosTestSupport"],
            path: "Tests/AulosGraphTests"),
        .testTarget(
            name: "AulosHostTests",
            dependencies: ["AulosHost", "AulosCore", "AulosAudioFile", "AulosGraph", "AulosUnits", "AulosFluid", "AulosMIDI", "AulosALSA", "CALSA", "CAllocationCounter",
                           "AulosTestSupport"],
            path: "Tests/AulosHostTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "AulosMIDITests",
            dependencies: ["AulosMIDI", "AulosCore", "AulosGraph", "AulosUnits", "CAllocationCounter", "AulosTestSupport"],
            path: "Tests/AulosMIDITests"),
        .testTarget(name: "AulosDSPTests", dependencies: ["AulosDSP"], path: "Tests/AulosDSPTests"),
        .testTarget(
            name: "AulosInstrumentTests",
            dependencies: ["AulosUnits", "AulosMIDI", "AulosGraph", "AulosCore", "AulosDSP", "AulosFluid", "AulosSoundFont",
                           "CFluidSynth", "CAllocationCounter", "AulosTestSupport"],
            path: "Tests/AulosInstrumentTests"),
        .testTarget(name: "AulosCLITests", dependencies: ["aulos"], path: "Tests/AulosCLITests"),
    ]
)

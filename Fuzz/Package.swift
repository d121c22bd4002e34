// swift-tools-version: 6.1
// libFuzzer targets, in their own package so `make test` never builds them with the fuzzer's
// instrumentation. Build and run with `make fuzz` (scripts/fuzz.sh) from the repository root.
import PackageDescription

let package = Package(
    name: "AulosFuzz",
    dependencies: [.package(name: "Aulos", path: "..")],
    targets: [
        .target(name: "FuzzSupport", path: "Sources/FuzzSupport"),
        .executableTarget(
            name: "FuzzMIDIParser", dependencies: ["FuzzSupport", .product(name: "AulosEngine", package: "Aulos")],
            path: "Sources/FuzzMIDIParser"),
        .executableTarget(
            name: "FuzzMIDIFile", dependencies: ["FuzzSupport", .product(name: "AulosEngine", package: "Aulos")],
            path: "Sources/FuzzMIDIFile"),
        .executableTarget(
            name: "FuzzScore", dependencies: ["FuzzSupport", .product(name: "AulosEngine", package: "Aulos")],
            path: "Sources/FuzzScore"),
        .executableTarget(
            name: "FuzzTuning", dependencies: ["FuzzSupport", .product(name: "AulosEngine", package: "Aulos")],
            path: "Sources/FuzzTuning"),
        .executableTarget(
            name: "FuzzRig", dependencies: ["FuzzSupport", .product(name: "AulosPlayback", package: "Aulos")],
            path: "Sources/FuzzRig"),
        .executableTarget(
            name: "FuzzOSC", dependencies: ["FuzzSupport", .product(name: "AulosPlayback", package: "Aulos")],
            path: "Sources/FuzzOSC"),
        .executableTarget(
            name: "FuzzRigSet", dependencies: ["FuzzSupport", .product(name: "AulosPlayback", package: "Aulos")],
            path: "Sources/FuzzRigSet"),
        .executableTarget(
            name: "FuzzRigBuild", dependencies: ["FuzzSupport", .product(name: "AulosPlayback", package: "Aulos")],
            path: "Sources/FuzzRigBuild"),
        .executableTarget(
            name: "FuzzRequestFraming", dependencies: ["FuzzSupport", .product(name: "AulosWeb", package: "Aulos")],
            path: "Sources/FuzzRequestFraming"),
        .executableTarget(
            name: "FuzzNetworkMIDI",
            dependencies: ["FuzzSupport", .product(name: "AulosNetworkMIDI", package: "Aulos")],
            path: "Sources/FuzzNetworkMIDI"),
        .executableTarget(
            name: "FuzzNetworkMIDI2",
            dependencies: ["FuzzSupport", .product(name: "AulosNetworkMIDI", package: "Aulos")],
            path: "Sources/FuzzNetworkMIDI2"),
        .executableTarget(
            name: "FuzzSFZParser", dependencies: ["FuzzSupport", .product(name: "AulosSFZ", package: "Aulos")],
            path: "Sources/FuzzSFZParser"),
        .executableTarget(
            name: "FuzzSFZBuild",
            dependencies: [
                "FuzzSupport", .product(name: "AulosPlayback", package: "Aulos"),
                .product(name: "AulosSFZ", package: "Aulos"),
            ],
            path: "Sources/FuzzSFZBuild"),
        // The C API of libfluidsynth for the SoundFont target, which drives the library directly.
        .systemLibrary(name: "CFluidSynthFuzz", path: "Sources/CFluidSynthFuzz", pkgConfig: "fluidsynth"),
        .executableTarget(
            name: "FuzzSoundFont",
            dependencies: ["FuzzSupport", "CFluidSynthFuzz", .product(name: "AulosEngine", package: "Aulos")],
            path: "Sources/FuzzSoundFont"),
    ]
)

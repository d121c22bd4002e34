// swift-tools-version: 6.1
// Aulos: a real-time MIDI synthesizer and instrument host for Linux, built on Core Audio's audio-unit model.
//
// One target per layer; the folders under Sources/ are the architecture (see docs/architecture.md).
// Only the C shim targets touch system headers; AulosAudioFile writes files through libsndfile, and AulosSFZ's
// sample store reads them through it (seeking and the loop points of a WAV's smpl chunk, on a loader thread).
import PackageDescription

let package = Package(
    name: "Aulos",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "aulos", targets: ["aulos"]),
        .library(name: "AulosPlayback", targets: ["AulosRig", "AulosPlayback"]),
        // The engine layers, for the benchmark package and for hosts embedding Aulos.
        .library(
            name: "AulosEngine",
            targets: ["AulosCore", "AulosGraph", "AulosMIDI", "AulosUnits", "AulosFluid", "AulosDSP"]),
        // LV2 plugins as units, for the benchmark package's LV2 hosting benchmark.
        .library(name: "AulosLV2", targets: ["AulosLV2"]),
        // The SFZ player, for the fuzz package's SFZ parser target and the benchmark package's voices per core.
        .library(name: "AulosSFZ", targets: ["AulosSFZ"]),
        // Network MIDI's packet readers, for the fuzz package's AppleMIDI and RTP-MIDI target.
        .library(name: "AulosNetworkMIDI", targets: ["AulosNetworkMIDI"]),
        // The web panel, for the fuzz package's request-framing target.
        .library(name: "AulosWeb", targets: ["AulosWeb"]),
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
            name: "CLilv", path: "Sources/CLilv", pkgConfig: "lilv-0", providers: [.apt(["liblilv-dev"])]),
        .systemLibrary(
            name: "CSamplerate", path: "Sources/CSamplerate", pkgConfig: "samplerate",
            providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(
            name: "CSndfile", path: "Sources/CSndfile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]),

        // alsa-lib: headers plus a small C shim (its error handler is variadic; hw_params negotiation).
        .target(name: "CALSA", path: "Sources/CALSA", linkerSettings: [.linkedLibrary("asound")]),

        // The real-time primitives a C compiler must write: the floating-point control register (FTZ/DAZ).
        .target(name: "CAulosRealtime", path: "Sources/CAulosRealtime"),
        .target(name: "AulosRealtime", dependencies: ["CAulosRealtime"], path: "Sources/AulosRealtime"),
        .target(name: "AulosDSP", dependencies: ["CSamplerate"], path: "Sources/AulosDSP"),
        .target(name: "AulosCore", dependencies: ["AulosRealtime", "CAulosRender"], path: "Sources/AulosCore"),
        .target(name: "AulosGraph", dependencies: ["AulosCore", "AulosRealtime"], path: "Sources/AulosGraph"),
        .target(name: "AulosSoundFont", dependencies: ["AulosDSP"], path: "Sources/AulosSoundFont"),
        .target(name: "AulosMIDI", dependencies: ["AulosCore", "AulosRealtime"], path: "Sources/AulosMIDI"),
        // The driver contract: the live I/O unit protocol and its capabilities, device request and grant, I/O
        // events and statistics, the load meter, the pull kernels, the audio session, one real-time thread
        // set-up, and a dummy driver for tests. Drivers import it, never each other.
        .target(
            name: "AulosIO", dependencies: ["AulosCore", "AulosDSP", "AulosMIDI", "AulosRealtime"],
            path: "Sources/AulosIO"),
        .target(
            name: "AulosUnits", dependencies: ["AulosCore", "AulosIO", "AulosMIDI", "AulosDSP", "AulosRealtime"],
            path: "Sources/AulosUnits"),
        .target(
            name: "AulosFluid", dependencies: ["AulosCore", "AulosMIDI", "AulosRealtime", "CFluidSynth"],
            path: "Sources/AulosFluid"),
        .target(
            name: "AulosALSA", dependencies: ["AulosCore", "AulosIO", "AulosMIDI", "AulosRealtime", "CALSA"],
            path: "Sources/AulosALSA"),
        // JACK (jackd2, or PipeWire through pipewire-jack): the JACK I/O unit, JACK MIDI and JACK transport.
        .systemLibrary(name: "CJACK", path: "Sources/CJACK", providers: [.apt(["libjack-jackd2-dev"])]),
        .target(
            name: "AulosJACK",
            dependencies: ["AulosCore", "AulosIO", "AulosMIDI", "AulosRealtime", "CJACK"],
            path: "Sources/AulosJACK"),
        .target(name: "AulosAudioFile", dependencies: ["AulosCore", "CSndfile"], path: "Sources/AulosAudioFile"),
        // The SFZ player: the parser and the model of what sounds (Parsing/, Model/), the voices that play
        // regions and the sample store that preloads sample heads and streams the rest from disk (Voice/,
        // Samples/). Its own module, like every instrument.
        .target(
            name: "AulosSFZ", dependencies: ["AulosCore", "AulosDSP", "AulosMIDI", "AulosRealtime", "CSndfile"],
            path: "Sources/AulosSFZ"),
        // The rig layer: rig files and sets, routing, the playback rig built from them, where data lives.
        .target(
            name: "AulosRig",
            dependencies: [
                "AulosCore", "AulosGraph", "AulosMIDI", "AulosUnits", "AulosFluid", "AulosIO", "AulosLV2",
                "AulosSFZ", "AulosAudioFile", "AulosDSP", .product(name: "Yams", package: "Yams"),
            ],
            path: "Sources/AulosRig"),
        // The playback layer: offline file render, live play (files and keyboards), the service.
        .target(
            name: "AulosPlayback",
            dependencies: [
                "AulosCore", "AulosGraph", "AulosMIDI", "AulosUnits", "AulosFluid", "AulosIO",
                "AulosAudioFile", "AulosRig", "AulosRealtime",
            ],
            path: "Sources/AulosPlayback"),
        // Network MIDI's wire formats (issue 35): AppleMIDI session packets and the CK clock model, RTP-MIDI
        // (RFC 6295) command sections, SysEx segments and the recovery journal, and the journal's receiver repair
        // and sender (pure values); the AppleMIDI session host on UDP and its live MIDI source
        // (docs/network-midi.md).
        // Discovery/ advertises and browses the services through avahi-daemon (libavahi-client).
        .target(
            name: "AulosNetworkMIDI", dependencies: ["AulosCore", "AulosIO", "AulosMIDI", "AulosRealtime", "CAvahi"],
            path: "Sources/AulosNetworkMIDI"),
        .systemLibrary(
            name: "CAvahi", path: "Sources/CAvahi", pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]),
        // LV2 plugins: discovery through lilv, and plugins hosted as audio units.
        // The LV2 host's log feature is variadic C, which Swift cannot define: a small C target.
        .target(name: "CLV2Log", path: "Sources/CLV2Log"),
        .target(
            name: "AulosLV2", dependencies: ["AulosCore", "AulosMIDI", "AulosRealtime", "CLilv", "CLV2Log"],
            path: "Sources/AulosLV2"),
        // libcrypt (libxcrypt): the web panel's password hash.
        .systemLibrary(name: "CCrypt", path: "Sources/CCrypt", providers: [.apt(["libcrypt-dev"])]),
        // The web panel: the page (plain HTML/CSS/JS, installed as data), its API and status WebSocket, on a small
        // HTTP/1.1 server of its own behind the gate (no HTTP library: see PanelServer).
        .target(
            name: "AulosWeb",
            dependencies: ["AulosCore", "AulosPlayback", "AulosRealtime", "AulosRig", "CCrypt"],
            // The page (Panel/) is data, installed as share/aulos/web and found by SearchPaths.panelFolder.
            path: "Sources/AulosWeb", exclude: ["Panel"]),
        .executableTarget(
            name: "aulos",
            dependencies: [
                "AulosPlayback", "AulosRig", "AulosALSA", "AulosJACK", "AulosAudioFile", "AulosCore", "AulosIO",
                "AulosSoundFont", "AulosFluid", "AulosSFZ", "AulosNetworkMIDI",
                "AulosUnits", "AulosLV2", "AulosWeb",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/aulos"),
        // The measuring tool behind `make sound-sheet` and `make gm-songs` (docs/sound.md): loudness, true peak
        // and spectrograms of rendered files, for scripts; not installed, not a user command.
        .executableTarget(
            name: "SoundMeasure", dependencies: ["AulosAudioFile", "AulosDSP", "CSndfile"], path: "Tools/SoundMeasure"),

        // Tests mirror Sources: one test target per module (AulosCLITests runs the `aulos` executable).
        // CAllocationCounter defines malloc/free in the test executable and counts per thread, so the
        // zero-allocation tests measure the render thread and nothing else; AulosTestSupport holds the one
        // render harness and the one allocation check every target shares.
        .target(name: "CAllocationCounter", path: "Tests/CAllocationCounter"),
        .target(
            name: "AulosTestSupport",
            dependencies: ["AulosCore", "AulosGraph", "AulosMIDI", "AulosUnits", "CAllocationCounter"],
            path: "Tests/AulosTestSupport"),
        .testTarget(
            name: "AulosRealtimeTests", dependencies: ["AulosRealtime", "AulosTestSupport"],
            path: "Tests/AulosRealtimeTests"),
        .testTarget(
            name: "AulosDSPTests", dependencies: ["AulosDSP", "AulosTestSupport"], path: "Tests/AulosDSPTests"),
        .testTarget(
            name: "AulosCoreTests",
            dependencies: ["AulosCore", "AulosUnits", "AulosTestSupport", "CAllocationCounter"],
            path: "Tests/AulosCoreTests"),
        .testTarget(
            name: "AulosGraphTests", dependencies: ["AulosGraph", "AulosCore", "AulosUnits", "AulosTestSupport"],
            path: "Tests/AulosGraphTests"),
        .testTarget(
            name: "AulosMIDITests",
            dependencies: ["AulosMIDI", "AulosCore", "AulosGraph", "AulosUnits", "AulosTestSupport"],
            path: "Tests/AulosMIDITests"),
        .testTarget(
            name: "AulosUnitsTests",
            dependencies: [
                "AulosUnits", "AulosCore", "AulosDSP", "AulosGraph", "AulosMIDI", "AulosFluid", "AulosTestSupport",
            ],
            path: "Tests/AulosUnitsTests"),
        .testTarget(
            name: "AulosFluidTests",
            dependencies: [
                "AulosFluid", "AulosCore", "AulosMIDI", "AulosSoundFont", "AulosUnits", "CFluidSynth",
                "AulosTestSupport",
            ],
            path: "Tests/AulosFluidTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "AulosSoundFontTests",
            dependencies: [
                "AulosSoundFont", "AulosFluid", "AulosCore", "AulosMIDI", "AulosUnits", "AulosTestSupport",
            ],
            path: "Tests/AulosSoundFontTests"),
        .testTarget(
            name: "AulosAudioFileTests", dependencies: ["AulosAudioFile", "AulosCore", "AulosTestSupport", "CSndfile"],
            path: "Tests/AulosAudioFileTests"),
        .testTarget(
            name: "AulosALSATests",
            dependencies: [
                "AulosALSA", "AulosAudioFile", "AulosCore", "AulosGraph", "AulosIO", "AulosMIDI", "AulosRealtime",
                "AulosUnits",
                "CALSA",
                "AulosTestSupport",
            ],
            path: "Tests/AulosALSATests"),
        .testTarget(
            name: "AulosIOTests",
            dependencies: [
                "AulosIO", "AulosCore", "AulosDSP", "AulosGraph", "AulosMIDI", "AulosRealtime", "AulosUnits",
            ],
            path: "Tests/AulosIOTests"),
        .testTarget(
            name: "AulosRigTests",
            dependencies: [
                "AulosRig", "AulosCore", "AulosGraph", "AulosMIDI", "AulosUnits", "AulosFluid", "AulosLV2",
                "AulosSFZ", "AulosTestSupport",
            ],
            path: "Tests/AulosRigTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "AulosPlaybackTests",
            dependencies: [
                "AulosPlayback", "AulosRig", "AulosALSA", "AulosAudioFile", "AulosCore", "AulosDSP", "AulosGraph",
                "AulosIO",
                "AulosMIDI", "AulosNetworkMIDI", "AulosUnits",
                "AulosTestSupport",
            ],
            path: "Tests/AulosPlaybackTests"),
        .testTarget(
            name: "AulosLV2Tests", dependencies: ["AulosLV2", "AulosCore", "AulosTestSupport", "CLilv", "CLV2Log"],
            path: "Tests/AulosLV2Tests"),
        .testTarget(
            name: "AulosJACKTests",
            dependencies: [
                "AulosJACK", "AulosIO", "AulosCore", "AulosMIDI", "AulosRig", "AulosTestSupport", "AulosUnits",
                "CAllocationCounter",
            ],
            path: "Tests/AulosJACKTests"),
        .testTarget(
            name: "AulosWebTests",
            dependencies: ["AulosWeb", "AulosPlayback"],
            path: "Tests/AulosWebTests"),
        .testTarget(
            name: "AulosSFZTests",
            dependencies: ["AulosSFZ", "AulosCore", "AulosDSP", "AulosTestSupport", "CAllocationCounter", "CSndfile"],
            path: "Tests/AulosSFZTests"),
        .testTarget(
            name: "AulosNetworkMIDITests",
            dependencies: ["AulosNetworkMIDI", "AulosCore", "AulosIO", "AulosMIDI", "AulosTestSupport"],
            path: "Tests/AulosNetworkMIDITests"),
        .testTarget(name: "AulosCLITests", dependencies: ["aulos", "AulosTestSupport"], path: "Tests/AulosCLITests"),
    ]
)

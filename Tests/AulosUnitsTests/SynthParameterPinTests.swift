import AulosCore
import AulosTestSupport
import AulosUnits
import Foundation
import Testing

/// Pins what presets, rigs and saved states rely on: every synth parameter's address (its ID, its slot in the
/// unit's parameter list, its preset-file key and name), the modulation matrix's source and destination
/// numbers, and every factory preset's full value vector in address order. Inserting a parameter mid-enum
/// would shift every address after it, and with it every preset and saved rig; these tests fail then.
///
/// The fixtures are in `Tests/Fixtures/synth/`; `AULOS_RECORD_SYNTH_PINS=1` rewrites them (only for a change
/// that is meant to move addresses or preset values, stated in its commit).
@Suite struct SynthParameterPinTests {
    typealias P = OscillatorSynthUnit.Parameter
    static let folder = TestFiles.repositoryRoot + "/Tests/Fixtures/synth"
    static var recording: Bool { ProcessInfo.processInfo.environment["AULOS_RECORD_SYNTH_PINS"] == "1" }

    /// Compares `lines` with the fixture `name`, line by line (or records them).
    func check(_ lines: [String], against name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = Self.folder + "/" + name
        if Self.recording {
            try FileManager.default.createDirectory(atPath: Self.folder, withIntermediateDirectories: true)
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == expected.count, "\(name): line count", sourceLocation: sourceLocation)
        for (index, (line, pinned)) in zip(lines, expected).enumerated() where line != pinned {
            Issue.record(
                "\(name):\(index + 1): is \"\(line)\", pinned \"\(pinned)\"", sourceLocation: sourceLocation)
        }
    }

    /// Slot, ID, key and name of every parameter the unit lists: the patch's, then the drum kit's.
    @Test func everyParameterKeepsItsAddress() throws {
        let unit = OscillatorSynthUnit()
        let ids = try unit.get(.parameterList)
        var lines: [String] = []
        for (slot, id) in ids.enumerated() {
            let info = try unit.parameterInfo(id)
            let key = P(rawValue: id.rawValue).map(\.key) ?? "-"
            lines.append("\(slot) \(id.rawValue) \(key) \(info.name)")
        }
        #expect(lines.count == P.allCases.count + 3 * SynthDrum.allCases.count)
        for parameter in P.allCases { #expect(P(key: parameter.key) == parameter) }
        try check(lines, against: "parameter-addresses.txt")
    }

    /// The numbers presets and rigs store for modulation sources and destinations.
    @Test func modulationSourcesAndDestinationsKeepTheirNumbers() throws {
        let sources = ModulationSource.names.enumerated().map { "source \($0.offset) \($0.element)" }
        let destinations = ModulationDestination.names.enumerated().map { "destination \($0.offset) \($0.element)" }
        #expect(ModulationSource.names.count == ModulationSource.controller(128))
        #expect(ModulationDestination.names.count == ModulationDestination.allCases.count)
        try check(sources + destinations, against: "modulation-numbers.txt")
    }

    /// Every factory preset, selected on the unit: the value of each patch parameter, in address order.
    @Test func everyFactoryPresetKeepsItsValues() throws {
        let presets = try SynthPresetLibrary.load(from: TestFiles.presets + "/synth")
        let unit = OscillatorSynthUnit(presets: presets)
        var lines: [String] = []
        for preset in presets {
            try unit.selectPreset(String(preset.number))
            let values = try P.allCases.map { try unit.getParameter($0.id) }
            lines.append("\(preset.number) \(preset.name): " + values.map { "\($0)" }.joined(separator: " "))
        }
        #expect(lines.count == presets.count)
        try check(lines, against: "factory-preset-values.txt")
    }
}

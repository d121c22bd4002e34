import AulosUnits

/// An arpeggiator setting as the command line writes it: `MODE:RATE`, e.g. `up:1/16`, `updown:1/8t`.
public struct Arpeggio: Sendable, Equatable {
    public var mode: OscillatorSynthUnit.ArpeggiatorMode
    public var rate: OscillatorSynthUnit.NoteRate

    public init(mode: OscillatorSynthUnit.ArpeggiatorMode, rate: OscillatorSynthUnit.NoteRate) {
        self.mode = mode
        self.rate = rate
    }

    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: ":").map(String.init)
        guard parts.count == 2,
            let mode = OscillatorSynthUnit.ArpeggiatorMode.allCases.first(where: { $0.name == parts[0] }),
            mode != .off,
            let rate = OscillatorSynthUnit.NoteRate.allCases.first(where: { $0.name == parts[1] })
        else { return nil }
        self.init(mode: mode, rate: rate)
    }
}

import AulosCore
import AulosIO

/// Aulos's Converter (`aufc/conv/Auls`; Core Audio's AUConverter, `aufc/conv/appl`, finds it): converts
/// between linear-PCM layouts — sample type, interleaving, mono ↔ stereo — and sample rates (through
/// libsamplerate). With identical formats on both
/// sides it is a zero-copy pass-through, which makes it the graph-overhead benchmark's unit of choice.
///
/// Threads: control side as for every unit; the render side is `ConvertingPullKernel`.
public final class FormatConverterUnit: AudioUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(
        type: .formatConverter, subtype: .auConverter, manufacturer: .aulos)
    /// Core Audio's description of the unit this reimplements: it finds this one too.
    public static let coreAudioAlias = ComponentDescription(
        type: .formatConverter, subtype: .auConverter, manufacturer: .apple)

    public init() {
        super.init(
            description: Self.componentDescription, aliases: [Self.coreAudioAlias], name: "Aulos: Converter", inputs: 1,
            outputs: 1)
    }

    /// Any supported linear-PCM format on either side; the pair is checked at initialize.
    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        try format.validate()
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        try ConvertingPullKernel.make(for: self)
    }
}

import AulosCore
import AulosIO

/// Aulos's Generic Output (`auou/genr/Auls`; Core Audio's `auou/genr/appl` finds it): an I/O unit attached to no
/// hardware. The host pulls it slice by slice; it pulls its input (the graph) in the canonical format and converts to
/// whatever format was set on its output scope (Float32/Int16/Int24/Int32, interleaved or not). The offline renderer
/// and every audio test are built on it.
///
/// Threads: control side as for every unit; its kernel (`ConvertingPullKernel`) runs on whichever thread
/// pulls.
public final class GenericOutputUnit: IOUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(
        type: .output, subtype: .genericOutput, manufacturer: .aulos)
    /// Core Audio's description of the unit this reimplements: it finds this one too.
    public static let coreAudioAlias = ComponentDescription(
        type: .output, subtype: .genericOutput, manufacturer: .apple)

    /// Until the host sets the output-scope format, it follows the input (the graph's format): a graph
    /// whose format propagates in as mono 44.1 kHz renders mono 44.1 kHz without further configuration.
    private var clientFormatIsSet = false

    public init() {
        super.init(
            description: Self.componentDescription, aliases: [Self.coreAudioAlias], name: "Aulos: Generic Output",
            hasInputElement: false)
    }

    public override func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any)
        throws(AudioUnitError) -> Bool
    {
        if scope == .output && (id == .streamFormat || id == .sampleRate) { clientFormatIsSet = true }
        return try super.customSetProperty(id, scope: scope, element: element, value: value)
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = inputFormat(0)
        if !clientFormatIsSet && outputFormat(0) != input {
            // Follows the input's format (sample rate included) until the host sets one.
            try set(.streamFormat, input, scope: .output)
            clientFormatIsSet = false
        }
        return try ConvertingPullKernel.make(for: self)
    }
}

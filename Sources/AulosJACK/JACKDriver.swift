import AulosCore
import AulosIO

extension AudioDriver {
    /// JACK with `settings`: the JACK unit heads the graph, sized for its largest buffer, with its own MIDI
    /// input. JACK names no sound cards and captures through its ports (checked when the client starts).
    public static func jack(_ settings: JACKSettings) -> AudioDriver {
        var driver = AudioDriver(
            name: "JACK",
            outputComponent: Component(JACKOutputUnit.componentDescription, name: "Aulos: JACK I/O") {
                JACKOutputUnit(settings: settings)
            }, isInputAvailable: { _, _ in true })
        driver.hasMIDIInput = true
        driver.minimumSliceCapacity = JACKOutputUnit.sliceCapacity
        return driver
    }
}

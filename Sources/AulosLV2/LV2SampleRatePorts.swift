import AulosCore

/// Why a unit's parameters change with its rate: an `lv2:sampleRate` port's bounds are multiples of the
/// sample rate (0…0.4 is 0…19,200 Hz at 48 kHz, 0…17,640 at 44.1), so its parameter's range is rebuilt
/// when the unit is given another rate; its value is hertz for the plugin too, and is kept (clamped to
/// the new range).
///
/// Threads: control thread, while the unit is uninitialized (rates are set before it renders).
extension LV2Unit {
    func followSampleRate() {
        let rate = outputFormat(0).sampleRate
        guard rate != parameterRate, rate > 0, !isInitialized else { return }
        parameterRate = rate
        let scaled = plugin.ports.filter { $0.kind == .control && $0.isInput && $0.hints.isSampleRate }
        guard !scaled.isEmpty else { return }
        let values = scaled.map { (try? getParameter(ParameterID(UInt32($0.index)))) ?? 0 }
        rebuildParameters(Self.parameters(of: plugin, sampleRate: rate))
        for (port, value) in zip(scaled, values) {
            guard let info = try? parameterInfo(ParameterID(UInt32(port.index))) else { continue }
            try? setParameter(info.id, value: min(info.maxValue, max(info.minValue, value)))
        }
    }
}

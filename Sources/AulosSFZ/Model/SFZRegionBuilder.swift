/// Turns parsed regions into typed `SFZRegion`s: each opcode in force is applied in order (inherited first,
/// the region's own last), so a later one overrides an earlier one. What a region inherits is built once per
/// group and copied, so a library of thousands of regions under a few groups is read in one pass.
///
/// Opcodes the model does not know are collected once per library, by name with a trailing number written N
/// (`SFZWarning`), never dropped silently. A value that is not of its opcode's kind (a note that is not a
/// note, a number that is not a number, an unknown `loop_mode`) is a one-line error with `file:line`.
/// Numbers outside an opcode's range are clamped to it, as players do.
///
/// Control-level opcodes: `default_path` (prefixed to later `sample`s), `note_offset` and `octave_offset`
/// (added to later keys, v2), `set_ccN` (a controller's value before any message), `label_ccN`, `label_keyN`.
///
/// Threads: control side, while a library loads.
struct SFZRegionBuilder {
    var warnings = SFZWarningList()
    /// `set_ccN`: controller values before any message arrives.
    var controllerDefaults: [Int: Int] = [:]
    var controllerLabels: [Int: String] = [:]
    var keyLabels: [Int: String] = [:]

    private var cachedVersion = -1
    private var cachedTemplate = SFZRegion(location: SFZLocation(file: "", line: 0))
    private var cachedContext = Context()

    /// What earlier opcodes set for later ones.
    struct Context {
        var defaultPath = ""
        var notes = 0
        var octaves = 0
        /// v2: `note_offset` semitones plus `octave_offset` octaves, added to every key read after them.
        var noteOffset: Int { notes + 12 * octaves }
    }

    mutating func region(_ parsed: SFZParsedRegion) throws(SFZError) -> SFZRegion {
        if parsed.inheritedVersion != cachedVersion {
            var template = SFZRegion(location: parsed.location)
            var context = Context()
            for opcode in parsed.inherited { try apply(opcode, to: &template, context: &context) }
            cachedTemplate = template
            cachedContext = context
            cachedVersion = parsed.inheritedVersion
        }
        var region = cachedTemplate
        region.location = parsed.location
        var context = cachedContext
        for opcode in parsed.opcodes { try apply(opcode, to: &region, context: &context) }
        return region
    }

    /// Splits `amp_velcurve_64` into ("amp_velcurve_N", 64); names with no trailing digits come back whole.
    static func pattern(_ name: String) -> (pattern: String, number: Int?) {
        let digits = name.reversed().prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count < name.count, digits.count <= 6 else { return (name, nil) }
        return (String(name.dropLast(digits.count)) + "N", Int(String(digits.reversed())))
    }

    mutating func apply(_ opcode: SFZOpcode, to region: inout SFZRegion, context: inout Context) throws(SFZError) {
        let value = OpcodeValue(opcode: opcode, noteOffset: context.noteOffset)
        let (pattern, number) = SFZRegionBuilder.pattern(opcode.name)
        // A controller number as the opcode's N: 0…127 (the extended controllers of v2 players are not read).
        var cc: Int? { number.flatMap { (0...127).contains($0) ? $0 : nil } }
        switch pattern {
        // Control
        case "default_path":
            context.defaultPath = opcode.value.replacingBackslashes()
            if !context.defaultPath.isEmpty, !context.defaultPath.hasSuffix("/") { context.defaultPath += "/" }
        case "note_offset": context.notes = try value.int(in: -127...127)
        case "octave_offset": context.octaves = try value.int(in: -10...10)
        case "set_ccN" where cc != nil: controllerDefaults[cc!] = try value.int(in: 0...127)
        // The ARIA form from 0 to 1, kept here as the nearest of the 128 values.
        case "set_hdccN" where cc != nil: controllerDefaults[cc!] = Int((try value.float(in: 0...1) * 127).rounded())
        case "label_ccN" where cc != nil: controllerLabels[cc!] = opcode.value
        case "label_keyN" where cc != nil: keyLabels[cc!] = opcode.value

        // Sample and playback
        case "sample":
            let written = opcode.value.replacingBackslashes()
            region.sample =
                written.hasPrefix("*")
                ? .generator(written) : written.isEmpty ? .none : .file(context.defaultPath + written)
        case "offset": region.offset = try value.int(in: 0...Int(UInt32.max))
        case "offset_random": region.offsetRandom = try value.int(in: 0...Int(UInt32.max))
        case "end": region.end = try value.int(in: -1...Int(UInt32.max))
        case "count": region.count = try value.int(in: 0...Int(UInt32.max))
        case "loop_mode", "loopmode": region.loopMode = try value.choice(SFZRegionLoopMode.self)
        case "loop_start", "loopstart": region.loopStart = try value.int(in: 0...Int(UInt32.max))
        case "loop_end", "loopend": region.loopEnd = try value.int(in: 0...Int(UInt32.max))
        case "delay": region.delay = try value.float(in: 0...100)
        case "delay_random": region.delayRandom = try value.float(in: 0...100)

        // Mapping
        case "lokey": region.lowKey = try value.note(in: -1...127)
        case "hikey": region.highKey = try value.note(in: -1...127)
        case "key":
            let key = try value.note(in: -1...127)
            region.lowKey = key
            region.highKey = key
            region.keycenter = max(0, key)
            region.keycenterFromSample = false
        case "lovel": region.lowVelocity = try value.int(in: 0...127)
        case "hivel": region.highVelocity = try value.int(in: 0...127)
        case "lochan": region.lowChannel = try value.int(in: 1...16)
        case "hichan": region.highChannel = try value.int(in: 1...16)
        case "loccN" where cc != nil:
            let newValue = try value.int(in: 0...127)
            region.controllerRanges.set(cc!, defaultLow: 0, defaultHigh: 127) { $0.low = newValue }
        case "hiccN" where cc != nil:
            let newValue = try value.int(in: 0...127)
            region.controllerRanges.set(cc!, defaultLow: 0, defaultHigh: 127) { $0.high = newValue }
        case "lobend": region.lowBend = try value.int(in: -8192...8192)
        case "hibend": region.highBend = try value.int(in: -8192...8192)
        case "loprog": region.lowProgram = try value.int(in: 0...127)
        case "hiprog": region.highProgram = try value.int(in: 0...127)
        case "lorand": region.lowRandom = try value.float(in: 0...1)
        case "hirand": region.highRandom = try value.float(in: 0...1)
        case "seq_length": region.sequenceLength = try value.int(in: 1...100)
        case "seq_position": region.sequencePosition = try value.int(in: 1...100)
        case "sw_lokey": region.switchLowKey = try value.note(in: 0...127)
        case "sw_hikey": region.switchHighKey = try value.note(in: 0...127)
        case "sw_last": region.switchLast = try value.note(in: 0...127)
        case "sw_down": region.switchDown = try value.note(in: 0...127)
        case "sw_up": region.switchUp = try value.note(in: 0...127)
        case "sw_previous": region.switchPrevious = try value.note(in: 0...127)
        case "sw_default": region.switchDefault = try value.note(in: 0...127)
        case "sw_label": region.switchLabel = opcode.value
        case "trigger": region.trigger = try value.choice(SFZTrigger.self)
        case "rt_decay": region.releaseDecay = try value.float(in: 0...200)
        case "group": region.group = try value.int(in: Int(Int32.min)...Int(Int32.max))
        case "off_by": region.offBy = try value.int(in: Int(Int32.min)...Int(Int32.max))
        case "off_mode": region.offMode = try value.choice(SFZOffMode.self)
        case "off_time": region.offTime = try value.float(in: 0...100)
        case "polyphony": region.polyphony = try value.int(in: 1...256)
        case "note_polyphony": region.notePolyphony = try value.int(in: 1...256)
        case "sustain_sw": region.sustainSwitch = try value.onOff()
        case "sostenuto_sw": region.sostenutoSwitch = try value.onOff()

        // Pitch
        case "pitch_keycenter":
            if opcode.value.lowercased() == "sample" {
                region.keycenterFromSample = true
            } else {
                region.keycenter = try value.note(in: 0...127)
                region.keycenterFromSample = false
            }
        case "pitch_keytrack": region.pitchKeytrack = try value.float(in: -1200...1200)
        case "tune", "pitch": region.tune = try value.float(in: -9600...9600)
        case "transpose": region.transpose = try value.int(in: -127...127)
        case "pitch_veltrack": region.pitchVeltrack = try value.float(in: -9600...9600)
        case "pitch_random": region.pitchRandom = try value.float(in: 0...9600)
        case "bend_up", "bendup": region.bendUp = try value.float(in: -9600...9600)
        case "bend_down", "benddown": region.bendDown = try value.float(in: -9600...9600)

        // Amplitude
        case "volume", "gain": region.volume = try value.float(in: -144...48)
        // ARIA's level gains, added to `volume` (each inherited from its header like any opcode).
        case "global_volume": region.globalVolume = try value.float(in: -144...48)
        case "master_volume": region.masterVolume = try value.float(in: -144...48)
        case "group_volume": region.groupVolume = try value.float(in: -144...48)
        case "amplitude": region.amplitude = try value.float(in: 0...100)
        case "pan": region.pan = try value.float(in: -100...100)
        case "width": region.width = try value.float(in: -100...100)
        case "position": region.position = try value.float(in: -100...100)
        case "amp_veltrack": region.ampVeltrack = try value.float(in: -100...100)
        case "amp_velcurve_N" where cc != nil:
            let point = SFZCurvePoint(input: cc!, value: try value.float(in: 0...1))
            region.ampVelcurve.removeAll { $0.input == point.input }
            region.ampVelcurve.append(point)
            region.ampVelcurve.sort { $0.input < $1.input }
        case "amp_keytrack": region.ampKeytrack = try value.float(in: -96...12)
        case "amp_keycenter": region.ampKeycenter = try value.note(in: 0...127)
        case "amp_random": region.ampRandom = try value.float(in: 0...24)

        // Filter
        case "fil_type", "fil1_type", "filtype": region.filterType = try value.choice(SFZRegionFilterType.self)
        case "cutoff", "cutoff1": region.cutoff = try value.float(in: 0...100_000)
        case "resonance", "resonance1": region.resonance = try value.float(in: 0...40)
        case "fil_keytrack", "fil1_keytrack": region.filterKeytrack = try value.float(in: 0...1200)
        case "fil_keycenter", "fil1_keycenter": region.filterKeycenter = try value.note(in: 0...127)
        case "fil_veltrack", "fil1_veltrack": region.filterVeltrack = try value.float(in: -9600...9600)
        case "fil_random": region.filterRandom = try value.float(in: 0...9600)

        // Controller modulation
        case "volume_onccN" where cc != nil, "gain_ccN" where cc != nil, "gain_onccN" where cc != nil:
            try region.volumeControllers.depth(cc!, value.float(in: -144...48))
        case "amplitude_onccN" where cc != nil, "amplitude_ccN" where cc != nil:
            try region.amplitudeControllers.depth(cc!, value.float(in: -100...100))
        case "pan_onccN" where cc != nil, "pan_ccN" where cc != nil:
            try region.panControllers.depth(cc!, value.float(in: -200...200))
        case "width_onccN" where cc != nil, "width_ccN" where cc != nil:
            try region.widthControllers.depth(cc!, value.float(in: -200...200))
        case "position_onccN" where cc != nil, "position_ccN" where cc != nil:
            try region.positionControllers.depth(cc!, value.float(in: -200...200))
        case "cutoff_onccN" where cc != nil, "cutoff_ccN" where cc != nil, "cutoff1_onccN" where cc != nil:
            try region.cutoffControllers.depth(cc!, value.float(in: -9600...9600))
        case "resonance_onccN" where cc != nil, "resonance_ccN" where cc != nil:
            try region.resonanceControllers.depth(cc!, value.float(in: -40...40))
        case "pitch_onccN" where cc != nil, "tune_onccN" where cc != nil, "pitch_ccN" where cc != nil,
            "tune_ccN" where cc != nil:
            try region.pitchControllers.depth(cc!, value.float(in: -9600...9600))

        // Crossfades
        case "xfin_lokey": region.crossfadeInKeys.low = try value.note(in: 0...127)
        case "xfin_hikey": region.crossfadeInKeys.high = try value.note(in: 0...127)
        case "xfout_lokey": region.crossfadeOutKeys.low = try value.note(in: 0...127)
        case "xfout_hikey": region.crossfadeOutKeys.high = try value.note(in: 0...127)
        case "xfin_lovel": region.crossfadeInVelocities.low = try value.int(in: 0...127)
        case "xfin_hivel": region.crossfadeInVelocities.high = try value.int(in: 0...127)
        case "xfout_lovel": region.crossfadeOutVelocities.low = try value.int(in: 0...127)
        case "xfout_hivel": region.crossfadeOutVelocities.high = try value.int(in: 0...127)
        case "xfin_loccN" where cc != nil:
            let newValue = try value.int(in: 0...127)
            region.crossfadeInControllers.set(cc!, defaultLow: 0, defaultHigh: 0) { $0.low = newValue }
        case "xfin_hiccN" where cc != nil:
            let newValue = try value.int(in: 0...127)
            region.crossfadeInControllers.set(cc!, defaultLow: 0, defaultHigh: 0) { $0.high = newValue }
        case "xfout_loccN" where cc != nil:
            let newValue = try value.int(in: 0...127)
            region.crossfadeOutControllers.set(cc!, defaultLow: 127, defaultHigh: 127) { $0.low = newValue }
        case "xfout_hiccN" where cc != nil:
            let newValue = try value.int(in: 0...127)
            region.crossfadeOutControllers.set(cc!, defaultLow: 127, defaultHigh: 127) { $0.high = newValue }
        case "xf_keycurve": region.crossfadeKeyCurve = try value.choice(SFZCrossfadeCurve.self)
        case "xf_velcurve": region.crossfadeVelocityCurve = try value.choice(SFZCrossfadeCurve.self)
        case "xf_cccurve": region.crossfadeControllerCurve = try value.choice(SFZCrossfadeCurve.self)

        default:
            if try applyModulation(pattern, cc, value, to: &region) { return }
            if try applyEnvelopeOrLFO(opcode.name, pattern, cc, value, to: &region) { return }
            warnings.add(.unsupportedOpcode, pattern, at: opcode.location)
        }
    }

    /// `*_curveccN`, `*_smoothccN`, `*_stepccN` of the controller-modulated targets.
    private func applyModulation(
        _ pattern: String, _ cc: Int?, _ value: OpcodeValue, to region: inout SFZRegion
    ) throws(SFZError) -> Bool {
        guard let cc else { return false }
        let targets: [(String, WritableKeyPath<SFZRegion, [SFZCCModulation]>)] = [
            ("volume", \.volumeControllers), ("gain", \.volumeControllers), ("amplitude", \.amplitudeControllers),
            ("pan", \.panControllers), ("width", \.widthControllers), ("position", \.positionControllers),
            ("cutoff", \.cutoffControllers), ("resonance", \.resonanceControllers), ("pitch", \.pitchControllers),
            ("tune", \.pitchControllers),
        ]
        for (prefix, path) in targets where pattern.hasPrefix(prefix + "_") {
            switch pattern.dropFirst(prefix.count + 1) {
            case "curveccN":
                let curve = try value.int(in: 0...SFZCurve.maximumIndex)
                region[keyPath: path].modify(cc) { $0.curve = curve }
            case "smoothccN":
                let smooth = try value.float(in: 0...10_000)
                region[keyPath: path].modify(cc) { $0.smooth = smooth }
            case "stepccN":
                let step = try value.float(in: 0...10_000)
                region[keyPath: path].modify(cc) { $0.step = step }
            default: continue
            }
            return true
        }
        return false
    }

    /// `ampeg_*`, `fileg_*`, `pitcheg_*` and `amplfo_*`, `fillfo_*`, `pitchlfo_*`.
    private func applyEnvelopeOrLFO(
        _ name: String, _ pattern: String, _ cc: Int?, _ value: OpcodeValue, to region: inout SFZRegion
    ) throws(SFZError) -> Bool {
        let envelopes: [(String, WritableKeyPath<SFZRegion, SFZRegionEnvelope>, ClosedRange<Float>)] = [
            ("ampeg_", \.amplitudeEnvelope, 0...0), ("fileg_", \.filterEnvelope, -12000...12000),
            ("pitcheg_", \.pitchEnvelope, -12000...12000),
        ]
        for (prefix, path, depthRange) in envelopes where name.hasPrefix(prefix) {
            let field = String(name.dropFirst(prefix.count))
            let stageRanges: [SFZEnvelopeStage: ClosedRange<Float>] = [
                .delay: 0...100, .start: 0...100, .attack: 0...100, .hold: 0...100, .decay: 0...100,
                .sustain: 0...100, .release: 0...100, .depth: depthRange,
            ]
            if let stage = SFZEnvelopeStage(rawValue: field), let range = stageRanges[stage] {
                if stage == .depth && prefix == "ampeg_" { return false }
                region[keyPath: path][stage] = try value.float(in: range)
                return true
            }
            if field.hasPrefix("vel2"), let stage = SFZEnvelopeStage(rawValue: String(field.dropFirst(4))) {
                if stage == .start || (stage == .depth && prefix == "ampeg_") { return false }
                let range: ClosedRange<Float> = stage == .depth ? -12000...12000 : -100...100
                region[keyPath: path][velocity: stage] = try value.float(in: range)
                return true
            }
            // v1 `ampeg_attackcc1`, v2 `ampeg_attack_oncc1`.
            let fieldPattern = SFZRegionBuilder.pattern(field).pattern
            for stage in SFZEnvelopeStage.allCases
            where fieldPattern == stage.rawValue + "ccN" || fieldPattern == stage.rawValue + "_onccN" {
                guard let cc, stage != .depth || prefix != "ampeg_" else { return false }
                let range: ClosedRange<Float> = stage == .depth ? -12000...12000 : -100...100
                let amount = try value.float(in: range)
                region[keyPath: path].controllers.removeAll { $0.stage == stage && $0.controller == cc }
                region[keyPath: path].controllers.append(
                    SFZEnvelopeControl(stage: stage, controller: cc, amount: amount))
                return true
            }
            return false
        }
        let lfos: [(String, WritableKeyPath<SFZRegion, SFZRegionLFO>, ClosedRange<Float>)] = [
            ("amplfo_", \.amplitudeLFO, -10...10), ("fillfo_", \.filterLFO, -1200...1200),
            ("pitchlfo_", \.pitchLFO, -1200...1200),
        ]
        for (prefix, path, depthRange) in lfos where name.hasPrefix(prefix) {
            let field = String(pattern.dropFirst(prefix.count))
            switch field {
            case "delay": region[keyPath: path].delay = try value.float(in: 0...100)
            case "fade": region[keyPath: path].fade = try value.float(in: 0...100)
            case "freq": region[keyPath: path].frequency = try value.float(in: 0...20)
            case "depth": region[keyPath: path].depth = try value.float(in: depthRange)
            case "depthccN", "depth_onccN":
                guard let cc else { return false }
                try region[keyPath: path].depthControllers.depth(cc, value.float(in: depthRange))
            case "freqccN", "freq_onccN":
                guard let cc else { return false }
                try region[keyPath: path].frequencyControllers.depth(cc, value.float(in: -200...200))
            default: return false
            }
            return true
        }
        return false
    }
}

extension SFZRegionEnvelope {
    subscript(stage: SFZEnvelopeStage) -> Float {
        get {
            switch stage {
            case .delay: delay
            case .start: start
            case .attack: attack
            case .hold: hold
            case .decay: decay
            case .sustain: sustain
            case .release: release
            case .depth: depth
            }
        }
        set {
            switch stage {
            case .delay: delay = newValue
            case .start: start = newValue
            case .attack: attack = newValue
            case .hold: hold = newValue
            case .decay: decay = newValue
            case .sustain: sustain = newValue
            case .release: release = newValue
            case .depth: depth = newValue
            }
        }
    }

    subscript(velocity stage: SFZEnvelopeStage) -> Float {
        get {
            switch stage {
            case .delay: velocityToDelay
            case .attack: velocityToAttack
            case .hold: velocityToHold
            case .decay: velocityToDecay
            case .sustain: velocityToSustain
            case .release: velocityToRelease
            case .depth: velocityToDepth
            case .start: 0
            }
        }
        set {
            switch stage {
            case .delay: velocityToDelay = newValue
            case .attack: velocityToAttack = newValue
            case .hold: velocityToHold = newValue
            case .decay: velocityToDecay = newValue
            case .sustain: velocityToSustain = newValue
            case .release: velocityToRelease = newValue
            case .depth: velocityToDepth = newValue
            case .start: break
            }
        }
    }
}

extension [SFZCCModulation] {
    mutating func modify(_ controller: Int, _ change: (inout SFZCCModulation) -> Void) {
        if let index = firstIndex(where: { $0.controller == controller }) {
            change(&self[index])
        } else {
            var modulation = SFZCCModulation(controller: controller)
            change(&modulation)
            append(modulation)
        }
    }

    mutating func depth(_ controller: Int, _ depth: Float) {
        modify(controller) { $0.depth = depth }
    }
}

extension [SFZCCRange] {
    mutating func set(
        _ controller: Int, defaultLow: Int, defaultHigh: Int, _ change: (inout SFZCCRange) -> Void
    ) {
        if let index = firstIndex(where: { $0.controller == controller }) {
            change(&self[index])
        } else {
            var range = SFZCCRange(controller: controller, low: defaultLow, high: defaultHigh)
            change(&range)
            append(range)
        }
    }
}

/// An opcode's value read as the kind its opcode needs; every failure is one line naming the file, line,
/// opcode and what it should be.
///
/// Threads: a value.
struct OpcodeValue {
    let opcode: SFZOpcode
    let noteOffset: Int

    private func error(_ expected: String) -> SFZError {
        SFZError("\(opcode.location): \(opcode.name)=\(opcode.value.clipped) must be \(expected)")
    }

    func float(in range: ClosedRange<Float>) throws(SFZError) -> Float {
        guard let number = Float(opcode.value), number.isFinite else { throw error("a number") }
        return min(range.upperBound, max(range.lowerBound, number))
    }

    func int(in range: ClosedRange<Int>) throws(SFZError) -> Int {
        let number: Int
        if let whole = Int(opcode.value) {
            number = whole
        } else if let real = Double(opcode.value), real.isFinite, abs(real) < 1e15 {
            number = Int(real.rounded(.towardZero))
        } else {
            throw error("a whole number")
        }
        return Swift.min(range.upperBound, Swift.max(range.lowerBound, number))
    }

    func note(in range: ClosedRange<Int>) throws(SFZError) -> Int {
        guard let key = SFZNote.parse(opcode.value) else {
            throw error("a key: a MIDI number 0–127 or a note name like c4, c#4, db4 (c4 = 60)")
        }
        // -1 keeps its meaning (no key) whatever the offset.
        let shifted = key == -1 ? key : key + noteOffset
        return Swift.min(range.upperBound, Swift.max(range.lowerBound, shifted))
    }

    func choice<Choice: RawRepresentable & CaseIterable>(_: Choice.Type) throws(SFZError) -> Choice
    where Choice.RawValue == String {
        guard let choice = Choice(rawValue: opcode.value.lowercased()) else {
            throw error("one of " + Choice.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return choice
    }

    func onOff() throws(SFZError) -> Bool {
        switch opcode.value.lowercased() {
        case "on", "1", "true": return true
        case "off", "0", "false": return false
        default: throw error("on or off")
        }
    }
}

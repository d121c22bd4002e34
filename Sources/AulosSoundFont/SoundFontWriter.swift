/// Writes SoundFont 2.01 files (RIFF `sfbk`): 16-bit samples (mono, or linked left/right pairs), instruments of
/// zones with key and velocity ranges, generators and modulators, and presets (bank/program) pointing at
/// instruments. Enough of the format for the project's own GM-style font; readers such as FluidSynth load the
/// result as any other SF2.
///
/// Threads: control side, generation time (it builds byte arrays).
public struct SoundFontWriter {
    /// One sample: 16-bit frames at their own rate, with the key they sound at and an optional loop.
    public struct Sample {
        /// Which channel of a stereo pair a sample is (SF2 `SFSampleLink`).
        public enum Kind: UInt16 {
            case mono = 1
            case right = 2
            case left = 4
        }

        public var name: String
        public var data: [Int16]
        public var sampleRate: Int
        public var rootKey: UInt8
        /// Loop start and end, in frames from the sample start (end exclusive); nil for one-shot samples.
        public var loop: Range<Int>?
        /// Pitch correction in cents (the sample's pitch is `rootKey` plus this much flat/sharp).
        public var pitchCorrection: Int8
        public var kind: Kind
        /// The index of the other channel of a stereo pair (a left sample links its right one and back).
        public var link: Int?

        public init(
            name: String, data: [Int16], sampleRate: Int, rootKey: UInt8, loop: Range<Int>?, pitchCorrection: Int8 = 0,
            kind: Kind = .mono, link: Int? = nil
        ) {
            self.name = name
            self.data = data
            self.sampleRate = sampleRate
            self.rootKey = rootKey
            self.loop = loop
            self.pitchCorrection = pitchCorrection
            self.kind = kind
            self.link = link
        }
    }

    /// SF2 generator operators used here (SoundFont 2.01 §8.1.2).
    public enum Generator: UInt16 {
        case modLfoToPitch = 5
        case vibLfoToPitch = 6
        case modEnvToPitch = 7
        case initialFilterFc = 8  // absolute cents (13500 ≈ 20 kHz: open)
        case initialFilterQ = 9  // centibels of resonance
        case modLfoToFilterFc = 10
        case modEnvToFilterFc = 11
        case modLfoToVolume = 13  // centibels
        case chorusEffectsSend = 15
        case reverbEffectsSend = 16
        case pan = 17  // −500 (left) … 500 (right)
        case delayModLFO = 21
        case freqModLFO = 22  // absolute cents (0 = 8.176 Hz)
        case delayVibLFO = 23
        case freqVibLFO = 24
        case attackModEnv = 26
        case holdModEnv = 27
        case decayModEnv = 28
        case sustainModEnv = 29  // 0.1 % below full
        case releaseModEnv = 30
        case attackVolEnv = 34
        case holdVolEnv = 35
        case decayVolEnv = 36
        case sustainVolEnv = 37  // centibels of attenuation
        case releaseVolEnv = 38
        case keynumToVolEnvDecay = 40  // timecents per key away from key 60
        case instrument = 41
        case keyRange = 43
        case velRange = 44
        case initialAttenuation = 48  // centibels
        case coarseTune = 51
        case fineTune = 52
        case sampleID = 53
        case sampleModes = 54  // 1 = loop continuously
        case scaleTuning = 56
        case exclusiveClass = 57  // a new note of the class ends the sounding ones (hi-hat choke)
        case overridingRootKey = 58
    }

    /// A modulator (SF2 §8.2): `source` (a controller, shaped) × `amount` → `destination`.
    public struct Modulator: Equatable {
        public var source: UInt16
        public var destination: Generator
        public var amount: Int16
        public var amountSource: UInt16
        public var transform: UInt16

        public init(
            source: UInt16, destination: Generator, amount: Int16, amountSource: UInt16 = 0, transform: UInt16 = 0
        ) {
            self.source = source
            self.destination = destination
            self.amount = amount
            self.amountSource = amountSource
            self.transform = transform
        }

        /// Note-on velocity, linear, unipolar, decreasing (1 at velocity 0, 0 at 127): SF2 source operator 0x0102.
        public static let velocityFalling: UInt16 = 0x0102

        /// Softer notes get a lower filter cutoff: `cents` below the zone's cutoff at velocity 0, none at 127.
        /// (FluidSynth's own default velocity→cutoff modulator acts only from velocity 64 up; this one acts
        /// over the whole range.)
        public static func velocityToFilterCutoff(cents: Int16) -> Modulator {
            .init(source: velocityFalling, destination: .initialFilterFc, amount: -cents)
        }
    }

    /// A zone: a sample over key and velocity ranges, with its generators and modulators.
    public struct Zone {
        public var keyRange: ClosedRange<UInt8>
        public var velocityRange: ClosedRange<UInt8>
        public var sample: Int
        /// Other generators (amounts as the SF2 spec defines them: timecents, centibels, …).
        public var generators: [(Generator, Int16)]
        public var modulators: [Modulator]

        public init(
            keyRange: ClosedRange<UInt8> = 0...127, velocityRange: ClosedRange<UInt8> = 0...127, sample: Int,
            generators: [(Generator, Int16)] = [], modulators: [Modulator] = []
        ) {
            self.keyRange = keyRange
            self.velocityRange = velocityRange
            self.sample = sample
            self.generators = generators
            self.modulators = modulators
        }
    }

    /// An instrument: named zones (SF2 `inst`).
    public struct Instrument {
        public var name: String
        public var zones: [Zone]
        public init(name: String, zones: [Zone]) {
            self.name = name
            self.zones = zones
        }
    }

    /// A preset: a bank and program number playing one instrument (SF2 `phdr`).
    public struct Preset {
        public var name: String
        public var bank: UInt16
        public var program: UInt16
        public var instrument: Int
        public init(name: String, bank: UInt16, program: UInt16, instrument: Int) {
            self.name = name
            self.bank = bank
            self.program = program
            self.instrument = instrument
        }
    }

    public var name: String
    public var copyright: String
    public var comment: String
    public var samples: [Sample] = []
    public var instruments: [Instrument] = []
    public var presets: [Preset] = []

    public init(name: String, copyright: String, comment: String) {
        self.name = name
        self.copyright = copyright
        self.comment = comment
    }

    /// The file's bytes.
    public func encode() -> [UInt8] {
        var info = Bytes()
        info.chunk("ifil") {
            $0.u16(2)
            $0.u16(1)
        }
        info.chunk("isng") { $0.zstr("EMU8000") }
        info.chunk("INAM") { $0.zstr(name) }
        info.chunk("ICOP") { $0.zstr(copyright) }
        info.chunk("ICMT") { $0.zstr(comment) }
        info.chunk("ISFT") { $0.zstr("Aulos SoundFontWriter") }

        // Sample data: each sample followed by 46 zero frames, as the spec requires. Written frame by frame
        // into one reserved buffer: the font holds millions of frames and this runs in debug test builds.
        var smpl = Bytes()
        smpl.bytes.reserveCapacity(2 * samples.reduce(0) { $0 + $1.data.count + 46 })
        var starts: [Int] = []
        for sample in samples {
            starts.append(smpl.bytes.count / 2)
            sample.data.withUnsafeBufferPointer { frames in
                for value in frames {
                    let bits = UInt16(bitPattern: value)
                    smpl.bytes.append(UInt8(truncatingIfNeeded: bits))
                    smpl.bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
                }
            }
            smpl.bytes.append(contentsOf: repeatElement(0, count: 46 * 2))
        }

        var phdr = Bytes()
        var pbag = Bytes()
        var pgen = Bytes()
        var pgenIndex = 0
        let sortedPresets = presets.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) }
        for (index, preset) in sortedPresets.enumerated() {
            phdr.name20(preset.name)
            phdr.u16(preset.program)
            phdr.u16(preset.bank)
            phdr.u16(UInt16(index))
            phdr.u32(0)
            phdr.u32(0)
            phdr.u32(0)
            pbag.u16(UInt16(pgenIndex))
            pbag.u16(0)
            pgen.u16(Generator.instrument.rawValue)
            pgen.u16(UInt16(preset.instrument))
            pgenIndex += 1
        }
        phdr.name20("EOP")
        phdr.u16(0)
        phdr.u16(0)
        phdr.u16(UInt16(sortedPresets.count))
        phdr.u32(0)
        phdr.u32(0)
        phdr.u32(0)
        pbag.u16(UInt16(pgenIndex))
        pbag.u16(0)
        pgen.u16(0)
        pgen.u16(0)

        var inst = Bytes()
        var ibag = Bytes()
        var imod = Bytes()
        var igen = Bytes()
        var ibagIndex = 0
        var igenIndex = 0
        var imodIndex = 0
        for instrument in instruments {
            inst.name20(instrument.name)
            inst.u16(UInt16(ibagIndex))
            for zone in instrument.zones {
                ibag.u16(UInt16(igenIndex))
                ibag.u16(UInt16(imodIndex))
                ibagIndex += 1
                // keyRange must come first, then velRange; sampleID last (SF2 §8.1.2).
                func generator(_ operation: Generator, _ amount: UInt16) {
                    igen.u16(operation.rawValue)
                    igen.u16(amount)
                    igenIndex += 1
                }
                generator(.keyRange, UInt16(zone.keyRange.lowerBound) | UInt16(zone.keyRange.upperBound) << 8)
                if zone.velocityRange != 0...127 {
                    let range = zone.velocityRange
                    generator(.velRange, UInt16(range.lowerBound) | UInt16(range.upperBound) << 8)
                }
                for (operation, amount) in zone.generators { generator(operation, UInt16(bitPattern: amount)) }
                if samples[zone.sample].loop != nil { generator(.sampleModes, 1) }
                generator(.sampleID, UInt16(zone.sample))
                for modulator in zone.modulators {
                    imod.u16(modulator.source)
                    imod.u16(modulator.destination.rawValue)
                    imod.u16(UInt16(bitPattern: modulator.amount))
                    imod.u16(modulator.amountSource)
                    imod.u16(modulator.transform)
                    imodIndex += 1
                }
            }
        }
        inst.name20("EOI")
        inst.u16(UInt16(ibagIndex))
        ibag.u16(UInt16(igenIndex))
        ibag.u16(UInt16(imodIndex))
        imod.bytes.append(contentsOf: repeatElement(0, count: 10))
        igen.u16(0)
        igen.u16(0)

        var shdr = Bytes()
        for (index, sample) in samples.enumerated() {
            let start = starts[index]
            let loop = sample.loop ?? 0..<sample.data.count
            shdr.name20(sample.name)
            shdr.u32(UInt32(start))
            shdr.u32(UInt32(start + sample.data.count))
            shdr.u32(UInt32(start + loop.lowerBound))
            shdr.u32(UInt32(start + loop.upperBound))
            shdr.u32(UInt32(sample.sampleRate))
            shdr.bytes += [sample.rootKey, UInt8(bitPattern: sample.pitchCorrection)]
            shdr.u16(UInt16(sample.link ?? 0))
            shdr.u16(sample.kind.rawValue)
        }
        shdr.name20("EOS")
        shdr.bytes.append(contentsOf: repeatElement(0, count: 26))

        var pdta = Bytes()
        pdta.chunk("phdr", phdr)
        pdta.chunk("pbag", pbag)
        pdta.chunk("pmod", Bytes(bytes: [UInt8](repeating: 0, count: 10)))
        pdta.chunk("pgen", pgen)
        pdta.chunk("inst", inst)
        pdta.chunk("ibag", ibag)
        pdta.chunk("imod", imod)
        pdta.chunk("igen", igen)
        pdta.chunk("shdr", shdr)
        var sdta = Bytes()
        sdta.chunk("smpl", smpl)
        var body = Bytes(bytes: Array("sfbk".utf8))
        body.list("INFO", info)
        body.list("sdta", sdta)
        body.list("pdta", pdta)
        var file = Bytes()
        file.chunk("RIFF", body)
        return file.bytes
    }
}

/// A growing little-endian byte buffer with the RIFF helpers the writer needs.
private struct Bytes {
    var bytes: [UInt8] = []

    mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(v & 0xFF))
        bytes.append(UInt8(v >> 8))
    }
    mutating func u32(_ v: UInt32) {
        for shift in [0, 8, 16, 24] as [UInt32] { bytes.append(UInt8(truncatingIfNeeded: v >> shift)) }
    }
    mutating func chunk(_ id: String, _ data: Bytes) {
        bytes += Array(id.utf8)
        u32(UInt32(data.bytes.count))
        bytes += data.bytes
        if data.bytes.count % 2 == 1 { bytes.append(0) }
    }
    mutating func chunk(_ id: String, _ build: (inout Bytes) -> Void) {
        var data = Bytes()
        build(&data)
        chunk(id, data)
    }
    mutating func list(_ type: String, _ data: Bytes) {
        chunk("LIST", Bytes(bytes: Array(type.utf8) + data.bytes))
    }
    /// A zero-terminated string padded to an even length (INFO strings).
    mutating func zstr(_ text: String) {
        let string = Array(text.utf8.prefix(255)) + [0]
        bytes += string
        if string.count % 2 == 1 { bytes.append(0) }
    }
    /// A 20-byte name field.
    mutating func name20(_ text: String) {
        let name = Array(text.utf8.prefix(19))
        bytes += name + [UInt8](repeating: 0, count: 20 - name.count)
    }
}

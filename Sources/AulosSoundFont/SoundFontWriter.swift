/// Writes SoundFont 2.01 files (RIFF `sfbk`): mono 16-bit samples, instruments of zones with key ranges
/// and generators, and presets (bank/program) pointing at instruments. Enough of the format for the
/// project's own GM-style font; readers such as FluidSynth load the result as any other SF2.
///
/// Threads: control side (it builds byte arrays).
public struct SoundFontWriter {
    public struct Sample {
        public var name: String
        public var data: [Int16]
        public var sampleRate: Int
        public var rootKey: UInt8
        /// Loop start and end, in frames from the sample start (end exclusive); nil for one-shot samples.
        public var loop: Range<Int>?
        /// Pitch correction in cents (the sample's pitch is `rootKey` plus this much flat/sharp).
        public var pitchCorrection: Int8

        public init(
            name: String, data: [Int16], sampleRate: Int, rootKey: UInt8, loop: Range<Int>?, pitchCorrection: Int8 = 0
        ) {
            self.name = name
            self.data = data
            self.sampleRate = sampleRate
            self.rootKey = rootKey
            self.loop = loop
            self.pitchCorrection = pitchCorrection
        }
    }

    /// SF2 generator operators used here (SoundFont 2.01 §8.1.2).
    public enum Generator: UInt16 {
        case pan = 17
        case attackVolEnv = 34
        case holdVolEnv = 35
        case decayVolEnv = 36
        case sustainVolEnv = 37  // centibels of attenuation
        case releaseVolEnv = 38
        case keyRange = 43
        case initialAttenuation = 48  // centibels
        case sampleModes = 54  // 1 = loop continuously
        case overridingRootKey = 58
        case instrument = 41
        case sampleID = 53
        case coarseTune = 51
        case fineTune = 52
        case scaleTuning = 56
    }

    public struct Zone {
        public var keyRange: ClosedRange<UInt8>
        public var sample: Int
        /// Other generators (amounts as the SF2 spec defines them: timecents, centibels, …).
        public var generators: [(Generator, Int16)]

        public init(keyRange: ClosedRange<UInt8> = 0...127, sample: Int, generators: [(Generator, Int16)] = []) {
            self.keyRange = keyRange
            self.sample = sample
            self.generators = generators
        }
    }

    public struct Instrument {
        public var name: String
        public var zones: [Zone]
        public init(name: String, zones: [Zone]) {
            self.name = name
            self.zones = zones
        }
    }

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
        var info: [UInt8] = []
        info += chunk("ifil", u16(2) + u16(1))
        info += chunk("isng", zstr("EMU8000"))
        info += chunk("INAM", zstr(name))
        info += chunk("ICOP", zstr(copyright))
        info += chunk("ICMT", zstr(comment))
        info += chunk("ISFT", zstr("Aulos SoundFontWriter"))

        // Sample data: each sample followed by 46 zero frames, as the spec requires.
        var smpl: [UInt8] = []
        var starts: [Int] = []
        for sample in samples {
            starts.append(smpl.count / 2)
            for value in sample.data { smpl += u16(UInt16(bitPattern: value)) }
            smpl += [UInt8](repeating: 0, count: 46 * 2)
        }

        var phdr: [UInt8] = []
        var pbag: [UInt8] = []
        var pgen: [UInt8] = []
        var pbagIndex = 0
        var pgenIndex = 0
        for preset in presets.sorted(by: { ($0.bank, $0.program) < ($1.bank, $1.program) }) {
            phdr +=
                name20(preset.name) + u16(preset.program) + u16(preset.bank) + u16(UInt16(pbagIndex)) + u32(0) + u32(0)
                + u32(0)
            pbag += u16(UInt16(pgenIndex)) + u16(0)
            pbagIndex += 1
            pgen += u16(Generator.instrument.rawValue) + u16(UInt16(preset.instrument))
            pgenIndex += 1
        }
        phdr += name20("EOP") + u16(0) + u16(0) + u16(UInt16(pbagIndex)) + u32(0) + u32(0) + u32(0)
        pbag += u16(UInt16(pgenIndex)) + u16(0)
        pgen += u16(0) + u16(0)

        var inst: [UInt8] = []
        var ibag: [UInt8] = []
        var igen: [UInt8] = []
        var ibagIndex = 0
        var igenIndex = 0
        for instrument in instruments {
            inst += name20(instrument.name) + u16(UInt16(ibagIndex))
            for zone in instrument.zones {
                ibag += u16(UInt16(igenIndex)) + u16(0)
                ibagIndex += 1
                // keyRange must come first, sampleID last (SF2 §8.1.2).
                igen += u16(Generator.keyRange.rawValue) + [zone.keyRange.lowerBound, zone.keyRange.upperBound]
                igenIndex += 1
                for (generator, amount) in zone.generators {
                    igen += u16(generator.rawValue) + u16(UInt16(bitPattern: amount))
                    igenIndex += 1
                }
                if samples[zone.sample].loop != nil {
                    igen += u16(Generator.sampleModes.rawValue) + u16(1)
                    igenIndex += 1
                }
                igen += u16(Generator.sampleID.rawValue) + u16(UInt16(zone.sample))
                igenIndex += 1
            }
        }
        inst += name20("EOI") + u16(UInt16(ibagIndex))
        ibag += u16(UInt16(igenIndex)) + u16(0)
        igen += u16(0) + u16(0)

        var shdr: [UInt8] = []
        for (index, sample) in samples.enumerated() {
            let start = starts[index]
            let loop = sample.loop ?? 0..<sample.data.count
            shdr += name20(sample.name) + u32(UInt32(start)) + u32(UInt32(start + sample.data.count))
            shdr += u32(UInt32(start + loop.lowerBound)) + u32(UInt32(start + loop.upperBound))
            shdr +=
                u32(UInt32(sample.sampleRate)) + [sample.rootKey, UInt8(bitPattern: sample.pitchCorrection)] + u16(0)
                + u16(1)  // mono
        }
        shdr += name20("EOS") + [UInt8](repeating: 0, count: 26)

        let pdta =
            chunk("phdr", phdr) + chunk("pbag", pbag) + chunk("pmod", [UInt8](repeating: 0, count: 10))
            + chunk("pgen", pgen) + chunk("inst", inst) + chunk("ibag", ibag)
            + chunk("imod", [UInt8](repeating: 0, count: 10))
            + chunk("igen", igen) + chunk("shdr", shdr)
        let body = Array("sfbk".utf8) + list("INFO", info) + list("sdta", chunk("smpl", smpl)) + list("pdta", pdta)
        return Array("RIFF".utf8) + u32(UInt32(body.count)) + body
    }

    private func u16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    private func u32(_ v: UInt32) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: v >> $0) } }
    private func chunk(_ id: String, _ data: [UInt8]) -> [UInt8] {
        Array(id.utf8) + u32(UInt32(data.count)) + data + (data.count % 2 == 1 ? [0] : [])
    }
    private func list(_ type: String, _ data: [UInt8]) -> [UInt8] { chunk("LIST", Array(type.utf8) + data) }
    /// A zero-terminated string padded to an even length (INFO strings).
    private func zstr(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8.prefix(255)) + [0]
        if bytes.count % 2 == 1 { bytes.append(0) }
        return bytes
    }
    /// A 20-byte name field.
    private func name20(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8.prefix(19))
        return bytes + [UInt8](repeating: 0, count: 20 - bytes.count)
    }
}

/// Core Audio's AudioStreamBasicDescription ("ASBD"): the nine fields, same names and meaning.
///
/// Threads: a plain value, usable anywhere. Start from `.zero` or a builder, never from scratch: the
/// seeds are emphatic that every field must be set deliberately.
public struct StreamFormat: Hashable, Sendable, CustomStringConvertible {
    public var sampleRate: Double
    public var formatID: FourCharCode
    public var formatFlags: FormatFlags
    public var bytesPerPacket: UInt32
    public var framesPerPacket: UInt32
    public var bytesPerFrame: UInt32
    public var channelsPerFrame: UInt32
    public var bitsPerChannel: UInt32
    public var reserved: UInt32

    public init(
        sampleRate: Double, formatID: FourCharCode, formatFlags: FormatFlags, bytesPerPacket: UInt32,
        framesPerPacket: UInt32, bytesPerFrame: UInt32, channelsPerFrame: UInt32, bitsPerChannel: UInt32,
        reserved: UInt32 = 0
    ) {
        self.sampleRate = sampleRate
        self.formatID = formatID
        self.formatFlags = formatFlags
        self.bytesPerPacket = bytesPerPacket
        self.framesPerPacket = framesPerPacket
        self.bytesPerFrame = bytesPerFrame
        self.channelsPerFrame = channelsPerFrame
        self.bitsPerChannel = bitsPerChannel
        self.reserved = reserved
    }

    /// Every field zero (Core Audio's `= {0}`); not a valid format until filled in.
    public static let zero = StreamFormat(
        sampleRate: 0, formatID: .any, formatFlags: [], bytesPerPacket: 0, framesPerPacket: 0, bytesPerFrame: 0,
        channelsPerFrame: 0, bitsPerChannel: 0)

    /// A linear-PCM, native-endian, packed format of one of the sample types Aulos converts.
    public init(sample: SampleFormat, channels: UInt32, sampleRate: Double, interleaved: Bool) {
        var flags: FormatFlags = [.isPacked]
        flags.insert(sample == .float32 ? .isFloat : .isSignedInteger)
        if !interleaved { flags.insert(.isNonInterleaved) }
        let bytesPerSample = sample.bytesPerSample
        let bytesPerFrame = interleaved ? bytesPerSample * channels : bytesPerSample
        self.init(
            sampleRate: sampleRate, formatID: .linearPCM, formatFlags: flags, bytesPerPacket: bytesPerFrame,
            framesPerPacket: 1, bytesPerFrame: bytesPerFrame, channelsPerFrame: channels,
            bitsPerChannel: sample.bitsPerSample)
    }

    /// The processing format of every Aulos unit (Core Audio's kAudioFormatFlagsAudioUnitCanonical, with
    /// Float32 samples; see the seeds' errata): Float32, native endian, packed, non-interleaved.
    public static func canonical(channels: UInt32, sampleRate: Double) -> StreamFormat {
        StreamFormat(sample: .float32, channels: channels, sampleRate: sampleRate, interleaved: false)
    }

    public var isFloat: Bool { formatFlags.contains(.isFloat) }
    public var isInterleaved: Bool { !formatFlags.contains(.isNonInterleaved) }
    public var isCanonical: Bool { sampleFormat == .float32 && !isInterleaved && (try? validate()) != nil }

    /// Bytes of one sample of one channel.
    public var bytesPerSample: UInt32 {
        isInterleaved ? (channelsPerFrame == 0 ? 0 : bytesPerFrame / channelsPerFrame) : bytesPerFrame
    }

    /// Buffers in a buffer list of this format: one per channel when non-interleaved, else one.
    public var bufferCount: UInt32 { isInterleaved ? 1 : channelsPerFrame }

    /// Channels in each buffer of a buffer list of this format.
    public var channelsPerBuffer: UInt32 { isInterleaved ? channelsPerFrame : 1 }

    /// The sample type, when the layout is one Aulos can convert; nil otherwise.
    public var sampleFormat: SampleFormat? {
        guard formatID == .linearPCM, !formatFlags.contains(.isBigEndian) else { return nil }
        if isFloat {
            return bitsPerChannel == 32 && bytesPerSample == 4 && !formatFlags.contains(.isSignedInteger)
                ? .float32 : nil
        }
        guard formatFlags.contains(.isSignedInteger) else { return nil }
        switch (bitsPerChannel, bytesPerSample) {
        case (16, 2): return .int16
        case (24, 3): return .int24
        case (32, 4): return .int32
        default: return nil
        }
    }

    /// Checks the fields against each other and against what Aulos supports, naming the first bad field.
    /// Throws `formatNotSupported` (Core Audio's kAudioUnitErr_FormatNotSupported).
    public func validate() throws(AudioUnitError) {
        func reject(_ why: String) -> AudioUnitError {
            AudioUnitError(.formatNotSupported, "stream format \(compactDescription): \(why)")
        }
        guard reserved == 0 else { throw reject("mReserved must be 0") }
        guard formatID == .linearPCM else { throw reject("format ID '\(formatID)' is not linear PCM ('lpcm')") }
        guard sampleRate.isFinite, sampleRate >= 1000, sampleRate <= 768_000 else {
            throw reject("sample rate \(sampleRate) is outside 1000...768000 Hz")
        }
        guard channelsPerFrame >= 1, channelsPerFrame <= 64 else {
            throw reject("\(channelsPerFrame) channels is outside 1...64")
        }
        guard framesPerPacket == 1 else { throw reject("linear PCM has 1 frame per packet, not \(framesPerPacket)") }
        guard formatFlags.contains(.isPacked) else { throw reject("only packed samples are supported") }
        guard !formatFlags.contains(.isBigEndian) else { throw reject("only native (little) endian is supported") }
        guard !(isFloat && formatFlags.contains(.isSignedInteger)) else {
            throw reject("a sample cannot be both float and signed integer")
        }
        guard isFloat || formatFlags.contains(.isSignedInteger) else {
            throw reject("unsigned integer samples are not supported")
        }
        let bytesPerSample = (bitsPerChannel + 7) / 8
        let expectedFrame = isInterleaved ? bytesPerSample * channelsPerFrame : bytesPerSample
        guard bytesPerFrame == expectedFrame else {
            throw reject("mBytesPerFrame is \(bytesPerFrame), expected \(expectedFrame)")
        }
        guard bytesPerPacket == bytesPerFrame else {
            throw reject("mBytesPerPacket (\(bytesPerPacket)) must equal mBytesPerFrame (\(bytesPerFrame))")
        }
        guard sampleFormat != nil else {
            throw reject("\(bitsPerChannel)-bit \(isFloat ? "float" : "integer") samples are not supported")
        }
    }

    /// Core Audio's printASBD layout (Listing 2-8), one field a line.
    public var description: String {
        """
          Sample Rate:         \(formatTenWide(sampleRate))
          Format ID:           \(formatID)
          Format Flags:        0x\(String(formatFlags.rawValue, radix: 16, uppercase: true)) \(formatFlags)
          Bytes per Packet:    \(bytesPerPacket)
          Frames per Packet:   \(framesPerPacket)
          Bytes per Frame:     \(bytesPerFrame)
          Channels per Frame:  \(channelsPerFrame)
          Bits per Channel:    \(bitsPerChannel)
        """
    }

    /// One line, for errors and graph dumps: `48000 Hz, 2 ch, Float32, non-interleaved`.
    public var compactDescription: String {
        let rate =
            sampleRate == sampleRate.rounded() && sampleRate.magnitude < 1e9
            ? String(Int(sampleRate)) : String(sampleRate)
        let sample =
            sampleFormat.map(\.description)
            ?? "\(formatID) \(bitsPerChannel)-bit flags 0x\(String(formatFlags.rawValue, radix: 16))"
        return "\(rate) Hz, \(channelsPerFrame) ch, \(sample), \(isInterleaved ? "interleaved" : "non-interleaved")"
    }
}

/// `%10.0f` without Foundation.
private func formatTenWide(_ value: Double) -> String {
    let text = value.isFinite ? String(Int64(value.rounded())) : String(value)
    return String(repeating: " ", count: max(0, 10 - text.count)) + text
}

/// Core Audio's kAudioFormatFlag* bits for linear PCM (same values).
public struct FormatFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let isFloat = FormatFlags(rawValue: 1 << 0)
    public static let isBigEndian = FormatFlags(rawValue: 1 << 1)
    public static let isSignedInteger = FormatFlags(rawValue: 1 << 2)
    public static let isPacked = FormatFlags(rawValue: 1 << 3)
    public static let isAlignedHigh = FormatFlags(rawValue: 1 << 4)
    public static let isNonInterleaved = FormatFlags(rawValue: 1 << 5)
    public static let isNonMixable = FormatFlags(rawValue: 1 << 6)

    public var description: String {
        let names: [(FormatFlags, String)] = [
            (.isFloat, "Float"), (.isBigEndian, "BigEndian"), (.isSignedInteger, "SignedInteger"),
            (.isPacked, "Packed"), (.isAlignedHigh, "AlignedHigh"), (.isNonInterleaved, "NonInterleaved"),
            (.isNonMixable, "NonMixable"),
        ]
        let set = names.filter { contains($0.0) }.map(\.1)
        return "[" + set.joined(separator: " ") + "]"
    }
}

/// The sample types Aulos converts between. Integers are signed, native endian, full scale ±1.0.
public enum SampleFormat: Sendable, CaseIterable, CustomStringConvertible {
    case float32, int16, int24, int32

    /// Parses the names the CLI accepts: float32, int16, int24, int32 (also f32, s16, s24, s32).
    public init?(name: String) {
        switch name.lowercased() {
        case "float32", "f32", "float": self = .float32
        case "int16", "s16", "16": self = .int16
        case "int24", "s24", "24": self = .int24
        case "int32", "s32", "32": self = .int32
        default: return nil
        }
    }

    /// Case comparison without the Equatable witness (usable on the render thread).
    @inline(__always) @_noAllocation @_noLocks
    public func isSameCase(as other: SampleFormat) -> Bool {
        switch (self, other) {
        case (.float32, .float32), (.int16, .int16), (.int24, .int24), (.int32, .int32): true
        default: false
        }
    }

    public var bytesPerSample: UInt32 {
        switch self {
        case .int16: 2
        case .int24: 3
        case .float32, .int32: 4
        }
    }

    public var bitsPerSample: UInt32 { self == .int24 ? 24 : bytesPerSample * 8 }

    public var description: String {
        switch self {
        case .float32: "Float32"
        case .int16: "Int16"
        case .int24: "Int24"
        case .int32: "Int32"
        }
    }
}

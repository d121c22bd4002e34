import AulosCore
import Testing

@Suite struct StreamFormatTests {
    @Test func canonicalStereoMatchesTheSeedsExample() throws {
        let format = StreamFormat.canonical(channels: 2, sampleRate: 44_100)
        #expect(format.formatID == .linearPCM)
        #expect(format.formatFlags == [.isFloat, .isPacked, .isNonInterleaved])
        #expect(format.bytesPerPacket == 4)
        #expect(format.bytesPerFrame == 4)
        #expect(format.framesPerPacket == 1)
        #expect(format.bitsPerChannel == 32)
        #expect(format.channelsPerFrame == 2)
        #expect(format.bufferCount == 2)
        #expect(format.isCanonical)
        try format.validate()
    }

    @Test func interleavedIntegerLayouts() throws {
        let s16 = StreamFormat(sample: .int16, channels: 2, sampleRate: 48_000, interleaved: true)
        #expect(s16.bytesPerFrame == 4 && s16.bufferCount == 1 && s16.channelsPerBuffer == 2)
        let s24 = StreamFormat(sample: .int24, channels: 2, sampleRate: 48_000, interleaved: true)
        #expect(s24.bytesPerFrame == 6 && s24.bitsPerChannel == 24 && s24.sampleFormat == .int24)
        try s16.validate()
        try s24.validate()
        #expect(!s16.isCanonical)
    }

    @Test(arguments: [
        "reserved", "format ID", "sample rate", "NaN rate", "channels", "frames per packet", "bytes per frame",
        "bytes per packet", "big endian", "unpacked", "float and int", "unsigned", "64-bit float",
    ])
    func invalidFieldsAreRejected(field: String) {
        var f = StreamFormat.canonical(channels: 2, sampleRate: 48_000)
        switch field {
        case "reserved": f.reserved = 1
        case "format ID": f.formatID = "aac "
        case "sample rate": f.sampleRate = 0
        case "NaN rate": f.sampleRate = .nan
        case "channels": f.channelsPerFrame = 0
        case "frames per packet": f.framesPerPacket = 2
        case "bytes per frame": f.bytesPerFrame = 8
        case "bytes per packet": f.bytesPerPacket = 8
        case "big endian": f.formatFlags.insert(.isBigEndian)
        case "unpacked": f.formatFlags.remove(.isPacked)
        case "float and int": f.formatFlags.insert(.isSignedInteger)
        case "unsigned": f.formatFlags.remove(.isFloat)
        default: (f.bitsPerChannel, f.bytesPerFrame, f.bytesPerPacket) = (64, 8, 8)
        }
        #expect(throws: AudioUnitError(.formatNotSupported, "")) { try f.validate() }
        #expect(!f.isCanonical)
    }

    @Test func zeroFormatIsNotValid() {
        #expect(throws: AudioUnitError(.formatNotSupported, "")) { try StreamFormat.zero.validate() }
    }

    @Test func printsLikePrintASBD() {
        let text = StreamFormat.canonical(channels: 2, sampleRate: 44_100).description
        #expect(text.contains("Sample Rate:              44100"))
        #expect(text.contains("Format ID:           lpcm"))
        #expect(text.contains("Format Flags:        0x29"))
        #expect(text.contains("Bits per Channel:    32"))
        #expect(
            StreamFormat(sample: .int24, channels: 1, sampleRate: 96_000, interleaved: true).compactDescription
                == "96000 Hz, 1 ch, Int24, interleaved")
    }

    @Test func errorsNameTheProblem() {
        var format = StreamFormat.canonical(channels: 2, sampleRate: 48_000)
        format.framesPerPacket = 3
        do {
            try format.validate()
            Issue.record("expected a format error")
        } catch {
            #expect(error.detail.contains("1 frame per packet"))
            #expect(error.status == -10868)
        }
    }
}

import AulosMIDI
import Testing

/// CC 91/93 per MIDI channel: GM's defaults, resets, the weighting of each channel and the glide.
@Suite struct ChannelEffectSendsTests {
    /// Fills channel `channel` with a constant for one slice.
    static func fill(_ sends: ChannelEffectSends, channel: Int, value: Float, frames: Int) {
        let left = sends.channel(channel, frameCount: frames)
        for index in 0..<frames {
            left[index] += value
            left[sends.maximumFrames + index] += value
        }
    }

    /// One slice mixed: (main left, reverb left, chorus left) per frame.
    static func mix(_ sends: ChannelEffectSends, frames: Int) -> (main: [Float], reverb: [Float], chorus: [Float]) {
        let main = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 4 * frames)
        defer {
            main.deallocate()
            out.deallocate()
        }
        sends.mix(frameCount: frames, left: main, right: main + frames, sends: out, sendStride: frames)
        return (
            Array(UnsafeBufferPointer(start: main, count: frames)),
            Array(UnsafeBufferPointer(start: out, count: frames)),
            Array(UnsafeBufferPointer(start: out + 2 * frames, count: frames))
        )
    }

    @Test func channelsStartAtGeneralMIDIsDefaultsAndResetToThem() {
        let sends = ChannelEffectSends(maximumFrames: 64)
        defer { sends.deallocate() }
        for channel in 0..<16 {
            #expect(sends.controller(91, channel: channel) == 40 && sends.controller(93, channel: channel) == 0)
        }
        sends.controlChange(91, 100, channel: 3)
        sends.controlChange(93, 127, channel: 3)
        sends.controlChange(7, 10, channel: 3)  // not its business
        #expect(sends.controller(91, channel: 3) == 100 && sends.controller(93, channel: 3) == 127)
        #expect(sends.controller(91, channel: 4) == 40)
        sends.controlChange(121, 0, channel: 3)  // Reset All Controllers (a GM/GS reset sends one per channel)
        #expect(sends.controller(91, channel: 3) == 40 && sends.controller(93, channel: 3) == 0)
    }

    @Test func eachChannelIsSentByItsOwnControllers() {
        let sends = ChannelEffectSends(maximumFrames: 64)
        defer { sends.deallocate() }
        sends.controlChange(91, 127, channel: 0)
        sends.controlChange(91, 0, channel: 1)
        sends.controlChange(93, 127, channel: 1)
        // Before either channel sounds, their gains jump to the controllers: no glide from the defaults.
        sends.beginSlice()
        Self.fill(sends, channel: 0, value: 0.5, frames: 64)
        Self.fill(sends, channel: 1, value: 0.25, frames: 64)
        let (main, reverb, chorus) = Self.mix(sends, frames: 64)
        #expect(main.allSatisfy { $0 == 0.75 })
        #expect(reverb.allSatisfy { $0 == 0.5 }, "channel 1 alone, at CC 127")
        #expect(chorus.allSatisfy { $0 == 0.25 }, "channel 2 alone, at CC 127")
    }

    @Test func aControllerChangeGlidesOverOneSlice() {
        let sends = ChannelEffectSends(maximumFrames: 64)
        defer { sends.deallocate() }
        sends.beginSlice()
        Self.fill(sends, channel: 0, value: 1, frames: 64)
        #expect(Self.mix(sends, frames: 64).reverb.allSatisfy { abs($0 - 40 / 127) < 1e-6 })
        sends.controlChange(91, 127, channel: 0)
        sends.beginSlice()
        Self.fill(sends, channel: 0, value: 1, frames: 64)
        let reverb = Self.mix(sends, frames: 64).reverb
        // From 40/127 to 1 in 64 equal steps: no jump bigger than one step.
        let step = (1 - Float(40) / 127) / 64
        #expect(zip(reverb, reverb.dropFirst()).allSatisfy { abs($1 - $0 - step) < 1e-5 })
        #expect(abs(reverb.last! - 1) < 1e-5)
        sends.beginSlice()
        Self.fill(sends, channel: 0, value: 1, frames: 64)
        #expect(Self.mix(sends, frames: 64).reverb.allSatisfy { $0 == 1 })
    }
}

/// The resets a General MIDI file or keyboard sends, recognised exactly (other Roland and Yamaha system
/// exclusive messages are not resets).
@Suite struct SystemResetTests {
    @Test func generalMIDIGSAndXGResetsAreRecognised() {
        #expect(SystemReset.isReset([0x7E, 0x7F, 0x09, 0x01]))
        #expect(SystemReset.isReset([0x7E, 0x10, 0x09, 0x03]))
        #expect(SystemReset.isReset([0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41]))
        #expect(SystemReset.isReset([0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00]))
        #expect(!SystemReset.isReset([0x7E, 0x7F, 0x09, 0x02]), "GM System Off")
        #expect(!SystemReset.isReset([0x41, 0x10, 0x42, 0x12, 0x40, 0x01, 0x30, 0x04, 0x0B]), "a GS reverb setting")
        #expect(!SystemReset.isReset([0x43, 0x10, 0x4C, 0x02, 0x01, 0x00, 0x01]), "an XG effect setting")
        #expect(!SystemReset.isReset([]))
        #expect(SystemReset.channelMessages.count == 32)
    }
}

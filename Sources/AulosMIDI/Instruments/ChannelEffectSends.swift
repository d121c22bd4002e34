import AulosCore

/// An instrument's effect sends per MIDI channel, as General MIDI has them: CC 91 sets how much of a
/// channel goes to the reverb and CC 93 how much to the chorus (0…127, linear; GM's defaults 40 and 0),
/// and Reset All Controllers (so also a GM/GS/XG reset, which `MusicDevice.sysEx` turns into one per
/// channel) restores the defaults.
///
/// How an instrument uses it: with its effect-send output in use, it renders each MIDI channel into its own
/// stereo buffer (`channel(_:frameCount:)`), then `mix` sums the channels into the instrument's main output
/// and, weighted by each channel's CC 91 and CC 93, into the four channels of the send output (reverb
/// left/right, chorus left/right), which the mixer takes as a part's side bus. A controller change glides
/// to its new gain over the next slice, so moving CC 91 under a held note does not click.
///
/// Threads: allocated and freed on the control thread (with the instrument's kernel); everything else on the
/// render thread. Holds no class references.
public struct ChannelEffectSends {
    // (Computed constants: a stored static is initialized lazily, which the render path may not risk.)
    @inlinable public static var channelCount: Int { 16 }
    /// General MIDI's power-on values of CC 91 (reverb send) and CC 93 (chorus send).
    @inlinable public static var defaultReverb: UInt8 { 40 }
    @inlinable public static var defaultChorus: UInt8 { 0 }
    /// The send output's channels: reverb left/right, chorus left/right.
    @inlinable public static var sendChannels: Int { 4 }

    /// Channel c's left samples start at `buffers + 2·c·maximumFrames`, its right ones `maximumFrames` later.
    public let buffers: UnsafeMutablePointer<Float>
    public let maximumFrames: Int
    /// Per channel: CC 91 and CC 93 as last set (the targets), and the gains reached (after the last slice).
    let controllers: UnsafeMutablePointer<UInt8>
    let gains: UnsafeMutablePointer<Float>
    /// Bit c: channel c's buffer holds this slice's samples.
    let written: UnsafeMutablePointer<UInt32>
    /// Bit c: channel c made sound in the last slice mixed. A channel that did not jumps to its new sends
    /// (there is nothing to click), so a file's CC 91 at the start applies to its first note in full.
    let audible: UnsafeMutablePointer<UInt32>

    /// Whether either channel holds a sample other than zero (stops at the first).
    @inline(__always) @_noAllocation @_noLocks
    static func hasSound(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, frameCount: Int
    ) -> Bool {
        for index in 0..<frameCount where left[index] != 0 || right[index] != 0 { return true }
        return false
    }

    /// Adds a channel pair × a gain gliding from `from` to `to` in `step`s (or steady) to a send pair; a
    /// gain that stays at zero adds nothing and is skipped. The steady case is a plain multiply-add the
    /// compiler vectorizes.
    @inline(__always) @_noAllocation @_noLocks
    static func addWeighted(
        _ inLeft: UnsafeMutablePointer<Float>, _ inRight: UnsafeMutablePointer<Float>, from: Float, to: Float,
        step: Float, into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>,
        frameCount: Int
    ) {
        if from == to {
            guard to != 0 else { return }
            for index in 0..<frameCount {
                outLeft[index] += inLeft[index] * to
                outRight[index] += inRight[index] * to
            }
            return
        }
        var gain = from
        for index in 0..<frameCount {
            gain += step
            outLeft[index] += inLeft[index] * gain
            outRight[index] += inRight[index] * gain
        }
    }

    /// Control thread: room for `maximumFrames` per channel.
    public init(maximumFrames: Int) {
        self.maximumFrames = maximumFrames
        buffers = .allocate(capacity: 2 * Self.channelCount * maximumFrames)
        buffers.initialize(repeating: 0, count: 2 * Self.channelCount * maximumFrames)
        controllers = .allocate(capacity: 2 * Self.channelCount)
        gains = .allocate(capacity: 2 * Self.channelCount)
        written = .allocate(capacity: 1)
        written.initialize(to: 0)
        audible = .allocate(capacity: 1)
        audible.initialize(to: 0)
        for channel in 0..<Self.channelCount {
            reset(channel)
            gains[2 * channel] = Float(Self.defaultReverb) / 127
            gains[2 * channel + 1] = Float(Self.defaultChorus) / 127
        }
    }

    /// Control thread, after the render thread has let go.
    public func deallocate() {
        buffers.deallocate()
        controllers.deallocate()
        gains.deallocate()
        written.deallocate()
        audible.deallocate()
    }

    /// CC 91 or 93 of `channel` as last set (tests, status).
    public func controller(_ number: UInt8, channel: Int) -> UInt8 {
        controllers[2 * channel + (number == 93 ? 1 : 0)]
    }

    /// Starts a slice: no channel written yet.
    @_noAllocation @_noLocks
    public func beginSlice() { written.pointee = 0 }

    /// Channel `channel`'s left buffer for this slice (its right one is `maximumFrames` further), zeroed on
    /// first use in the slice so voices can add into it.
    @_noAllocation @_noLocks
    public func channel(_ channel: Int, frameCount: Int) -> UnsafeMutablePointer<Float> {
        let left = buffers + 2 * channel * maximumFrames
        let bit = UInt32(1) << UInt32(channel)
        if written.pointee & bit == 0 {
            written.pointee |= bit
            left.update(repeating: 0, count: frameCount)
            (left + maximumFrames).update(repeating: 0, count: frameCount)
        }
        return left
    }

    /// Every channel's buffer zeroed and marked written (for a renderer that adds into all 16 at once).
    @_noAllocation @_noLocks
    public func beginAllChannels(frameCount: Int) {
        for channel in 0..<Self.channelCount { _ = self.channel(channel, frameCount: frameCount) }
    }

    /// Takes CC 91, CC 93 and Reset All Controllers; other controllers are not its business.
    @_noAllocation @_noLocks
    public func controlChange(_ controller: UInt8, _ value: UInt8, channel: Int) {
        switch controller {
        case 91: controllers[2 * channel] = min(value, 127)
        case 93: controllers[2 * channel + 1] = min(value, 127)
        case 121: reset(channel)
        default: break
        }
    }

    @_noAllocation @_noLocks
    func reset(_ channel: Int) {
        controllers[2 * channel] = Self.defaultReverb
        controllers[2 * channel + 1] = Self.defaultChorus
    }

    /// Sums this slice's channels into `left`/`right` and, weighted by each channel's sends (gliding from
    /// the last slice's gains to the controllers' over the slice), into `sends` (four channels of
    /// `sendStride` floats: reverb left, reverb right, chorus left, chorus right). A channel silent in the
    /// last slice jumps straight to its new gains.
    @_noAllocation @_noLocks
    public func mix(
        frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        sends: UnsafeMutablePointer<Float>, sendStride: Int
    ) {
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
        for index in 0..<Self.sendChannels { (sends + index * sendStride).update(repeating: 0, count: frameCount) }
        let mask = written.pointee
        let wasAudible = audible.pointee
        var nowAudible: UInt32 = 0
        let reverbLeft = sends
        let reverbRight = sends + sendStride
        let chorusLeft = sends + 2 * sendStride
        let chorusRight = sends + 3 * sendStride
        let inverseFrames = 1 / Float(max(1, frameCount))
        for channel in 0..<Self.channelCount {
            let reverbTarget = Float(controllers[2 * channel]) / 127
            let chorusTarget = Float(controllers[2 * channel + 1]) / 127
            let bit = UInt32(1) << UInt32(channel)
            let inLeft = buffers + 2 * channel * maximumFrames
            let inRight = inLeft + maximumFrames
            // A channel not written, or written with silence (most of a sampler's 16, most of the time),
            // adds nothing: its gains jump to their targets, as for any channel silent in the last slice.
            guard mask & bit != 0, Self.hasSound(inLeft, inRight, frameCount: frameCount) else {
                gains[2 * channel] = reverbTarget
                gains[2 * channel + 1] = chorusTarget
                continue
            }
            nowAudible |= bit
            let reverb = wasAudible & bit != 0 ? gains[2 * channel] : reverbTarget
            let chorus = wasAudible & bit != 0 ? gains[2 * channel + 1] : chorusTarget
            for index in 0..<frameCount {
                left[index] += inLeft[index]
                right[index] += inRight[index]
            }
            Self.addWeighted(
                inLeft, inRight, from: reverb, to: reverbTarget, step: (reverbTarget - reverb) * inverseFrames,
                into: reverbLeft, reverbRight, frameCount: frameCount)
            Self.addWeighted(
                inLeft, inRight, from: chorus, to: chorusTarget, step: (chorusTarget - chorus) * inverseFrames,
                into: chorusLeft, chorusRight, frameCount: frameCount)
            // Exactly the target at the end of the glide (no drift from summing steps).
            gains[2 * channel] = reverbTarget
            gains[2 * channel + 1] = chorusTarget
        }
        audible.pointee = nowAudible
    }
}

extension ChannelEffectSends {
    /// Copies one output of an instrument with the effect-send output from its cycle's buffer (`mixed`: the
    /// mix's two channels, then the four send channels, `stride` floats each) into `io`: the mix for output
    /// 0, the sends for output 1.
    @_noAllocation @_noLocks
    public static func copyOutput(
        _ bus: Int, from mixed: UnsafeMutablePointer<Float>, stride: Int, frameCount: Int,
        into io: UnsafeMutablePointer<AudioBufferList>
    ) {
        io.pointee.setFrameCount(UInt32(frameCount), bytesPerFrame: 4)
        let channels = bus == 0 ? 2 : sendChannels
        let source = mixed + (bus == 0 ? 0 : 2 * stride)
        for channel in 0..<channels {
            let from = source + channel * stride
            let to = io.pointee.floatChannel(channel)
            for index in 0..<frameCount { to[index] = from[index] }
        }
    }
}

extension MusicDevice {
    /// Gives the instrument its effect-send output: output 1, four channels (reverb left/right, chorus
    /// left/right, each MIDI channel weighed by its CC 91 and CC 93). Before initialize.
    public func enableEffectSendOutput() throws(AudioUnitError) {
        try set(.elementCount, UInt32(2), scope: .output)
        try set(
            .streamFormat,
            StreamFormat.canonical(
                channels: UInt32(ChannelEffectSends.sendChannels), sampleRate: outputFormat(0).sampleRate),
            scope: .output, element: 1)
    }

    /// Whether the effect-send output is in use.
    public var hasEffectSendOutput: Bool { outputBusCount == 2 }

    /// An instrument's outputs: output 0 stereo, output 1 (the effect sends) four channels.
    public func checkInstrumentOutput(_ format: StreamFormat, element: Element) throws(AudioUnitError) {
        let channels = element == 0 ? 2 : UInt32(ChannelEffectSends.sendChannels)
        guard element <= 1, format.channelsPerFrame == channels else {
            throw AudioUnitError(
                .formatNotSupported,
                element == 0
                    ? "\(name) renders stereo; its output has \(format.channelsPerFrame) channels"
                    : "\(name)'s effect-send output (output 1) has \(channels) channels, not \(format.channelsPerFrame)"
            )
        }
    }
}

import AulosCore

/// The settings a host asks a driver for (the audio session's preferences end up here). The names are
/// ALSA's, the first driver's: a JACK unit keeps only the shape (channels), the server decides the rest.
public struct PCMRequest: Sendable, Equatable {
    /// An ALSA PCM name: `default`, `hw:1,0`, `plughw:…`, or any PCM the configuration defines.
    public var device: String
    /// An ALSA configuration to look the name up in instead of the system's (tests, `--alsa-config`).
    public var configuration: String?
    public var sampleRate: Double
    /// Frames per period: the slice the I/O thread renders per wake-up.
    public var period: UInt32
    public var periods: UInt32
    public var format: SampleFormat
    public var channels: UInt32
    /// The PCM the input element captures from, when it differs from `device` (a loopback's capture side,
    /// a separate USB microphone). Nil: the same name as the output.
    public var inputDevice: String?
    /// Pace a device that takes audio faster than real time (null, a file plugin over null) by the clock,
    /// as a sound card would be paced (`ClockPacing`). False renders as fast as it takes it: tests that
    /// compare with an offline render, or capturing a file quickly (`aulos play --unpaced`).
    public var pacesUnpacedDevices = true

    public init(
        device: String = "default", configuration: String? = nil, sampleRate: Double = 48_000, period: UInt32 = 256,
        periods: UInt32 = 2, format: SampleFormat = .float32, channels: UInt32 = 2
    ) {
        self.device = device
        self.configuration = configuration
        self.sampleRate = sampleRate
        self.period = period
        self.periods = periods
        self.format = format
        self.channels = channels
    }
}

/// What the device actually granted: ALSA's "near" negotiation may move every value; JACK reports its
/// server's rate and buffer size.
public struct PCMGrant: Sendable, Equatable {
    public var device: String
    public var sampleRate: Double
    public var period: UInt32
    public var periods: UInt32
    public var bufferFrames: UInt32
    public var format: SampleFormat
    public var channels: UInt32

    public init(
        device: String, sampleRate: Double, period: UInt32, periods: UInt32, bufferFrames: UInt32,
        format: SampleFormat, channels: UInt32
    ) {
        self.device = device
        self.sampleRate = sampleRate
        self.period = period
        self.periods = periods
        self.bufferFrames = bufferFrames
        self.format = format
        self.channels = channels
    }

    /// The audio the buffer holds ahead of the speaker: Core Audio's output latency, in seconds.
    public var outputLatency: Double { Double(bufferFrames) / sampleRate }
    public var streamFormat: StreamFormat {
        StreamFormat(sample: format, channels: channels, sampleRate: sampleRate, interleaved: true)
    }
}

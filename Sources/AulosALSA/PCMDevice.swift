import AulosCore
import AulosIO
import CALSA
import Glibc

/// One open ALSA PCM (playback). Opened and configured on the control thread; written by the I/O thread.
///
/// Threads: control thread for open/close; the I/O thread uses `handle` only while it runs.
public final class PCMDevice: @unchecked Sendable {
    public let handle: OpaquePointer
    public let grant: PCMGrant
    /// False once the I/O thread has closed the handle itself (the device went away).
    private var ownsHandle = true

    private init(handle: OpaquePointer, grant: PCMGrant) {
        self.handle = handle
        self.grant = grant
    }

    deinit { if ownsHandle { snd_pcm_close(handle) } }

    /// Non-blocking: the I/O thread waits with a timeout (snd_pcm_wait) instead of blocking in a write, so
    /// stop() never hangs on a PCM that ignores snd_pcm_drop from another thread (the jack plugin does).
    static let openMode = Int32(SND_PCM_NONBLOCK)

    /// Takes over a handle the I/O thread reopened with the same format, rate and channels.
    static func adopting(_ handle: OpaquePointer, grant: PCMGrant) -> PCMDevice {
        PCMDevice(handle: handle, grant: grant)
    }

    /// The handle was closed elsewhere (by the I/O thread when the device was lost): do not close it again.
    func abandonHandle() { ownsHandle = false }

    /// Opens and configures `request.device`; throws one clear sentence when the device is missing or
    /// refuses every format/rate/period it was offered.
    public static func open(_ request: PCMRequest) throws(DeviceError) -> PCMDevice {
        aulos_alsa_capture_errors()
        aulos_alsa_clear_error()
        var pcm: OpaquePointer?
        let status =
            request.configuration.map { text in
                aulos_alsa_open(&pcm, request.device, text, SND_PCM_STREAM_PLAYBACK, PCMDevice.openMode)
            } ?? aulos_alsa_open(&pcm, request.device, nil, SND_PCM_STREAM_PLAYBACK, PCMDevice.openMode)
        guard status >= 0, let pcm else { throw DeviceError.opening(request.device, status) }
        var config = AulosPCMConfig(
            format: alsaFormat(request.format), channels: request.channels,
            rate: UInt32(request.sampleRate.rounded()), period: snd_pcm_uframes_t(request.period),
            periods: request.periods, buffer: 0)
        var stage: UnsafePointer<CChar>?
        let configured = aulos_alsa_configure(pcm, &config, &stage)
        guard configured >= 0 else {
            snd_pcm_close(pcm)
            let step = stage.map { String(cString: $0) } ?? "configuration"
            throw DeviceError(
                .refused,
                "ALSA device '\(request.device)' refused the \(step): \(describe(configured)) (try plughw: or "
                    + "default, which convert)"
            )
        }
        guard let format = sampleFormat(config.format) else {
            snd_pcm_close(pcm)
            throw DeviceError(
                .refused,
                "ALSA device '\(request.device)' granted an unsupported sample format (try plughw: or default, which "
                    + "convert)"
            )
        }
        let grant = PCMGrant(
            device: request.device, sampleRate: Double(config.rate), period: UInt32(config.period),
            periods: config.periods, bufferFrames: UInt32(config.buffer), format: format, channels: config.channels)
        return PCMDevice(handle: pcm, grant: grant)
    }

    static func describe(_ status: Int32) -> String { String(cString: snd_strerror(status)) }

    static func alsaFormat(_ format: SampleFormat) -> snd_pcm_format_t {
        switch format {
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        case .int32: SND_PCM_FORMAT_S32_LE
        case .int24: SND_PCM_FORMAT_S24_3LE
        case .int16: SND_PCM_FORMAT_S16_LE
        }
    }

    static func sampleFormat(_ format: snd_pcm_format_t) -> SampleFormat? {
        switch format {
        case SND_PCM_FORMAT_FLOAT_LE: .float32
        case SND_PCM_FORMAT_S32_LE: .int32
        case SND_PCM_FORMAT_S24_3LE: .int24
        case SND_PCM_FORMAT_S16_LE: .int16
        default: nil
        }
    }
}

/// ALSA's PCM names, as `aplay -L` lists them.
public enum PCMDeviceList {
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var description: String
        public var playback: Bool
        public var capture: Bool
        /// A `null` PCM, which takes audio faster than real time (aulos paces it by the clock).
        public var isUnpaced = false
    }

    /// Opens the PCM without blocking (a busy sound card answers at once) to see its type.
    static func isNullPCM(_ name: String) -> Bool {
        var pcm: OpaquePointer?
        guard snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK) >= 0, let pcm else { return false }
        defer { snd_pcm_close(pcm) }
        return snd_pcm_type(pcm) == SND_PCM_TYPE_NULL
    }

    /// Every PCM the system configuration names (hints), with their one-line descriptions.
    public static func all() -> [Entry] {
        aulos_alsa_capture_errors()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var entries: [Entry] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            func field(_ id: String) -> String? {
                guard let raw = snd_device_name_get_hint(hint, id) else { return nil }
                defer { free(raw) }
                return String(cString: raw)
            }
            guard let name = field("NAME") else { continue }
            let direction = field("IOID")  // nil = both
            let description = (field("DESC") ?? "").split(separator: "\n").joined(separator: ", ")
            var entry = Entry(
                name: name, description: description, playback: direction != "Input", capture: direction != "Output")
            entry.isUnpaced = entry.playback && isNullPCM(name)
            entries.append(entry)
        }
        return entries
    }
}

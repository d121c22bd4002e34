/// How a part that streams its samples from disk (an SFZ library) is keeping up: what the status, the
/// play report and the panel show, so a late disk is seen as late voices and not guessed from clicks.
///
/// Threads: a value, made on the control thread from the unit's counters.
public struct SampleStreamingStatus: Codable, Sendable, Equatable {
    /// The rig (its index in the set) and part that plays the library.
    public var rig: Int
    public var part: String
    /// Voices sounding now.
    public var voices: Int
    /// Underruns: the 16-frame voice blocks in which a voice's streamed data was late (it played silence
    /// instead of waiting), and the frames of silence played, since the part started.
    public var underruns: Int
    public var lateFrames: Int
    /// Bytes read from disk by the loader thread since the part started, and the samples' heads held in memory.
    public var streamedBytes: Int
    public var preloadedBytes: Int
    /// Stream requests the loader's queue had no room for (those voices played their heads, then silence).
    public var droppedRequests: Int

    public init(
        rig: Int, part: String, voices: Int, underruns: Int, lateFrames: Int, streamedBytes: Int, preloadedBytes: Int,
        droppedRequests: Int = 0
    ) {
        self.rig = rig
        self.part = part
        self.voices = voices
        self.underruns = underruns
        self.lateFrames = lateFrames
        self.streamedBytes = streamedBytes
        self.preloadedBytes = preloadedBytes
        self.droppedRequests = droppedRequests
    }

    /// The parts' counters added up (the part named "all").
    public static func total(_ parts: [SampleStreamingStatus]) -> SampleStreamingStatus? {
        guard !parts.isEmpty else { return nil }
        return parts.dropFirst().reduce(parts[0]) { sum, part in
            SampleStreamingStatus(
                rig: sum.rig, part: "all", voices: sum.voices + part.voices, underruns: sum.underruns + part.underruns,
                lateFrames: sum.lateFrames + part.lateFrames, streamedBytes: sum.streamedBytes + part.streamedBytes,
                preloadedBytes: sum.preloadedBytes + part.preloadedBytes,
                droppedRequests: sum.droppedRequests + part.droppedRequests)
        }
    }

    /// "SFZ: 12 underruns (192 late frames), 151.2 MB streamed, 12.3 MB preloaded": one line for a report
    /// (`scripts/sfz-stream-test.sh` reads it).
    public var summary: String {
        func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
        return "SFZ: \(underruns) underruns (\(lateFrames) late frames), \(megabytes(streamedBytes)) streamed, "
            + "\(megabytes(preloadedBytes)) preloaded"
            + (droppedRequests > 0 ? ", \(droppedRequests) stream requests dropped" : "")
    }
}

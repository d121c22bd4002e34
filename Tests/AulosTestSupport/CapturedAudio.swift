import Foundation

/// What a JACK capture client (scripts/jack/jack-probe.c) wrote: interleaved float32 stereo, as its two
/// channels (empty ones when the file is missing).
public func capturedChannels(_ path: String) -> [[Float]] {
    let data = FileManager.default.contents(atPath: path) ?? Data()
    return data.withUnsafeBytes { raw in
        let floats = raw.bindMemory(to: Float.self)
        return (0..<2).map { channel in stride(from: channel, to: floats.count - 1, by: 2).map { floats[$0] } }
    }
}

/// nil when `captured` holds `reference`'s sound for `frames` frames from its first note on, sample for
/// sample in both channels; otherwise one line saying how they differ. Each side is aligned on its first frame
/// above -80 dBFS: a capture starts whenever its client connected, and a reverb's denormal guard hums far
/// below that from frame 0.
public func captureDifference(_ captured: [[Float]], _ reference: [[Float]], frames: Int) -> String? {
    func firstSound(_ channels: [[Float]]) -> Int? {
        guard channels.count == 2 else { return nil }
        return channels[0].indices.first { max(abs(channels[0][$0]), abs(channels[1][$0])) > 1e-4 }
    }
    guard let capturedStart = firstSound(captured), let referenceStart = firstSound(reference) else {
        return "no sound captured (\(captured.first?.count ?? 0) frames) or rendered"
    }
    guard captured[0].count - capturedStart >= frames else {
        return "captured too little: \(captured[0].count - capturedStart) frames after the first sound"
    }
    for channel in 0..<2 {
        let live = captured[channel][capturedStart..<capturedStart + frames]
        let expected = reference[channel][referenceStart..<min(reference[channel].count, referenceStart + frames)]
        if let difference = sampleDifference(live, expected) { return "channel \(channel + 1): \(difference)" }
    }
    return nil
}

/// nil when `live` and `reference` hold the same samples; otherwise one line saying how they differ (a test's
/// message, instead of two arrays of a million samples).
public func sampleDifference<A: Collection<Float>, B: Collection<Float>>(_ live: A, _ reference: B) -> String? {
    let pairs = zip(live, reference)
    let differing = pairs.enumerated().filter { $0.element.0 != $0.element.1 }
    if differing.isEmpty && live.count == reference.count { return nil }
    guard let first = differing.first else { return "\(live.count) samples against \(reference.count)" }
    return "\(differing.count) of \(min(live.count, reference.count)) samples differ, the first at sample "
        + "\(first.offset) (\(first.element.0) against \(first.element.1))"
}

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where the tests find the project's own files, and scratch files of their own.
public enum TestFiles {
    /// The repository root (this file is Tests/AulosTestSupport/TestFiles.swift).
    public static let repositoryRoot: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()

    /// presets/ of the source tree (synth presets, rigs, scores).
    public static var presets: String { repositoryRoot + "/presets" }

    /// The bundled SoundFont.
    public static var bundledFont: String { repositoryRoot + "/soundfonts/AulosGM.sf2" }

    /// A unique path under /tmp for a scratch file or folder; the caller removes it.
    public static func scratch(_ name: String) -> String {
        "/tmp/aulos-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))-\(name)"
    }

    /// Writes `text` (or `bytes`) to `path`, replacing it.
    public static func write(_ text: String, to path: String) { write(Array(text.utf8), to: path) }

    public static func write(_ bytes: [UInt8], to path: String) {
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }

    /// A file's bytes (empty when unreadable).
    public static func bytes(_ path: String) -> [UInt8] {
        FileManager.default.contents(atPath: path).map(Array.init) ?? []
    }

    /// Writes a mono 16-bit 48 kHz WAV of `frames` samples, all `value` (a sampler's test sample).
    public static func writeConstantWAV(_ path: String, value: Int16, frames: Int) {
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ number: T) { withUnsafeBytes(of: number.littleEndian) { bytes += $0 } }
        bytes += Array("RIFF".utf8)
        append(UInt32(36 + frames * 2))
        bytes += Array("WAVEfmt ".utf8)
        for field in [UInt32(16)] { append(field) }
        for field in [UInt16(1), 1] { append(field) }  // PCM, mono
        for field in [UInt32(48_000), 96_000] { append(field) }  // rate, bytes a second
        for field in [UInt16(2), 16] { append(field) }  // bytes a frame, bits
        bytes += Array("data".utf8)
        append(UInt32(frames * 2))
        for _ in 0..<frames { append(value) }
        write(bytes, to: path)
    }

    /// Removes a scratch file or folder and everything in it.
    public static func remove(_ path: String) { try? FileManager.default.removeItem(atPath: path) }
}

import AulosFluid
import AulosRig
import Foundation

/// What `fonts` answers: the SoundFonts found — the playing rig's sampler parts' fonts, then the fonts in
/// the data roots' `soundfonts/` folders and the default ones — each with its presets by bank and program
/// (read from the file's preset headers, not loaded) and the parts playing it, so a panel can offer a part
/// its presets.
///
/// Threads: made on the control thread (headers only: a few milliseconds even for a large font), then a value.
public struct PanelFonts: Encodable, Sendable {
    struct Font: Encodable {
        var path: String
        var parts: [String]
        var presets: [SoundFontFile.Preset]
    }

    var fonts: [Font]
    /// The most fonts listed: a folder of hundreds is not a menu.
    static let limit = 32

    init(_ rig: PlaybackRig, active: Int) {
        var order: [String] = []
        var parts: [String: [String]] = [:]
        for loaded in rig.parts where loaded.rigIndex == active && loaded.part.instrument == .sampler {
            guard let path = loaded.part.soundFont ?? SearchPaths.soundFont else { continue }
            if parts[path] == nil { order.append(path) }
            parts[path, default: []].append(loaded.part.name)
        }
        let folders = SearchPaths.dataRoots.map { $0 + "/soundfonts" }
        let found = folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
                $0.lowercased().hasSuffix(".sf2")
            }.sorted().map { folder + "/" + $0 }
        }
        for path in found + SearchPaths.soundFonts where !order.contains(path) && order.count < Self.limit {
            order.append(path)
        }
        fonts = order.compactMap { path in
            guard let file = try? SoundFontFile.inspect(path) else { return nil }
            return Font(path: path, parts: parts[path] ?? [], presets: file.presetsByNumber)
        }
    }
}

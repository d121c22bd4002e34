import AulosRig
import Foundation

/// The page itself: plain HTML, CSS and JavaScript (no build step), read once when the panel starts from the
/// data folder's `web/` (`SearchPaths.panelFolder`: `share/aulos/web` installed, `Sources/AulosWeb/Panel` in
/// a checkout), so a missing file is an error at start and not a broken page later. Data, not a SwiftPM
/// resource bundle: an installed binary has no bundle beside it, and the page can be found by the same
/// search as the presets.
///
/// Threads: a value.
struct PanelFiles: Sendable {
    struct File: Sendable {
        var bytes: Data
        var contentType: String
    }

    var files: [String: File]

    static let served: [(name: String, type: String)] = [
        ("index.html", "text/html; charset=utf-8"), ("panel.css", "text/css; charset=utf-8"),
        ("panel.js", "text/javascript; charset=utf-8"),
    ]

    static func load(from folder: String? = SearchPaths.panelFolder) throws(WebPanelError) -> PanelFiles {
        guard let folder else {
            throw WebPanelError(
                "the panel's page (web/index.html) is in no data folder (searched "
                    + SearchPaths.dataRoots.joined(separator: ", ") + "); set AULOS_DATA or reinstall aulos")
        }
        var files: [String: File] = [:]
        for (name, type) in served {
            guard let bytes = FileManager.default.contents(atPath: folder + "/" + name) else {
                throw WebPanelError("the panel's page is incomplete: cannot read \(folder)/\(name); reinstall aulos")
            }
            files["/" + name] = File(bytes: bytes, contentType: type)
        }
        files["/"] = files["/index.html"]
        return PanelFiles(files: files)
    }
}

import Foundation

/// The page itself: plain HTML, CSS and JavaScript shipped as the package's resources (no build step),
/// read once when the panel starts, so a missing file is an error at start and not a broken page later.
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

    static func load() throws(WebPanelError) -> PanelFiles {
        var files: [String: File] = [:]
        for (name, type) in served {
            let dot = name.lastIndex(of: ".")!
            guard
                let url = Bundle.module.url(
                    forResource: String(name[..<dot]), withExtension: String(name[name.index(after: dot)...]),
                    subdirectory: "Panel"),
                let bytes = try? Data(contentsOf: url)
            else {
                throw WebPanelError(
                    "the panel's page (\(name)) is missing beside the aulos binary (Aulos_AulosWeb.resources)")
            }
            files["/" + name] = File(bytes: bytes, contentType: type)
        }
        files["/"] = files["/index.html"]
        return PanelFiles(files: files)
    }
}

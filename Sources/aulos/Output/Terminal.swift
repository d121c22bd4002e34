#if canImport(Glibc)
import Glibc
#endif

/// One line on standard error (unbuffered write(2): no shared C stream state to race on).
func printError(_ line: String, newline: Bool = true) {
    let text = line + (newline ? "\n" : "")
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}

/// Whether standard error is a terminal (status lines and progress bars only go there).
var standardErrorIsTerminal: Bool { isatty(2) == 1 }

/// A one-line progress bar on standard error, shown only when standard error is a terminal.
final class ProgressBar {
    private let enabled = standardErrorIsTerminal
    private var shown = -1

    func update(_ fraction: Double) {
        guard enabled else { return }
        let percent = Int(min(1, max(0, fraction)) * 100)
        guard percent != shown else { return }
        shown = percent
        let filled = percent * 30 / 100
        printError(
            "\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
                + "] \(percent)%", newline: false)
    }

    func finish() {
        guard enabled, shown >= 0 else { return }
        printError("\r" + String(repeating: " ", count: 40) + "\r", newline: false)
    }
}

extension String {
    /// Left-aligned in a column `width` characters wide.
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

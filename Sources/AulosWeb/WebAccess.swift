import AulosRealtime
import CCrypt
import Foundation
import Glibc

/// Who may use the panel. On loopback without a password, the users the control socket serves (the gate
/// checks each connection's owner: `PeerOwner`); anywhere else a password is needed,
/// checked against a crypt(3) hash (yescrypt, from `aulos web-password`) so the configuration never holds
/// the password itself. A login makes a session: a random cookie (HttpOnly, SameSite=Strict) and a CSRF
/// token the page sends back in a header on every write; a page of another site can send neither.
///
/// Passwords are tried at a rate for the whole panel (`tryBurst` at once, then `triesPerSecond`), however
/// many clients guess at once; the cookie's name carries the panel's port, as a browser keeps cookies per
/// host, not per port, and two panels on one host would otherwise log each other out.
///
/// Threads: any (the server's tasks); one lock guards the sessions.
final class WebAccess: @unchecked Sendable {
    /// The configured hash; nil: no password (loopback only).
    let passwordHash: String?
    /// The token writes carry when there is no password (loopback): a page must have read it from
    /// `/api/session`, which another origin cannot (no CORS), so a cross-site form cannot write.
    let openToken = WebAccess.randomToken()
    private let lock = NSLock()
    /// Session cookie → its CSRF token and when it ends (CLOCK_MONOTONIC seconds).
    private var sessions: [String: (csrf: String, expires: Double)] = [:]
    /// Password tries left now, and when they were counted (a token bucket for the whole panel).
    private var tries: (left: Double, at: Double)
    static let tryBurst = 5.0
    static let triesPerSecond = 1.0
    /// `aulos_session_PORT`.
    let cookieName: String
    static let sessionSeconds = 12.0 * 3600

    init(passwordHash: String?, port: UInt16) {
        self.passwordHash = passwordHash
        cookieName = "aulos_session_\(port)"
        tries = (Self.tryBurst, Self.now())
    }

    /// The CSRF token of the request's session (or the open token, without a password); nil: not logged in.
    func csrfToken(cookieHeader: String?) -> String? {
        guard passwordHash != nil else { return openToken }
        guard let cookie = Self.cookie(cookieName, in: cookieHeader) else { return nil }
        let now = Self.now()
        return lock.withLock {
            sessions = sessions.filter { $0.value.expires > now }
            return sessions[cookie]?.csrf
        }
    }

    /// Whether a write may go ahead: logged in (or no password) and carrying that session's token.
    func mayWrite(cookieHeader: String?, csrfHeader: String?) -> Bool {
        guard let expected = csrfToken(cookieHeader: cookieHeader), let csrfHeader else { return false }
        return Self.constantTimeEqual(expected, csrfHeader)
    }

    /// What a login comes to.
    enum Login {
        case session(cookie: String, csrf: String)
        case wrong
        /// Not tried: too many tries lately (429).
        case tooSoon
        /// Not tried: a control character (crypt(3) reads a C string, so "PASSWORD\0anything" would match).
        case unreadable
    }

    /// Checks `password` if a try is left; a new session's cookie and CSRF token when it is right. A right
    /// password gives its try back: only wrong ones use them up.
    func login(_ password: String) -> Login {
        guard let passwordHash else { return .wrong }
        guard !password.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return .unreadable
        }
        let allowed = lock.withLock {
            let now = Self.now()
            tries = (min(Self.tryBurst, tries.left + (now - tries.at) * Self.triesPerSecond), now)
            guard tries.left >= 1 else { return false }
            tries.left -= 1
            return true
        }
        guard allowed else { return .tooSoon }
        guard password.utf8.count <= 256, let computed = Self.crypt(password, setting: passwordHash),
            Self.constantTimeEqual(computed, passwordHash)
        else { return .wrong }
        lock.withLock { tries.left = min(Self.tryBurst, tries.left + 1) }
        let session = (cookie: Self.randomToken(), csrf: Self.randomToken())
        lock.withLock { sessions[session.cookie] = (session.csrf, Self.now() + Self.sessionSeconds) }
        return .session(cookie: session.cookie, csrf: session.csrf)
    }

    func logout(cookieHeader: String?) {
        guard let cookie = Self.cookie(cookieName, in: cookieHeader) else { return }
        _ = lock.withLock { sessions.removeValue(forKey: cookie) }
    }

    /// A yescrypt hash of `password` with a fresh salt (for `aulos web-password`).
    static func hash(_ password: String) -> String? {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        guard crypt_gensalt_rn("$y$", 0, nil, 0, &salt, Int32(salt.count)) != nil else { return nil }
        return crypt(password, setting: String(cString: salt))
    }

    /// crypt(3) of `password` with `setting` (a hash or a salt); nil when libcrypt refuses it.
    static func crypt(_ password: String, setting: String) -> String? {
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer { data.deallocate() }
        memset(data, 0, MemoryLayout<crypt_data>.size)
        guard let result = crypt_r(password, setting, data) else { return nil }
        let text = String(cString: result)
        return text.hasPrefix("*") ? nil : text  // "*0"/"*1": libcrypt's failure tokens
    }

    static func cookie(_ name: String, in header: String?) -> String? {
        header?.split(separator: ";").lazy.map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
    }

    static func randomToken() -> String {
        // SystemRandomNumberGenerator is the kernel's getrandom(2): fit for secrets.
        var generator = SystemRandomNumberGenerator()
        return (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }.map { String(format: "%02x", $0) }
            .joined()
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func now() -> Double {
        Double(monotonicNanoseconds()) / 1e9
    }
}

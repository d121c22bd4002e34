import AulosCore
import AulosPlayback
import Foundation

/// The panel's HTTP routes: the page, the session (login, CSRF token), control requests, the rig file
/// (download, and upload that is checked before it replaces anything), and the status WebSocket.
///
/// Every request is checked before it is read: its Host (on loopback, a loopback name: a page of another
/// site reached through DNS rebinding is refused), its size (a rig is at most 1 MB, anything else 8 KB),
/// and for writes the session's CSRF token in `X-Aulos-CSRF` and a same-origin `Origin`.
///
/// Threads: the server's connection threads (each request waits on its own thread for the control loop).
struct PanelAPI: Sendable {
    let bridge: ControlBridge
    let access: WebAccess
    let files: PanelFiles
    let loopbackOnly: Bool

    static let requestLimit = 8 << 10
    static let rigLimit = 1 << 20
    /// Seconds a request waits for the control loop before it is answered 503 (the loop ticks every 20 ms;
    /// this is for a loop that has stopped).
    static let answerSeconds = 30.0

    /// What the server does with a request: answer it, or turn the connection into the status feed (with
    /// the handshake's `Sec-WebSocket-Accept`).
    enum Route {
        case answer(PanelResponse)
        case statusFeed(accept: String)
    }

    func route(_ request: PanelRequest) -> Route {
        switch (request.method, request.path) {
        case ("GET", "/api/status"):
            if let refusal = refusal(forRead: request) { return .answer(refusal) }
            guard sameOrigin(request) else { return .answer(Self.refused(403, "wrong origin")) }
            guard request[header: "upgrade"]?.lowercased() == "websocket",
                request[header: "sec-websocket-version"] == "13", let key = request[header: "sec-websocket-key"]
            else { return .answer(Self.refused(400, "the status feed is a WebSocket (version 13)")) }
            return .statusFeed(accept: WebSocketFrame.accept(key: key))
        default:
            return .answer(answer(request))
        }
    }

    func answer(_ request: PanelRequest) -> PanelResponse {
        switch (request.method, request.path) {
        case ("GET", "/api/session"):
            guard hostAllowed(request) else { return Self.refused(403, "unknown Host") }
            let csrf = access.csrfToken(cookieHeader: request[header: "cookie"])
            return Self.json([
                "passwordRequired": access.passwordHash != nil, "loggedIn": csrf != nil, "csrf": csrf as Any,
            ])
        case ("POST", "/api/login"):
            return login(request)
        case ("POST", "/api/logout"):
            access.logout(cookieHeader: request[header: "cookie"])
            return Self.json(["ok": true])
        case ("POST", "/api/control"):
            if let refusal = refusal(forWrite: request) { return refusal }
            guard let line = Self.field("request", of: request) else {
                return Self.refused(400, "send {\"request\": \"set PART.PARAMETER VALUE\"} (at most 8 KB)")
            }
            // The panel asks in the socket's words, read here by the socket's own reader: everything the control
            // socket serves, and nothing else.
            guard !line.contains(where: \.isNewline) else { return Self.refused(400, "one line, please") }
            let control: ControlRequest
            do throws(ControlFailure) {
                control = try ControlRequest(line: line)
            } catch {
                return Self.answer(.failure(error))
            }
            return Self.answer(ask(.control(control)))
        case ("GET", "/api/parts"):
            if let refusal = refusal(forRead: request) { return refusal }
            return Self.answer(ask(.control(.parts)))
        case ("GET", "/api/rig-file"):
            if let refusal = refusal(forRead: request) { return refusal }
            let answer = ask(.rigFile)
            guard case .rigFile(let text) = answer else { return Self.answer(answer) }
            return PanelResponse(
                status: 200,
                headers: [
                    ("Content-Type", "application/yaml; charset=utf-8"),
                    ("Content-Disposition", "attachment; filename=\"rig.yaml\""),
                ], body: Array(text.utf8))
        case ("PUT", "/api/rig-file"):
            if let refusal = refusal(forWrite: request) { return refusal }
            guard request.body.count <= Self.rigLimit, let text = String(validating: request.body, as: UTF8.self)
            else { return Self.refused(400, "a rig file is UTF-8 text of at most 1 MB") }
            return Self.answer(ask(.replaceRigFile(text)))
        case ("GET", "/api/rig-files"):
            if let refusal = refusal(forRead: request) { return refusal }
            return Self.answer(ask(.rigFiles))
        case ("POST", "/api/rig-files/load"), ("POST", "/api/rig-files/save"):
            if let refusal = refusal(forWrite: request) { return refusal }
            guard let name = Self.field("name", of: request) else {
                return Self.refused(400, "send {\"name\": \"NAME.yaml\"}")
            }
            // Saving with no name saves into the file the rig plays from.
            return Self.answer(
                ask(request.path.hasSuffix("load") ? .loadRigFile(name) : .saveRigFile(name.isEmpty ? nil : name)))
        case ("GET", let path):
            guard let file = files.files[path] else { return Self.refused(404, "no such page") }
            guard hostAllowed(request) else { return Self.refused(403, "unknown Host") }
            return PanelResponse(
                status: 200,
                headers: [
                    ("Content-Type", file.contentType), ("Cache-Control", "no-cache"),
                    ("X-Content-Type-Options", "nosniff"),
                    ("Content-Security-Policy", "default-src 'self'; connect-src 'self'"),
                ],
                body: Array(file.bytes))
        default:
            return Self.refused(404, "no such request")
        }
    }

    private func login(_ request: PanelRequest) -> PanelResponse {
        guard hostAllowed(request), sameOrigin(request) else { return Self.refused(403, "wrong origin") }
        guard let password = Self.field("password", of: request) else {
            return Self.refused(400, "send {\"password\": \"…\"}")
        }
        switch access.login(password) {
        case .session(let cookie, let csrf):
            var response = Self.json(["csrf": csrf])
            response[header: "Set-Cookie"] =
                "\(access.cookieName)=\(cookie); Path=/; HttpOnly; SameSite=Strict; "
                + "Max-Age=\(Int(WebAccess.sessionSeconds))"
            return response
        case .wrong: return Self.refused(401, "wrong password")
        case .unreadable:
            return Self.refused(400, "a password has no control characters (NUL, newline, …)")
        case .tooSoon:
            var response = Self.refused(429, "too many password tries: wait a second and try again")
            response[header: "Retry-After"] = "1"
            return response
        }
    }

    /// The control loop's answer to `request`, waited for on this connection's thread.
    func ask(_ request: ControlBridge.Request) -> ControlReply {
        let answered = DispatchSemaphore(value: 0)
        let reply = Locked<ControlReply?>(nil)
        bridge.submit(request) { answer in
            reply.withLock { $0 = answer }
            answered.signal()
        }
        guard answered.wait(timeout: .now() + Self.answerSeconds) == .success, let answer = reply.withLock({ $0 })
        else { return .failure(ControlFailure("the instrument did not answer; try again", reason: .unavailable)) }
        return answer
    }

    // MARK: Checks

    /// On loopback the Host must name this machine: a rebinding attacker's page names its own host.
    func hostAllowed(_ request: PanelRequest) -> Bool {
        guard loopbackOnly else { return true }
        guard let host = request[header: "host"] else { return false }
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }) + "]" : String(host.prefix { $0 != ":" })
        return ["127.0.0.1", "localhost", "[::1]"].contains(name.lowercased())
    }

    /// A browser names the page's origin on writes and WebSockets; it must be this server.
    func sameOrigin(_ request: PanelRequest) -> Bool {
        guard let origin = request[header: "origin"] else { return true }  // not a browser
        guard let host = request[header: "host"] else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }

    /// Reads need this machine's Host (on loopback) and a login (when there is a password).
    func refusal(forRead request: PanelRequest) -> PanelResponse? {
        guard hostAllowed(request) else { return Self.refused(403, "unknown Host") }
        guard access.csrfToken(cookieHeader: request[header: "cookie"]) != nil else {
            return Self.refused(401, "log in first")
        }
        return nil
    }

    func refusal(forWrite request: PanelRequest) -> PanelResponse? {
        guard hostAllowed(request), sameOrigin(request) else { return Self.refused(403, "wrong origin") }
        guard
            access.mayWrite(
                cookieHeader: request[header: "cookie"], csrfHeader: request[header: "x-aulos-csrf"])
        else { return Self.refused(403, "log in, and send the session's X-Aulos-CSRF token") }
        return nil
    }

    // MARK: Bodies and answers

    /// The string `name` of a JSON object body of at most `requestLimit` bytes; nil for anything else.
    static func field(_ name: String, of request: PanelRequest) -> String? {
        guard request.body.count <= requestLimit,
            let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
        else { return nil }
        return object[name] as? String
    }

    /// A control reply as an HTTP answer, its status code from the reply's kind.
    static func answer(_ reply: ControlReply) -> PanelResponse {
        PanelResponse(status: statusCode(reply.kind), contentType: "application/json", body: Data(reply.json.utf8))
    }

    static func statusCode(_ kind: ControlReply.Kind) -> Int {
        switch kind {
        case .ok: 200
        case .badRequest: 400
        case .unavailable: 503
        }
    }

    static func json(_ object: [String: Any]) -> PanelResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return PanelResponse(status: 200, contentType: "application/json", body: data)
    }

    static func refused(_ status: Int, _ reason: String) -> PanelResponse {
        let data = (try? JSONSerialization.data(withJSONObject: ["error": reason])) ?? Data()
        return PanelResponse(status: status, contentType: "application/json", body: data)
    }
}

import AulosPlayback
import FlyingFox
import Foundation

/// The panel's HTTP routes: the page, the session (login, CSRF token), control requests, the rig file
/// (download, and upload that is checked before it replaces anything), and the status WebSocket.
///
/// Every request is checked before it is read: its Host (on loopback, a loopback name: a page of another
/// site reached through DNS rebinding is refused), its size (a rig is at most 1 MB, anything else 8 KB),
/// and for writes the session's CSRF token in `X-Aulos-CSRF` and a same-origin `Origin`.
///
/// Threads: the server's tasks.
struct PanelAPI: Sendable {
    let bridge: ControlBridge
    let access: WebAccess
    let files: PanelFiles
    let loopbackOnly: Bool

    static let requestLimit = 8 << 10
    static let rigLimit = 1 << 20

    func install(on server: HTTPServer) async {
        for (path, file) in files.files {
            await server.appendRoute(HTTPRoute(method: .GET, path: path)) { request in
                guard hostAllowed(request) else { return Self.refused(.forbidden, "unknown Host") }
                return HTTPResponse(
                    statusCode: .ok,
                    headers: [
                        .contentType: file.contentType, HTTPHeader("Cache-Control"): "no-cache",
                        HTTPHeader("X-Content-Type-Options"): "nosniff",
                        HTTPHeader("Content-Security-Policy"): "default-src 'self'; connect-src 'self'",
                    ],
                    body: file.bytes)
            }
        }
        await server.appendRoute("GET /api/session") { request in
            guard hostAllowed(request) else { return Self.refused(.forbidden, "unknown Host") }
            let csrf = access.csrfToken(cookieHeader: request.headers[.cookie])
            return Self.json([
                "passwordRequired": access.passwordHash != nil, "loggedIn": csrf != nil, "csrf": csrf as Any,
            ])
        }
        await server.appendRoute("POST /api/login") { request in
            guard hostAllowed(request), sameOrigin(request) else { return Self.refused(.forbidden, "wrong origin") }
            guard let password = try await Self.field("password", of: request) else {
                return Self.refused(.badRequest, "send {\"password\": \"…\"}")
            }
            switch access.login(password) {
            case .session(let cookie, let csrf):
                var response = Self.json(["csrf": csrf])
                response.headers[HTTPHeader("Set-Cookie")] =
                    "\(access.cookieName)=\(cookie); Path=/; HttpOnly; SameSite=Strict; "
                    + "Max-Age=\(Int(WebAccess.sessionSeconds))"
                return response
            case .wrong: return Self.refused(.unauthorized, "wrong password")
            case .unreadable:
                return Self.refused(.badRequest, "a password has no control characters (NUL, newline, …)")
            case .tooSoon:
                var response = Self.refused(
                    .tooManyRequests, "too many password tries: wait a second and try again")
                response.headers[HTTPHeader("Retry-After")] = "1"
                return response
            }
        }
        await server.appendRoute("POST /api/logout") { request in
            access.logout(cookieHeader: request.headers[.cookie])
            return Self.json(["ok": true])
        }
        await server.appendRoute("POST /api/control") { request in
            if let refusal = refusal(forWrite: request) { return refusal }
            guard let line = try await Self.field("request", of: request) else {
                return Self.refused(.badRequest, "send {\"request\": \"set PART.PARAMETER VALUE\"} (at most 8 KB)")
            }
            // The panel asks in the socket's words, read here by the socket's own reader: everything the control
            // socket serves, and nothing else.
            guard !line.contains(where: \.isNewline) else { return Self.refused(.badRequest, "one line, please") }
            let control: ControlRequest
            do throws(ControlFailure) {
                control = try ControlRequest(line: line)
            } catch {
                return Self.answer(.failure(error))
            }
            return Self.answer(await bridge.request(.control(control)))
        }
        await server.appendRoute("GET /api/parts") { request in
            if let refusal = refusal(forRead: request) { return refusal }
            return Self.answer(await bridge.request(.control(.parts)))
        }
        await server.appendRoute("GET /api/rig-file") { request in
            if let refusal = refusal(forRead: request) { return refusal }
            let answer = await bridge.request(.rigFile)
            guard case .rigFile(let text) = answer else { return Self.answer(answer) }
            return HTTPResponse(
                statusCode: .ok,
                headers: [
                    .contentType: "application/yaml; charset=utf-8",
                    HTTPHeader("Content-Disposition"): "attachment; filename=\"rig.yaml\"",
                ], body: Data(text.utf8))
        }
        await server.appendRoute("PUT /api/rig-file") { request in
            if let refusal = refusal(forWrite: request) { return refusal }
            guard let body = try await Self.body(request, limit: Self.rigLimit),
                let text = String(data: body, encoding: .utf8)
            else { return Self.refused(.badRequest, "a rig file is UTF-8 text of at most 1 MB") }
            return Self.answer(await bridge.request(.replaceRigFile(text)))
        }
        await server.appendRoute("GET /api/rig-files") { request in
            if let refusal = refusal(forRead: request) { return refusal }
            return Self.answer(await bridge.request(.rigFiles))
        }
        for (action, make) in [
            ("load", ControlBridge.Request.loadRigFile), ("save", ControlBridge.Request.saveRigFile),
        ] {
            await server.appendRoute(HTTPRoute(method: .POST, path: "/api/rig-files/" + action)) { request in
                if let refusal = refusal(forWrite: request) { return refusal }
                guard let name = try await Self.field("name", of: request) else {
                    return Self.refused(.badRequest, "send {\"name\": \"NAME.yaml\"}")
                }
                return Self.answer(await bridge.request(make(name)))
            }
        }
        let socket = WebSocketHTTPHandler(handler: MessageFrameWSHandler(handler: StatusFeed(bridge: bridge)))
        await server.appendRoute("GET /api/status") { request in
            if let refusal = refusal(forRead: request) { return refusal }
            guard sameOrigin(request) else { return Self.refused(.forbidden, "wrong origin") }
            return try await socket.handleRequest(request)
        }
    }

    // MARK: Checks

    /// On loopback the Host must name this machine: a rebinding attacker's page names its own host.
    func hostAllowed(_ request: HTTPRequest) -> Bool {
        guard loopbackOnly else { return true }
        guard let host = request.headers[.host] else { return false }
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }) + "]" : String(host.prefix { $0 != ":" })
        return ["127.0.0.1", "localhost", "[::1]"].contains(name.lowercased())
    }

    /// A browser names the page's origin on writes and WebSockets; it must be this server.
    func sameOrigin(_ request: HTTPRequest) -> Bool {
        guard let origin = request.headers[HTTPHeader("Origin")] else { return true }  // not a browser
        guard let host = request.headers[.host] else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }

    /// Reads need this machine's Host (on loopback) and a login (when there is a password).
    func refusal(forRead request: HTTPRequest) -> HTTPResponse? {
        guard hostAllowed(request) else { return Self.refused(.forbidden, "unknown Host") }
        guard access.csrfToken(cookieHeader: request.headers[.cookie]) != nil else {
            return Self.refused(.unauthorized, "log in first")
        }
        return nil
    }

    func refusal(forWrite request: HTTPRequest) -> HTTPResponse? {
        guard hostAllowed(request), sameOrigin(request) else { return Self.refused(.forbidden, "wrong origin") }
        guard
            access.mayWrite(
                cookieHeader: request.headers[.cookie], csrfHeader: request.headers[HTTPHeader("X-Aulos-CSRF")])
        else { return Self.refused(.forbidden, "log in, and send the session's X-Aulos-CSRF token") }
        return nil
    }

    // MARK: Bodies and answers

    /// The body, or nil when it is larger than `limit` (read no further than that).
    static func body(_ request: HTTPRequest, limit: Int) async throws -> Data? {
        if let count = request.bodySequence.count, count > limit { return nil }
        var data = Data()
        for try await chunk in request.bodySequence {
            data.append(chunk)
            if data.count > limit { return nil }
        }
        return data
    }

    /// The string `name` of a JSON object body of at most `requestLimit` bytes; nil for anything else.
    static func field(_ name: String, of request: HTTPRequest) async throws -> String? {
        guard let body = try await body(request, limit: requestLimit),
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        else { return nil }
        return object[name] as? String
    }

    /// A control reply as an HTTP answer, its status code from the reply's kind.
    static func answer(_ reply: ControlReply) -> HTTPResponse {
        HTTPResponse(
            statusCode: statusCode(reply.kind), headers: [.contentType: "application/json"], body: Data(reply.json.utf8)
        )
    }

    static func statusCode(_ kind: ControlReply.Kind) -> HTTPStatusCode {
        switch kind {
        case .ok: .ok
        case .badRequest: .badRequest
        case .unavailable: .serviceUnavailable
        }
    }

    static func json(_ object: [String: Any]) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return HTTPResponse(statusCode: .ok, headers: [.contentType: "application/json"], body: data)
    }

    static func refused(_ status: HTTPStatusCode, _ reason: String) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: ["error": reason])) ?? Data()
        return HTTPResponse(statusCode: status, headers: [.contentType: "application/json"], body: data)
    }
}

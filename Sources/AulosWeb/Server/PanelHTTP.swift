import Foundation

/// One HTTP/1.1 request as the panel's server read it: the method, the path (without a query), the headers
/// (names lowercased; of a repeated header the last, as the gate reads them) and the body.
///
/// Public for the fuzz package's `http` target.
///
/// Threads: a value, made and used on one connection's thread.
public struct PanelRequest: Sendable {
    public var method: String
    public var path: String
    public var headers: [String: String]
    public var body: [UInt8]
    /// Whether the client asked to keep the connection for another request (HTTP/1.1 unless
    /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`).
    public var keepAlive: Bool

    /// The value of the header `name` (any case), or nil.
    subscript(header name: String) -> String? { headers[name.lowercased()] }

    /// Reads a request head (up to and with its empty line). Nil when it is not one: no request line of
    /// three parts, or a version other than HTTP/1.x. (The gate in front has already refused heads that are
    /// too long, not ASCII, or ambiguous about their body.)
    public init?(head: ArraySlice<UInt8>) {
        let lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        }
        let requestLine = lines.first?.split(separator: " ", omittingEmptySubsequences: true) ?? []
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else { return nil }
        method = String(requestLine[0])
        path = String(requestLine[1].prefix { $0 != "?" && $0 != "#" })
        headers = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        body = []
        let connection = headers["connection"]?.lowercased() ?? ""
        keepAlive =
            requestLine[2] == "HTTP/1.0" ? connection.contains("keep-alive") : !connection.contains("close")
    }

    /// The body's length from `Content-Length` (0 without one); nil when it is not plain digits.
    public var contentLength: Int? {
        guard let value = headers["content-length"] else { return 0 }
        guard !value.isEmpty, value.count <= 10, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(value)
    }
}

/// One HTTP/1.1 answer: a status, headers, a body.
///
/// Threads: a value.
struct PanelResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    init(status: Int, contentType: String, body: Data) {
        self.init(status: status, headers: [("Content-Type", contentType)], body: Array(body))
    }

    /// The value of header `name` (any case), the last one given.
    subscript(header name: String) -> String? {
        get { headers.last { $0.name.lowercased() == name.lowercased() }?.value }
        set {
            headers.removeAll { $0.name.lowercased() == name.lowercased() }
            if let newValue { headers.append((name, newValue)) }
        }
    }

    /// The bytes on the wire: status line, headers, Content-Length, whether the connection stays, body.
    func bytes(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.phrase(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        return Array(head.utf8) + body
    }

    static func phrase(_ status: Int) -> String {
        switch status {
        case 101: "Switching Protocols"
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}

import AulosCore

/// A value for a plugin property set by message (a sample's path, a number that is not a port).
///
/// Threads: a value.
public enum LV2PropertyValue: Sendable, Equatable {
    case path(String)
    case string(String)
    case float(Float)
    case double(Double)
    case int(Int32)
    case long(Int64)
    case bool(Bool)

    /// `text` as a value of the atom type `range` (its URI's fragment: Path, String, Float, Double, Int,
    /// Long, Bool), or nil when it is not one.
    public init?(_ text: String, range: String) {
        switch range.split(separator: "#").last ?? "" {
        case "Path": self = .path(text)
        case "String", "Literal", "": self = .string(text)
        case "Float":
            guard let value = Float(text) else { return nil }
            self = .float(value)
        case "Double":
            guard let value = Double(text) else { return nil }
            self = .double(value)
        case "Int":
            guard let value = Int32(text) else { return nil }
            self = .int(value)
        case "Long":
            guard let value = Int64(text) else { return nil }
            self = .long(value)
        case "Bool":
            guard let value = ["true": true, "false": false, "1": true, "0": false][text.lowercased()] else {
                return nil
            }
            self = .bool(value)
        default: return nil
        }
    }
}

/// The patch:Set message that sets a plugin property, as atom bytes (header and object body) ready to go
/// into a plugin's atom input: `{ patch:property <uri>, patch:value <value> }`.
///
/// Threads: control thread (the bytes then travel to the render thread in a ring).
enum LV2PropertyMessage {
    static func patchSet(property: UInt32, value: LV2PropertyValue, map: LV2URIDMap) -> [UInt8] {
        let atom = "http://lv2plug.in/ns/ext/atom#"
        let patch = "http://lv2plug.in/ns/ext/patch#"
        let (type, payload): (String, [UInt8]) =
            switch value {
            case .path(let text): ("Path", Array(text.utf8) + [0])
            case .string(let text): ("String", Array(text.utf8) + [0])
            case .float(let number): ("Float", bytes(of: number))
            case .double(let number): ("Double", bytes(of: number))
            case .int(let number): ("Int", bytes(of: number))
            case .long(let number): ("Long", bytes(of: number))
            case .bool(let flag): ("Bool", bytes(of: Int32(flag ? 1 : 0)))
            }
        var body: [UInt8] = []
        body += bytes(of: UInt32(0))  // object id: blank
        body += bytes(of: map.map(patch + "Set"))
        // patch:property → the property's URID
        body += bytes(of: map.map(patch + "property")) + bytes(of: UInt32(0))
        body += bytes(of: UInt32(4)) + bytes(of: map.map(atom + "URID")) + bytes(of: property)
        body += bytes(of: UInt32(0))  // padding to 8
        // patch:value → the value, padded to 8
        body += bytes(of: map.map(patch + "value")) + bytes(of: UInt32(0))
        body += bytes(of: UInt32(payload.count)) + bytes(of: map.map(atom + type)) + payload
        body += [UInt8](repeating: 0, count: (8 - payload.count % 8) % 8)
        return bytes(of: UInt32(body.count)) + bytes(of: map.map(atom + "Object")) + body
    }

    static func bytes<T: BitwiseCopyable>(of value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }
}

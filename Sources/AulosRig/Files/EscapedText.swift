extension String {
    /// The text for inside double quotes in JSON (the control socket's replies) or YAML (rig files; JSON's
    /// escapes are a subset of YAML's): backslashes and quotes escaped, and control characters and the
    /// characters YAML treats as line breaks (U+0085, U+2028, U+2029) or strips (U+FEFF) as \\uXXXX —
    /// left raw, a YAML reader would fold or drop them and a JSON reader reject them.
    public var escapedForDoubleQuotes: String {
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case _
            where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x85 || scalar.value == 0x2028
                || scalar.value == 0x2029 || scalar.value == 0xFEFF:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// An input split at "\n%%%\n" into at most `maximum` files (the rest stays in the last), by bytes: the
/// targets that read several files (an SFZ library and its includes) take them from one fuzzer input.
public func splitFiles(_ bytes: [UInt8], maximum: Int) -> [[UInt8]] {
    let separator = Array("\n%%%\n".utf8)
    var parts: [[UInt8]] = [[]]
    var index = 0
    while index < bytes.count {
        if parts.count < maximum, bytes[index...].starts(with: separator) {
            parts.append([])
            index += separator.count
        } else {
            parts[parts.count - 1].append(bytes[index])
            index += 1
        }
    }
    return parts
}

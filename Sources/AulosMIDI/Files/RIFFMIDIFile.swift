extension StandardMIDIFile {
    /// The Standard MIDI File inside a RIFF `RMID` file (`.rmi`: a RIFF header, then chunks of which `data`
    /// holds the MIDI file), or `bytes` as they are when they are not one. A `data` chunk that claims more
    /// bytes than the file holds is an error read strictly; read forgivingly, what is there is read.
    static func unwrappingRIFF(_ bytes: [UInt8], reading: MIDIFileReading) throws(MIDIFileError) -> [UInt8] {
        guard bytes.count >= 12, bytes.starts(with: "RIFF".utf8), bytes[8..<12].elementsEqual("RMID".utf8) else {
            return bytes
        }
        func littleEndian32(at offset: Int) -> Int {
            (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
        var position = 12
        while position + 8 <= bytes.count {
            let id = bytes[position..<(position + 4)]
            let length = littleEndian32(at: position + 4)
            let start = position + 8
            if id.elementsEqual("data".utf8) {
                guard length <= bytes.count - start || reading == .forgiving else {
                    throw MIDIFileError(
                        "the RIFF 'data' chunk at byte \(position) claims \(length) bytes but only "
                            + "\(bytes.count - start) remain")
                }
                return Array(bytes[start..<min(bytes.count, start + length)])
            }
            // RIFF chunks are padded to an even length.
            position = start + length + (length & 1)
        }
        throw MIDIFileError("a RIFF RMID file without a 'data' chunk holding the MIDI file", kind: .notAMIDIFile)
    }
}

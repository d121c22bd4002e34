/// General MIDI Level 1's instrument names and what a piece of music asks of them: for summaries that say
/// what actually played ("Acoustic Grand Piano, Fingered Bass … and drums"), whatever instrument answers.
///
/// Threads: any (constants and a value type).
public enum GeneralMIDI {
    /// The 128 melodic programs, by program number (0-based), as the GM 1 specification names them.
    public static let programNames: [String] = [
        "Acoustic Grand Piano", "Bright Acoustic Piano", "Electric Grand Piano", "Honky-tonk Piano",
        "Electric Piano 1", "Electric Piano 2", "Harpsichord", "Clavi", "Celesta", "Glockenspiel", "Music Box",
        "Vibraphone", "Marimba", "Xylophone", "Tubular Bells", "Dulcimer", "Drawbar Organ", "Percussive Organ",
        "Rock Organ", "Church Organ", "Reed Organ", "Accordion", "Harmonica", "Tango Accordion",
        "Acoustic Guitar (nylon)", "Acoustic Guitar (steel)", "Electric Guitar (jazz)", "Electric Guitar (clean)",
        "Electric Guitar (muted)", "Overdriven Guitar", "Distortion Guitar", "Guitar harmonics", "Acoustic Bass",
        "Electric Bass (finger)", "Electric Bass (pick)", "Fretless Bass", "Slap Bass 1", "Slap Bass 2",
        "Synth Bass 1", "Synth Bass 2", "Violin", "Viola", "Cello", "Contrabass", "Tremolo Strings",
        "Pizzicato Strings", "Orchestral Harp", "Timpani", "String Ensemble 1", "String Ensemble 2",
        "SynthStrings 1", "SynthStrings 2", "Choir Aahs", "Voice Oohs", "Synth Voice", "Orchestra Hit", "Trumpet",
        "Trombone", "Tuba", "Muted Trumpet", "French Horn", "Brass Section", "SynthBrass 1", "SynthBrass 2",
        "Soprano Sax", "Alto Sax", "Tenor Sax", "Baritone Sax", "Oboe", "English Horn", "Bassoon", "Clarinet",
        "Piccolo", "Flute", "Recorder", "Pan Flute", "Blown Bottle", "Shakuhachi", "Whistle", "Ocarina",
        "Lead 1 (square)", "Lead 2 (sawtooth)", "Lead 3 (calliope)", "Lead 4 (chiff)", "Lead 5 (charang)",
        "Lead 6 (voice)", "Lead 7 (fifths)", "Lead 8 (bass + lead)", "Pad 1 (new age)", "Pad 2 (warm)",
        "Pad 3 (polysynth)", "Pad 4 (choir)", "Pad 5 (bowed)", "Pad 6 (metallic)", "Pad 7 (halo)", "Pad 8 (sweep)",
        "FX 1 (rain)", "FX 2 (soundtrack)", "FX 3 (crystal)", "FX 4 (atmosphere)", "FX 5 (brightness)",
        "FX 6 (goblins)", "FX 7 (echoes)", "FX 8 (sci-fi)", "Sitar", "Banjo", "Shamisen", "Koto", "Kalimba",
        "Bag pipe", "Fiddle", "Shanai", "Tinkle Bell", "Agogo", "Steel Drums", "Woodblock", "Taiko Drum",
        "Melodic Tom", "Synth Drum", "Reverse Cymbal", "Guitar Fret Noise", "Breath Noise", "Seashore",
        "Bird Tweet", "Telephone Ring", "Helicopter", "Applause", "Gunshot",
    ]

    /// The programs a piece sounds: follows each channel's bank select and program change, and notes the
    /// program of every channel a note starts on (channel 10, or `drumChannels`, counts as drums).
    public struct ProgramsHeard: Sendable {
        private var program = [UInt8](repeating: 0, count: 16)
        private var bank = [UInt8](repeating: 0, count: 16)
        /// (bank MSB, program) pairs heard on melodic channels, in the order first heard.
        public private(set) var melodic: [(bank: UInt8, program: UInt8)] = []
        public private(set) var drums = false
        let drumChannels: Set<UInt8>

        /// `drumChannels` are 0-based (9 is channel 10).
        public init(drumChannels: Set<UInt8> = [9]) { self.drumChannels = drumChannels }

        public mutating func take(_ message: ChannelMessage) {
            let channel = Int(message.channel)
            switch message.status & 0xF0 {
            case 0xB0 where message.data1 == 0: bank[channel] = message.data2
            case 0xC0: program[channel] = message.data1
            case 0x90 where message.data2 > 0:
                if drumChannels.contains(UInt8(channel)) {
                    drums = true
                } else if !melodic.contains(where: { $0 == (bank[channel], program[channel]) }) {
                    melodic.append((bank[channel], program[channel]))
                }
            default: break
            }
        }

        /// "Acoustic Grand Piano, Fingered Bass and drums" (at most `limit` names, then "and N more").
        public func description(limit: Int = 6) -> String {
            var names = melodic.map { entry in
                GeneralMIDI.programNames[Int(entry.program)] + (entry.bank == 0 ? "" : " (bank \(entry.bank))")
            }
            if names.count > limit { names = names.prefix(limit) + ["\(melodic.count - limit) more"] }
            if drums { names.append("drums") }
            guard names.count > 1 else { return names.first ?? "nothing" }
            return names.dropLast().joined(separator: ", ") + " and " + names.last!
        }
    }
}

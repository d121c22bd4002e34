import AulosCore
import AulosDSP
import AulosMIDI

/// Notes and voices: starting a note in a free voice or a stolen one, mono and legato key stacks, releasing
/// (with the sustain pedal), fading a stolen voice out, and shedding voices under the host's limit.
///
/// Threads: render thread.
extension OscillatorSynthKernel {
    /// `velocity` on the 0…127 scale, fractional from MIDI 2.0's 16 bits.
    @_noAllocation @_noLocks
    func noteOn(_ note: UInt8, velocity: Float, channel: Int) {
        // A key the tuning leaves silent plays nothing.
        if keyPitches[Int(note & 0x7F)].isNaN { return }
        switch patch(channel).pointee.voiceMode {
        case .poly: break
        case .mono:
            monoNoteOn(note, velocity: velocity, channel: channel, legato: false)
            return
        case .legato:
            monoNoteOn(note, velocity: velocity, channel: channel, legato: true)
            return
        }
        var chosen = -1
        // The same key struck again: re-strike it in place.
        for index in 0..<polyphony
        where voices[index].active && !voices[index].fading
            && voices[index].note == note && Int(voices[index].channel) == channel
        {
            chosen = index
            break
        }
        if chosen < 0 {
            // A free voice: never started, or its envelope has ended (it is freed at the next tick).
            for index in 0..<polyphony where !voices[index].active || isFinished(index) {
                chosen = index
                break
            }
        }
        if chosen < 0 { chosen = victim() }
        if voices[chosen].active && !isFinished(chosen) { fadeOut(chosen) }
        start(voices + chosen, note: note, velocity: velocity, channel: channel)
    }

    /// Whether a voice's envelope has ended while it waits for the next tick to be freed.
    @inline(__always) @_noAllocation @_noLocks
    func isFinished(_ index: Int) -> Bool {
        voices[index].active && !voices[index].fading && !voices[index].amp.isActive
    }

    /// The voice a mono or legato channel plays (at most one sounds per channel), or −1.
    @_noAllocation @_noLocks
    func monoVoice(_ channel: Int) -> Int {
        for index in 0..<polyphony
        where voices[index].active && !voices[index].fading && Int(voices[index].channel) == channel {
            return index
        }
        return -1
    }

    /// Under the host's overload limit, fades out voices beyond it (the stealing order: released first,
    /// then the oldest) and counts them. Fading voices no longer count: they are gone in 128 frames.
    @_noAllocation @_noLocks
    func shedToLimit() {
        let limit = budget.pointee.limit.load(ordering: .relaxed)
        guard limit < polyphony else { return }
        var held = 0
        for index in 0..<polyphony where voices[index].active { held += 1 }
        var shed = 0
        while held > limit {
            let index = victim(activeOnly: true)
            guard index >= 0 else { break }
            fadeOut(index)
            held -= 1
            shed += 1
        }
        if shed > 0 { budget.pointee.shed.add(shed, ordering: .relaxed) }
    }

    /// The voice to steal: released voices before held ones, then the oldest, then the quietest.
    @_noAllocation @_noLocks
    func victim(activeOnly: Bool = false) -> Int {
        var best = activeOnly ? -1 : 0
        for index in (activeOnly ? 0 : 1)..<polyphony {
            if activeOnly {
                guard voices[index].active && !voices[index].fading else { continue }
                if best < 0 {
                    best = index
                    continue
                }
            }
            let a = voices[index]
            let b = voices[best]
            if a.released != b.released {
                if a.released { best = index }
            } else if a.age != b.age {
                if a.age < b.age { best = index }
            } else if a.amp.level < b.amp.level {
                best = index
            }
        }
        return best
    }

    /// Moves a sounding voice into a fade slot, where it dies away over 128 frames instead of being cut.
    @_noAllocation @_noLocks
    func fadeOut(_ index: Int) {
        var slot = polyphony
        for candidate in polyphony..<(polyphony + Self.fadeSlots) where !voices[candidate].active {
            slot = candidate
            break
        }
        voices[slot] = voices[index]
        voices[slot].fading = true
        voices[slot].fadeGain = 1
        voices[slot].fadeStep = 1 / Self.fadeFrames
        voices[index].active = false
    }

    @_noAllocation @_noLocks
    func start(_ voice: UnsafeMutablePointer<SynthVoice>, note: UInt8, velocity: Float, channel: Int) {
        ageCounter.pointee += 1
        var v = SynthVoice()
        v.active = true
        v.note = note
        v.channel = UInt8(channel)
        v.velocity = velocity
        v.age = ageCounter.pointee
        v.pitch = keyPitches[Int(note & 0x7F)]
        // Start a quarter period in, where every waveform is non-zero (a band-limited saw is exactly 0 at
        // phase 0): the note is audible from its first frame.
        v.phase1 = 1 << 30
        v.phase2 = 1 << 30
        let sensitivity = patch(channel).pointee.velocitySensitivity
        let normalized = velocity / 127
        v.velocityGain = 1 - sensitivity + sensitivity * normalized * normalized
        v.noise = NoiseGenerator(seed: UInt32(truncatingIfNeeded: v.age &* 2_654_435_761) | 1)
        v.noise2 = NoiseGenerator(seed: UInt32(truncatingIfNeeded: v.age &* 2_246_822_519) | 1)
        var draw = NoiseGenerator(seed: UInt32(truncatingIfNeeded: v.age &* 3_266_489_917) | 1)
        v.random = (draw.next() + 1) / 2
        v.amp.start()
        v.filterEnvelope.start()
        v.modEnvelope.start()
        let c = patch(channel).pointee
        if c.isRich { v.rich.start(seed: UInt32(truncatingIfNeeded: v.age &* 2_166_136_261) | 1) }
        // Glide from the channel's last note: always, or (legato) only while another key is held.
        let last = channels[channel].lastPitch
        if c.glideTime > 0 && !last.isNaN {
            switch c.glideMode {
            case .always: v.glideOffset = last - v.pitch
            case .legato: if keyHeld(on: channel) { v.glideOffset = last - v.pitch }
            case .off: break
            }
        }
        channels[channel].lastPitch = v.pitch
        // The second LFO: from the start of its cycle when retriggered, else where free time puts it.
        if c.usesLFO2 && !c.lfo2Retrigger {
            // From the note's own frame, not the slice's: where a slice starts must not show.
            let cycles = Double(now.pointee) * c.lfo2Rate / sampleRate
            v.lfo2Phase = cycles - Double(Int64(cycles))
        }
        voice.pointee = v
        updateVoice(voice, interpolate: false)
    }

    /// Whether a key is held (a voice sounding, not released) on `channel`.
    @_noAllocation @_noLocks
    func keyHeld(on channel: Int) -> Bool {
        for index in 0..<polyphony
        where voices[index].active && !voices[index].fading && !voices[index].released
            && Int(voices[index].channel) == channel
        {
            return true
        }
        return false
    }

    @_noAllocation @_noLocks
    func monoNoteOn(_ note: UInt8, velocity: Float, channel: Int, legato: Bool) {
        removeFromStack(note, channel: channel)
        let stack = noteStack + 128 * channel
        if noteStackCount[channel] < 128 {
            stack[noteStackCount[channel]] = note
            noteStackCount[channel] += 1
        }
        var index = monoVoice(channel)
        if index < 0 {
            // The channel's first note: a free voice, or the one the pool can best spare.
            for candidate in 0..<polyphony where !voices[candidate].active || isFinished(candidate) {
                index = candidate
                break
            }
            if index < 0 { index = victim() }
        }
        let voice = voices + index
        if voice.pointee.active && !voice.pointee.fading && !voice.pointee.released
            && Int(voice.pointee.channel) == channel
        {
            let glide = patch(channel).pointee
            let previous = voice.pointee.pitch
            voice.pointee.note = note
            voice.pointee.pitch = keyPitches[Int(note & 0x7F)]
            // Another key: the previous one's per-note expression was not meant for it.
            voice.pointee.expression = NoteExpression()
            // Keys overlap here: a glide in legato or always mode slides from where the voice was.
            if glide.glideTime > 0 && glide.glideMode.isOn {
                voice.pointee.glideOffset += previous - voice.pointee.pitch
            }
            channels[channel].lastPitch = voice.pointee.pitch
            if !legato {
                // Mono: restart the envelopes from where they are (no click), keep the oscillators running.
                voice.pointee.amp.start()
                voice.pointee.filterEnvelope.start()
                let sensitivity = patch(channel).pointee.velocitySensitivity
                let normalized = velocity / 127
                voice.pointee.velocityGain = 1 - sensitivity + sensitivity * normalized * normalized
            }
            updateVoice(voice, interpolate: true)
            return
        }
        if voice.pointee.active && !isFinished(index) { fadeOut(index) }
        start(voice, note: note, velocity: velocity, channel: channel)
    }

    @_noAllocation @_noLocks
    func removeFromStack(_ note: UInt8, channel: Int) {
        let stack = noteStack + 128 * channel
        var write = 0
        for read in 0..<noteStackCount[channel] where stack[read] != note {
            stack[write] = stack[read]
            write += 1
        }
        noteStackCount[channel] = write
    }

    @_noAllocation @_noLocks
    func noteOff(_ note: UInt8, velocity: Float = 64, channel: Int) {
        // In an MPE zone the manager's pedal holds every note of the zone.
        let pedal = channels[channel].sustain || channels[owner(channel)].sustain
        if patch(channel).pointee.voiceMode.isMonophonic {
            removeFromStack(note, channel: channel)
            let index = monoVoice(channel)
            guard index >= 0, voices[index].note == note else { return }
            let voice = voices + index
            if noteStackCount[channel] > 0 {
                // Fall back to the most recent key still held, legato.
                let previous = noteStack[128 * channel + noteStackCount[channel] - 1]
                voice.pointee.note = previous
                voice.pointee.expression = NoteExpression()
                voice.pointee.pitch =
                    keyPitches[Int(previous & 0x7F)].isNaN ? voice.pointee.pitch : keyPitches[Int(previous & 0x7F)]
                updateVoice(voice, interpolate: true)
            } else if pedal {
                voice.pointee.sustained = true
            } else {
                voice.pointee.releaseVelocity = velocity
                voice.pointee.released = true
                voice.pointee.amp.release()
                voice.pointee.filterEnvelope.release()
                voice.pointee.modEnvelope.release()
            }
            return
        }
        for index in 0..<polyphony
        where voices[index].active && !voices[index].fading && !voices[index].released
            && voices[index].note == note && Int(voices[index].channel) == channel
        {
            voices[index].releaseVelocity = velocity
            if pedal {
                voices[index].sustained = true
            } else {
                releaseVoice(index)
            }
        }
    }

    @_noAllocation @_noLocks
    func releaseVoice(_ index: Int) {
        voices[index].released = true
        voices[index].sustained = false
        voices[index].amp.release()
        voices[index].filterEnvelope.release()
        voices[index].modEnvelope.release()
    }
}

import AulosMIDI
import Synchronization
import Testing

/// MIDI 2.0 through the rig's router: the wide value kept on the way to the parts, a 16-bit velocity through a
/// part's velocity curve, per-note messages to the parts holding the note, and a mapped or learned controller
/// setting its parameter from all 32 bits.
@Suite struct RoutingMIDI2Tests {
    /// Two parts on channel 1: part 0 plays straight, part 1 transposed up an octave with a curve that halves every
    /// velocity.
    func kernel(controls: [RoutedMapping] = []) -> RoutingKernel {
        let straight = (0..<128).map { UInt8($0) }
        let halved = (0..<128).map { UInt8($0 / 2) }
        return RoutingKernel(
            parts: [
                (RoutedPart(rig: 0, channels: 1, keys: 0...127, transpose: 0), straight),
                (RoutedPart(rig: 0, channels: 1, keys: 0...127, transpose: 12), halved),
            ],
            rigs: [RoutedRig(bank: 0, program: 0, controls: controls)], controlChannel: nil)
    }

    func deliveries(_ kernel: RoutingKernel, _ result: RoutingResult) -> [(UInt16, ChannelMessage)] {
        (0..<result.count).map { (kernel.deliveries[$0].destination, kernel.deliveries[$0].message) }
    }

    @Test func velocityKeepsSixteenBitsThroughTheCurve() {
        var kernel = kernel()
        defer { kernel.deallocate() }
        // 0x8123: 64 in MIDI 1.0; 0x123 = 291/512 of the way to 65.
        let note = ChannelMessage(midi2: 0x90, data1: 60, data2: 64, wide: 0x8123)
        let routed = deliveries(kernel, kernel.route(note, from: 1))
        #expect(routed.count == 2)
        // A straight curve gives the 16 bits back.
        #expect(routed[0].1 == note)
        // Halving: entries 32 (at 64) and 32 (at 65), so the whole step maps to 32 << 9; the 7-bit byte is the
        // curve's own entry, as for MIDI 1.0.
        #expect(routed[1].1.data1 == 72 && routed[1].1.data2 == 32 && routed[1].1.wide == 32 << 9)
        #expect(routed[1].1.resolution == .midi2)
        // 0x8323 (65 and 0x123): entries 32 (at 65) and 33 (at 66): 32 << 9 + 0x123.
        let next = deliveries(
            kernel, kernel.route(ChannelMessage(midi2: 0x90, data1: 61, data2: 65, wide: 0x8323), from: 1))
        #expect(next[1].1.wide == 32 << 9 + 0x123)
        // The note-off keeps its 16-bit velocity too, transposed where its note went.
        let off = deliveries(
            kernel, kernel.route(ChannelMessage(midi2: 0x80, data1: 60, data2: 10, wide: 0x1400), from: 1))
        #expect(off.map(\.1.data1) == [60, 72] && off.allSatisfy { $0.1.wide == 0x1400 && $0.1.resolution == .midi2 })
    }

    @Test func perNoteMessagesGoWhereTheirNoteWent() {
        var kernel = kernel()
        defer { kernel.deallocate() }
        _ = kernel.route(.noteOn(channel: 0, note: 60, velocity: 100), from: 1)
        let bend = ChannelMessage.perNotePitchBend(channel: 0, note: 60, value: 0xC000_0000)
        let routed = deliveries(kernel, kernel.route(bend, from: 1))
        #expect(routed.map(\.0) == [0, 1])
        #expect(routed[0].1 == bend)
        #expect(routed[1].1 == ChannelMessage.perNotePitchBend(channel: 0, note: 72, value: 0xC000_0000))
        let controller = ChannelMessage.perNoteController(channel: 0, note: 60, controller: 74, value: 7)
        #expect(deliveries(kernel, kernel.route(controller, from: 1)).map(\.1.data2) == [74, 74])
        // A note not sounding: nowhere.
        #expect(kernel.route(.perNotePitchBend(channel: 0, note: 61, value: 0), from: 1).count == 0)
    }

    /// A mapped controller (the rig's, then a learned one) sets its parameter from the 32-bit value: two values
    /// with the same top 7 bits set two values, each the one `MIDI2Scale` puts on the 0…127 line.
    @Test func mappedAndLearnedControllersTakeAllThirtyTwoBits() {
        let cell = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: 1)
        cell.initialize(to: Atomic(0))
        defer { cell.deallocate() }
        let control = RoutedControl(cell: cell, range: 0...1, target: 0)
        var kernel = kernel(controls: [RoutedMapping(controller: 20, channel: 0, control: control)])
        defer { kernel.deallocate() }
        func value(_ result: RoutingResult) -> Float? {
            switch result.action {
            case .control(_, let value), .learned(_, _, _, let value): value
            default: nil
            }
        }
        func controller(_ number: UInt8, _ wide: UInt32) -> ChannelMessage {
            ChannelMessage(midi2: 0xB0, data1: number, data2: UInt8(wide >> 25), wide: wide)
        }
        let low = value(kernel.route(controller(20, 0xA000_0000), from: 1))
        let high = value(kernel.route(controller(20, 0xA1FF_FFFF), from: 1))
        #expect(low == Float(MIDI2Scale.controller(0xA000_0000) / 127))
        #expect(high == Float(MIDI2Scale.controller(0xA1FF_FFFF) / 127))
        #expect(low != nil && high != nil && low! < high!)
        // Between two 7-bit steps: 0xA0FF_FFFF is 80.24 on the 0…127 line, not 80 (its top 7 bits) or 81.
        let between = value(kernel.route(controller(20, 0xA0FF_FFFF), from: 1))!
        #expect(between > control.value(controller: 80) && between < control.value(controller: 81))
        // MIDI 1.0's controller still moves by 127ths.
        #expect(value(kernel.route(.controlChange(channel: 0, controller: 20, value: 64), from: 1)) == Float(64) / 127)

        kernel.learn(control)
        let learned = value(kernel.route(controller(21, 0x8000_0001), from: 1))
        #expect(learned == Float(MIDI2Scale.controller(0x8000_0001) / 127))
        let moved = value(kernel.route(controller(21, 0x81FF_FFFF), from: 1))
        #expect(moved == Float(MIDI2Scale.controller(0x81FF_FFFF) / 127) && moved! > learned!)
    }
}

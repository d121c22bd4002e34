import AulosCore
import Synchronization

/// A tap on every part's own output — what the part sends into the mix, after its insert effects and EQ,
/// before its volume, pan and sends (the signal of JACK's per-part ports) — that a sink can be attached to
/// and taken from while the rig plays: recording each part (`--record-parts`, `aulos render --parts`).
///
/// Each part's tap is a Side Output unit in the rig whose callback reads one atomic pointer: nil (nothing
/// attached, a plain pass-through) or a `RenderCallbackStruct` that is called with the part's slice. So
/// attaching and detaching change no render plan and never wait for the render thread.
///
/// Threads: `attach` on the control thread; the taps' callbacks on the render thread. The caller keeps an
/// attached sink (and the struct it points to) alive until the render thread is surely past it — a cycle
/// after it was detached.
public final class PartTaps: @unchecked Sendable {
    /// The number of parts, in the rig's part order.
    public let count: Int
    private let slots: UnsafeMutablePointer<Atomic<UnsafeMutableRawPointer?>>

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: max(1, count))
        for index in 0..<count { (slots + index).initialize(to: Atomic(nil)) }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// The Side Output callback for part `index`.
    func callback(for index: Int) -> RenderCallbackStruct {
        RenderCallbackStruct(Self.render, refCon: UnsafeMutableRawPointer(slots + index))
    }

    /// Makes part `index`'s slices go to `sink` from the next cycle on (nil: to nothing).
    public func attach(_ sink: UnsafePointer<RenderCallbackStruct>?, toPart index: Int) {
        precondition(index >= 0 && index < count, "part \(index) of \(count)")
        slots[index].store(sink.map { UnsafeMutableRawPointer(mutating: $0) }, ordering: .releasing)
    }

    /// A tap: hand the slice to the attached sink, if any.
    static let render: RenderCallback = { refCon, flags, timeStamp, bus, frameCount, ioData in
        guard let refCon else { return 0 }
        return refCon.assumingMemoryBound(to: Atomic<UnsafeMutableRawPointer?>.self)
            .pointee.forward(flags: flags, timeStamp: timeStamp, bus: bus, frameCount: frameCount, ioData: ioData)
    }
}

extension Atomic where Value == UnsafeMutableRawPointer? {
    /// The render side of one part's tap.
    @_noAllocation @_noLocks
    fileprivate func forward(
        flags: UnsafeMutablePointer<RenderActionFlags>, timeStamp: UnsafePointer<AudioTimeStamp>, bus: UInt32,
        frameCount: UInt32, ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        guard let sink = load(ordering: .acquiring) else { return 0 }
        let target = sink.assumingMemoryBound(to: RenderCallbackStruct.self).pointee
        // The sink follows the render thread's rules; the checker cannot see through a function pointer.
        return _unsafePerformance { target.callback(target.refCon, flags, timeStamp, bus, frameCount, ioData) }
    }
}

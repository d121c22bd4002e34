import Synchronization

/// A bounded, lock-free single-producer/single-consumer ring of variable-length messages (a 4-byte
/// length, then the bytes, padded to 4): what LV2 plugins' worker requests and responses travel in.
///
/// Threads: one producer calls `write`, one consumer calls `read`. Both are wait-free and allocate
/// nothing, so either side may be the render thread. A value handle over unmanaged storage (copies share
/// one ring); the creating thread calls `deallocate()` once neither side uses it.
public struct SPSCByteRing: @unchecked Sendable {
    struct Indices: ~Copyable {
        /// Bytes read so far (consumer only writes it).
        let head = Atomic<Int>(0)
        /// Bytes written so far (producer only writes it).
        let tail = Atomic<Int>(0)
    }

    let indices: UnsafeMutablePointer<Indices>
    let bytes: UnsafeMutableRawPointer
    let mask: Int

    /// A ring of at least `minimumCapacity` bytes, rounded up to a power of two.
    public init(minimumCapacity: Int) {
        var capacity = 64
        while capacity < minimumCapacity { capacity <<= 1 }
        indices = .allocate(capacity: 1)
        indices.initialize(to: Indices())
        bytes = .allocate(byteCount: capacity, alignment: 8)
        mask = capacity - 1
    }

    public var capacity: Int { mask + 1 }

    public func deallocate() {
        indices.deinitialize(count: 1)
        indices.deallocate()
        bytes.deallocate()
    }

    /// Room a message of `size` bytes takes: its length word and its bytes, padded to 4.
    static func footprint(_ size: Int) -> Int { 4 + (size + 3) & ~3 }

    /// Producer: appends one message of `size` bytes. False (nothing written) when it does not fit.
    @_noAllocation @_noLocks
    public func write(_ data: UnsafeRawPointer?, size: Int) -> Bool {
        let tail = indices.pointee.tail.load(ordering: .relaxed)
        let head = indices.pointee.head.load(ordering: .acquiring)
        let needed = Self.footprint(size)
        guard size >= 0, needed <= capacity - (tail &- head) else { return false }
        copyIn(UInt32(size), at: tail)
        if let data { copyIn(data, count: size, at: tail &+ 4) }
        indices.pointee.tail.store(tail &+ needed, ordering: .releasing)
        return true
    }

    /// Consumer: the size of the oldest message, or nil when the ring is empty (to see whether it fits
    /// where it is to go before reading it).
    @_noAllocation @_noLocks
    public func peekSize() -> Int? {
        let head = indices.pointee.head.load(ordering: .relaxed)
        let tail = indices.pointee.tail.load(ordering: .acquiring)
        if head == tail { return nil }
        var size: UInt32 = 0
        withUnsafeMutableBytes(of: &size) { copyOut($0.baseAddress!, count: 4, at: head) }
        return Int(size)
    }

    /// Consumer: copies the oldest message into `scratch` (room for `scratchSize` bytes) and removes it.
    /// Returns its size, nil when the ring is empty, or −1 for a message larger than the scratch space
    /// (skipped).
    @_noAllocation @_noLocks
    public func read(into scratch: UnsafeMutableRawPointer, scratchSize: Int) -> Int? {
        let head = indices.pointee.head.load(ordering: .relaxed)
        let tail = indices.pointee.tail.load(ordering: .acquiring)
        if head == tail { return nil }
        var size: UInt32 = 0
        withUnsafeMutableBytes(of: &size) { copyOut($0.baseAddress!, count: 4, at: head) }
        let length = Int(size)
        if length <= scratchSize { copyOut(scratch, count: length, at: head &+ 4) }
        indices.pointee.head.store(head &+ Self.footprint(length), ordering: .releasing)
        return length <= scratchSize ? length : -1
    }

    private func copyIn(_ value: UInt32, at position: Int) {
        var value = value
        withUnsafeBytes(of: &value) { copyIn($0.baseAddress!, count: 4, at: position) }
    }

    /// Copies `count` bytes into the ring at `position`, wrapping at the end of the storage.
    private func copyIn(_ source: UnsafeRawPointer, count: Int, at position: Int) {
        let start = position & mask
        let first = min(count, capacity - start)
        (bytes + start).copyMemory(from: source, byteCount: first)
        if count > first { bytes.copyMemory(from: source + first, byteCount: count - first) }
    }

    private func copyOut(_ destination: UnsafeMutableRawPointer, count: Int, at position: Int) {
        let start = position & mask
        let first = min(count, capacity - start)
        destination.copyMemory(from: bytes + start, byteCount: first)
        if count > first { (destination + first).copyMemory(from: bytes, byteCount: count - first) }
    }
}

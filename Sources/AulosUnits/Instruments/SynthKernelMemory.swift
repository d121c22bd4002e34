/// Every block of memory a synth kernel holds, with one owner: blocks are made through it at initialize and
/// freed all together by `release()`, so no list of `deallocate` calls has to be kept in step with the
/// allocations (a forgotten one was a leak, a doubled one a crash).
///
/// Each block starts with a header holding the block made before it; the arena keeps the newest, and
/// `release()` walks the chain back. Only plain (`BitwiseCopyable`) values live here, so nothing needs
/// deinitializing.
///
/// Threads: blocks are made and freed on the control thread (the kernel's initialize and teardown); the
/// render thread only reads and writes the values in them. A value handle (the kernel must be copyable to be
/// a unit's kernel): the kernel that made it is its one owner and the only caller of `release()`.
struct SynthKernelMemory {
    /// The newest block's start (nil: none yet).
    private let newest: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    /// Room in front of every block for the link to the block before, keeping the values 64-byte aligned
    /// (a cache line: the voice table and the SIMD scratch start on one).
    private static var header: Int { 64 }

    init() {
        newest = .allocate(capacity: 1)
        newest.initialize(to: nil)
    }

    /// A block of `count` values (at least one is made), each `value`.
    func make<Value: BitwiseCopyable>(_ count: Int, _ value: Value) -> UnsafeMutablePointer<Value> {
        let values = block(Value.self, count: count)
        values.initialize(repeating: value, count: max(1, count))
        return values
    }

    /// A block holding `values` (at least one value is made: an empty array leaves it uninitialized).
    func make<Value: BitwiseCopyable>(copying values: [Value]) -> UnsafeMutablePointer<Value> {
        let block = block(Value.self, count: values.count)
        values.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { block.initialize(from: base, count: source.count) }
        }
        return block
    }

    private func block<Value>(_ type: Value.Type, count: Int) -> UnsafeMutablePointer<Value> {
        precondition(MemoryLayout<Value>.alignment <= Self.header)
        let bytes = Self.header + MemoryLayout<Value>.stride * max(1, count)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: Self.header)
        raw.storeBytes(of: newest.pointee, as: UnsafeMutableRawPointer?.self)
        newest.pointee = raw
        return (raw + Self.header).bindMemory(to: Value.self, capacity: max(1, count))
    }

    /// Frees every block made here, and the arena itself. The kernel's teardown, once.
    func release() {
        var next = newest.pointee
        while let block = next {
            next = block.load(as: UnsafeMutableRawPointer?.self)
            block.deallocate()
        }
        newest.deallocate()
    }
}

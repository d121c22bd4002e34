import AulosDSP

/// Where the frame loop of a voice group (`renderGroupFrames`) takes its two oscillators' samples from, four
/// lanes at a time: either both saws read from the band-limited saw table inside the loop (the four lanes'
/// phases step together and one interpolation serves all four, instead of a scalar pass per lane through
/// scratch), or samples already filled into lane-interleaved scratch (any other waveform; frame i of lane l
/// at 4·i + l). A saw lane reads exactly what `Wavetable.sample(band:phase:)` would (the same index, fraction
/// and arithmetic), so the samples are the same to the bit. One type with a flag, not a protocol, so the
/// render-path checker sees concrete code; the flag does not change within a block.
///
/// Threads: render thread (a value made and used within one block).
struct GroupOscillators {
    typealias Tables = (
        UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>,
        UnsafeMutablePointer<Float>
    )

    /// True: both oscillators read the saw table; false: both come from `filled1`/`filled2`.
    let readsTables: Bool
    var phase1 = SIMD4<UInt32>()
    var phase2 = SIMD4<UInt32>()
    var step1 = SIMD4<UInt32>()
    var step2 = SIMD4<UInt32>()
    /// Each lane's band of the table, for each oscillator (table reading only).
    var first: Tables
    var second: Tables
    /// The filled scratch (filled samples only).
    let filled1: UnsafeMutablePointer<Float>
    let filled2: UnsafeMutablePointer<Float>

    /// Samples filled into lane-interleaved scratch beforehand.
    @inline(__always) @_noAllocation @_noLocks
    init(filled first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>) {
        readsTables = false
        filled1 = first
        filled2 = second
        self.first = (first, first, first, first)
        self.second = self.first
    }

    /// Both oscillators of four voices read from `table` (the saw) at the voices' phases and bands.
    @inline(__always) @_noAllocation @_noLocks
    init(
        table: Wavetable, scratch: UnsafeMutablePointer<Float>, _ v0: UnsafeMutablePointer<SynthVoice>,
        _ v1: UnsafeMutablePointer<SynthVoice>, _ v2: UnsafeMutablePointer<SynthVoice>,
        _ v3: UnsafeMutablePointer<SynthVoice>
    ) {
        readsTables = true
        filled1 = scratch
        filled2 = scratch
        phase1 = SIMD4(v0.pointee.phase1, v1.pointee.phase1, v2.pointee.phase1, v3.pointee.phase1)
        phase2 = SIMD4(v0.pointee.phase2, v1.pointee.phase2, v2.pointee.phase2, v3.pointee.phase2)
        step1 = SIMD4(v0.pointee.increment1, v1.pointee.increment1, v2.pointee.increment1, v3.pointee.increment1)
        step2 = SIMD4(v0.pointee.increment2, v1.pointee.increment2, v2.pointee.increment2, v3.pointee.increment2)
        let base = table.samples
        let stride = table.stride
        first = (
            base + v0.pointee.band1 &* stride, base + v1.pointee.band1 &* stride, base + v2.pointee.band1 &* stride,
            base + v3.pointee.band1 &* stride
        )
        second = (
            base + v0.pointee.band2 &* stride, base + v1.pointee.band2 &* stride, base + v2.pointee.band2 &* stride,
            base + v3.pointee.band2 &* stride
        )
    }

    /// Where the phases got to, back into the voices (table reading only).
    @inline(__always) @_noAllocation @_noLocks
    func storePhases(
        _ v0: UnsafeMutablePointer<SynthVoice>, _ v1: UnsafeMutablePointer<SynthVoice>,
        _ v2: UnsafeMutablePointer<SynthVoice>, _ v3: UnsafeMutablePointer<SynthVoice>
    ) {
        (v0.pointee.phase1, v1.pointee.phase1, v2.pointee.phase1, v3.pointee.phase1) =
            (phase1[0], phase1[1], phase1[2], phase1[3])
        (v0.pointee.phase2, v1.pointee.phase2, v2.pointee.phase2, v3.pointee.phase2) =
            (phase2[0], phase2[1], phase2[2], phase2[3])
    }

    /// Both oscillators' samples of the next frame, read from the tables, one lane per voice.
    @inline(__always) @_noAllocation @_noLocks
    mutating func nextFromTables() -> (SIMD4<Float>, SIMD4<Float>) {
        let samples = (Self.read(first, phase1), Self.read(second, phase2))
        phase1 &+= step1
        phase2 &+= step2
        return samples
    }

    /// Both oscillators' samples of frame `frame` of the block, from the filled scratch.
    @inline(__always) @_noAllocation @_noLocks
    func nextFilled(_ frame: Int) -> (SIMD4<Float>, SIMD4<Float>) {
        (
            UnsafeRawPointer(filled1 + 4 &* frame).loadUnaligned(as: SIMD4<Float>.self),
            UnsafeRawPointer(filled2 + 4 &* frame).loadUnaligned(as: SIMD4<Float>.self)
        )
    }

    /// Four linearly interpolated samples at their phases, each from its table (four voices' bands here; one
    /// table four frames apart in a rich voice's stack): the index is the top 11 bits, the fraction the other
    /// 21 (as `Wavetable.sample(band:phase:)`).
    @inline(__always) @_noAllocation @_noLocks
    static func read(_ tables: Tables, _ phase: SIMD4<UInt32>) -> SIMD4<Float> {
        let index = phase &>> 21
        let fraction = SIMD4<Float>(phase & 0x1F_FFFF) * (1 / 2_097_152)
        let i0 = Int(index[0])
        let i1 = Int(index[1])
        let i2 = Int(index[2])
        let i3 = Int(index[3])
        let low = SIMD4(tables.0[i0], tables.1[i1], tables.2[i2], tables.3[i3])
        let high = SIMD4(tables.0[i0 &+ 1], tables.1[i1 &+ 1], tables.2[i2 &+ 1], tables.3[i3 &+ 1])
        return low + (high - low) * fraction
    }
}

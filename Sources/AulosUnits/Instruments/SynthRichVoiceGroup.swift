import AulosDSP

/// The tail of four rich voices of one patch side by side in SIMD lanes — mix, the stereo filter pair,
/// envelopes and gains — loaded from the voices before a block and stored back after it. Only voices whose
/// tail is plain go here (`OscillatorSynthKernel.rendersInLanes`: no ring, sub, drive or second filter, not
/// fading; their stacks without sync or FM): each lane then computes exactly what `renderRichVoice`'s tail
/// would, and the four lanes are summed into the output per frame, as `VoiceGroupFrames` sums plain voices.
///
/// Threads: render thread (a value made and used within one block).
struct RichVoiceGroupFrames {
    /// Everything but the right-hand filter, as four plain voices have it (`filter` is the left one).
    var lanes: VoiceGroupFrames
    var filterRight: StateVariableFilterLanes

    @inline(__always) @_noAllocation @_noLocks
    init(
        _ v0: UnsafeMutablePointer<SynthVoice>, _ v1: UnsafeMutablePointer<SynthVoice>,
        _ v2: UnsafeMutablePointer<SynthVoice>, _ v3: UnsafeMutablePointer<SynthVoice>, mix: SIMD4<Float>, mode: Int,
        ampShape: EnvelopeShape, filterShape: EnvelopeShape
    ) {
        lanes = VoiceGroupFrames(v0, v1, v2, v3, mix: mix, mode: mode, ampShape: ampShape, filterShape: filterShape)
        filterRight = StateVariableFilterLanes(
            v0.pointee.rich.filterRight, v1.pointee.rich.filterRight, v2.pointee.rich.filterRight,
            v3.pointee.rich.filterRight)
    }

    /// Frames 0..<count: each lane's osc 1 and osc 2 (left, right) from its own block of `stacks` (lane l's
    /// four rows of 16 frames at 64·l: osc 1 left, right, osc 2 left, right), mixed, filtered, enveloped
    /// (`held`: both envelopes known to be held) and panned, the four lanes summed into the output. The loop
    /// runs on locals (through `self` every access went to memory).
    @inline(__always) @_noAllocation @_noLocks
    mutating func render(
        count: Int, _ stacks: UnsafeMutablePointer<Float>, held: Bool, _ outLeft: UnsafeMutablePointer<Float>,
        _ outRight: UnsafeMutablePointer<Float>
    ) {
        var (filterLeft, filterRight) = (lanes.filter, self.filterRight)
        var (amp, filterEnvelope) = (lanes.amp, lanes.filterEnvelope)
        var (gainLeft, gainRight) = (lanes.gainLeft, lanes.gainRight)
        let (stepLeft, stepRight, mix, mode) = (lanes.stepLeft, lanes.stepRight, lanes.mix, lanes.mode)
        let (ampShape, filterShape) = (lanes.ampShape, lanes.filterShape)
        let (ampHeld, filterHeld) = (held || lanes.ampHeld, held || lanes.filterHeld)
        for i in 0..<count {
            let osc1Left = SIMD4(stacks[i], stacks[64 &+ i], stacks[128 &+ i], stacks[192 &+ i])
            let osc1Right = SIMD4(stacks[16 &+ i], stacks[80 &+ i], stacks[144 &+ i], stacks[208 &+ i])
            let osc2Left = SIMD4(stacks[32 &+ i], stacks[96 &+ i], stacks[160 &+ i], stacks[224 &+ i])
            let osc2Right = SIMD4(stacks[48 &+ i], stacks[112 &+ i], stacks[176 &+ i], stacks[240 &+ i])
            let filteredLeft = filterLeft.process(osc1Left + (osc2Left - osc1Left) * mix, mode: mode)
            let filteredRight = filterRight.process(osc1Right + (osc2Right - osc1Right) * mix, mode: mode)
            if !filterHeld { _ = filterEnvelope.next(filterShape) }
            let level = ampHeld ? amp.level : amp.next(ampShape)
            gainLeft += stepLeft
            gainRight += stepRight
            outLeft[i] += (filteredLeft * level * gainLeft).sum()
            outRight[i] += (filteredRight * level * gainRight).sum()
        }
        (lanes.filter, self.filterRight) = (filterLeft, filterRight)
        (lanes.amp, lanes.filterEnvelope) = (amp, filterEnvelope)
        (lanes.gainLeft, lanes.gainRight) = (gainLeft, gainRight)
    }

    /// Lane `lane` back into its voice.
    @inline(__always) @_noAllocation @_noLocks
    func store(lane: Int, into voice: UnsafeMutablePointer<SynthVoice>) {
        lanes.store(lane: lane, into: voice)
        filterRight.store(lane: lane, into: &voice.pointee.rich.filterRight)
    }
}

extension OscillatorSynthKernel {
    /// Whether a rich voice's block can be rendered in a lane of `renderRichVoiceGroup`: its stacks run free
    /// (no sync, no FM: filled copy by copy) and its tail is mix, filter, envelopes and gains only.
    @inline(__always) @_noAllocation @_noLocks
    func rendersInLanes(_ voice: UnsafeMutablePointer<SynthVoice>) -> Bool {
        // Field by field through the pointer: a `RichVoice` is large, and copying it out cost more than the test.
        !voice.pointee.fading && !voice.pointee.rich.sync && voice.pointee.rich.fm == 0
            && !(voice.pointee.rich.ring > 0) && !(voice.pointee.rich.subLevel > 0)
            && !(voice.pointee.rich.driveGain > 1) && !voice.pointee.rich.routing.isOn
    }

    /// Renders frames [from, to) of four rich voices of one patch into one output (each `rendersInLanes`):
    /// every voice's stacks filled into its own block of `richGroupScratch`, then the four tails side by side
    /// in SIMD lanes (`RichVoiceGroupFrames`). Lane state is written back; a voice whose envelope ends stays
    /// active until the next tick (`retireFinishedVoices`), as a plain voice in a lane does.
    @_noAllocation @_noLocks
    func renderRichVoiceGroup(
        _ lanes: UnsafeMutablePointer<Int32>, from: Int, to: Int, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>
    ) {
        let v0 = voices + Int(lanes[0])
        let v1 = voices + Int(lanes[1])
        let v2 = voices + Int(lanes[2])
        let v3 = voices + Int(lanes[3])
        let c = patch(Int(v0.pointee.channel))
        let count = to - from
        for lane in 0..<4 {
            // 64 floats a lane: four rows of one control tick (16 frames, spelled out as in `renderRichVoice`).
            fillRichStacks(voices + Int(lanes[lane]), c, count: count, into: richGroupScratch + 64 &* lane)
        }
        var group = RichVoiceGroupFrames(
            v0, v1, v2, v3, mix: laneMix(lanes, c), mode: c.pointee.filterMode, ampShape: c.pointee.ampShape,
            filterShape: c.pointee.filterShape)
        let (outLeft, outRight) = (left + from, right + from)
        // `held` is a constant at each call, so each loop is compiled for its case.
        if group.lanes.ampHeld && group.lanes.filterHeld {
            group.render(count: count, richGroupScratch, held: true, outLeft, outRight)
        } else {
            group.render(count: count, richGroupScratch, held: false, outLeft, outRight)
        }
        for lane in 0..<4 { group.store(lane: lane, into: voices + Int(lanes[lane])) }
    }

    /// A free-running rich voice's two stacks for `count` frames into `block` (osc 1 left, right, osc 2 left,
    /// right at 0, 16, 32, 48), each copy a tight loop over the block with its waveform chosen once; the
    /// phases and noise advance in the voice.
    @inline(__always) @_noAllocation @_noLocks
    func fillRichStacks(
        _ voice: UnsafeMutablePointer<SynthVoice>, _ c: UnsafeMutablePointer<SynthControls>, count: Int,
        into block: UnsafeMutablePointer<Float>
    ) {
        let (osc1Left, osc1Right, osc2Left, osc2Right) = (block, block + 16, block + 32, block + 48)
        osc1Left.update(repeating: 0, count: count)
        osc1Right.update(repeating: 0, count: count)
        osc2Left.update(repeating: 0, count: count)
        osc2Right.update(repeating: 0, count: count)
        let width = pulseWidthPhase(voice, c)
        let morph = (voice.pointee.morphFrame, voice.pointee.morphFraction)
        let (wave1, wave2) = (c.pointee.wave1, c.pointee.wave2)
        let (band1, band2) = (voice.pointee.rich.band1, voice.pointee.rich.band2)
        for copy in 0..<voice.pointee.rich.count1 {
            fillStack(
                left: osc1Left, right: osc1Right, count: count, wave: wave1, band: band1,
                phase: &voice.pointee.rich.phases1[copy], increment: voice.pointee.rich.increments1[copy],
                gains: (voice.pointee.rich.left1[copy], voice.pointee.rich.right1[copy]),
                width: width, noise: &voice.pointee.noise, morph: morph)
        }
        for copy in 0..<voice.pointee.rich.count2 {
            fillStack(
                left: osc2Left, right: osc2Right, count: count, wave: wave2, band: band2,
                phase: &voice.pointee.rich.phases2[copy], increment: voice.pointee.rich.increments2[copy],
                gains: (voice.pointee.rich.left2[copy], voice.pointee.rich.right2[copy]),
                width: width, noise: &voice.pointee.noise2, morph: morph)
        }
    }
}

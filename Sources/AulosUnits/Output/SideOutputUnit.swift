import AulosCore

/// Aulos's Side Output (`aufc/side/Auls`): passes its input through unchanged and hands every slice it
/// passes to a render callback as well — a part's own output beside the mix (a JACK client's per-part
/// ports). The callback runs on the render thread, inside the pull, with the slice's time stamp, and must
/// follow the render thread's rules.
///
/// Threads: control side as for every unit (set `callback` before initialize); the render side is
/// `SideOutputKernel`.
public final class SideOutputUnit: AudioUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(
        type: .formatConverter, subtype: "side", manufacturer: .aulos)
    public static let component = Component(componentDescription, name: "Aulos: Side Output") { SideOutputUnit() }

    /// Where each slice also goes; nil: a plain pass-through.
    public var callback: RenderCallbackStruct?

    public init() {
        super.init(description: Self.componentDescription, name: "Aulos: Side Output", inputs: 1, outputs: 1)
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        UnitKernel.make(SideOutputKernel(side: callback), render: SideOutputKernel.render)
    }
}

/// The side output's render side: pull the input into the output buffers, then show them to the callback.
struct SideOutputKernel {
    let side: RenderCallbackStruct?

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, bus, frameCount, ioData in
        state.assumingMemoryBound(to: SideOutputKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: frameCount, ioData: ioData)
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>,
        timeStamp: UnsafePointer<AudioTimeStamp>, frameCount: UInt32, ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        ioData.pointee.setFrameCount(frameCount, bytesPerFrame: 4)
        let status = RenderInputs.pull(
            inputs, bus: 0, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: ioData)
        if let side {
            let callback = side.callback
            _ = _unsafePerformance { callback(side.refCon, flags, timeStamp, 0, frameCount, ioData) }
        }
        return status
    }
}

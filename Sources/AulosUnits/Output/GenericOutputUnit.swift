import AulosCore

/// Core Audio's Generic Output unit (`auou/genr/appl`): an I/O unit attached to no hardware. The host pulls
/// it slice by slice; it pulls its input (the graph) in the canonical format and converts to whatever
/// format was set on its output scope (Float32/Int16/Int24/Int32, interleaved or not). The offline
/// renderer and every audio test are built on it.
///
/// Threads: control side as for every unit; `GenericOutputKernel` runs on whichever thread pulls.
public final class GenericOutputUnit: IOUnit, @unchecked Sendable {
    public static let componentDescription = ComponentDescription(type: .output, subtype: .genericOutput, manufacturer: .apple)

    /// Until the host sets the output-scope format, it follows the input (the graph's format): a graph
    /// whose format propagates in as mono 44.1 kHz renders mono 44.1 kHz without further configuration.
    private var clientFormatIsSet = false

    public init() {
        super.init(description: Self.componentDescription, name: "Apple: AUGenericOutput", hasInputElement: false)
    }

    /// The input side is the graph's processing format; the output side may be any supported PCM layout with
    /// the same channel count and rate (checked at initialize, when both are known).
    public override func validateFormat(_ format: StreamFormat, scope: Scope, element: Element) throws(AudioUnitError) {
        if scope == .output {
            try format.validate()
        } else {
            try super.validateFormat(format, scope: scope, element: element)
        }
    }

    public override func customSetProperty(_ id: PropertyID, scope: Scope, element: Element, value: Any) throws(AudioUnitError) -> Bool {
        if scope == .output && (id == .streamFormat || id == .sampleRate) { clientFormatIsSet = true }
        return try super.customSetProperty(id, scope: scope, element: element, value: value)
    }

    public override func makeKernel() throws(AudioUnitError) -> UnitKernel {
        let input = inputFormat(0)
        if !clientFormatIsSet && outputFormat(0) != input {
            // Follows the input's format (sample rate included) until the host sets one.
            try set(.streamFormat, input, scope: .output)
            clientFormatIsSet = false
        }
        return try ConvertingPullKernel.make(for: self)
    }
}

/// Render side shared by the Generic Output and Format Converter units: pull input bus 0, convert into the
/// caller's buffers. When the formats are identical it pulls straight into the caller's buffers (no copy).
///
/// Threads: render thread only. Holds no class references.
package struct ConvertingPullKernel {
    let conversion: FormatConversion
    let inputBuffers: UnsafeMutablePointer<AudioBufferList>
    let inputBytesPerFrame: UInt32
    let scratch: UnsafeMutablePointer<Float>

    /// Builds the kernel for `unit`'s input 0 → output 0 formats, its buffers kept alive by the unit. Different
    /// sample rates get the resampling kernel.
    package static func make(for unit: AudioUnit) throws(AudioUnitError) -> UnitKernel {
        let input = unit.inputFormat(0)
        if input.sampleRate != unit.outputFormat(0).sampleRate {
            return try ResamplingPullKernel.make(for: unit)
        }
        let conversion = try FormatConversion(from: input, to: unit.outputFormat(0))
        let frames = unit.maximumFramesPerSlice
        let storage = AudioBufferListStorage(format: input, maximumFrames: frames)
        let scratch = AudioBufferListStorage(format: .canonical(channels: 1, sampleRate: input.sampleRate), maximumFrames: 2 * frames)
        unit.retainForKernel(storage)
        unit.retainForKernel(scratch)
        let kernel = ConvertingPullKernel(
            conversion: conversion, inputBuffers: storage.list, inputBytesPerFrame: input.bytesPerFrame,
            scratch: scratch.list.pointee.floatChannel(0))
        return UnitKernel.make(kernel, render: render)
    }

    static let render: KernelRenderFunction = { state, inputs, flags, timeStamp, bus, frameCount, ioData in
        state.assumingMemoryBound(to: ConvertingPullKernel.self).pointee
            .render(inputs: inputs, flags: flags, timeStamp: timeStamp, frameCount: frameCount, ioData: ioData)
    }

    @_noAllocation @_noLocks
    func render(
        inputs: UnsafeRawPointer, flags: UnsafeMutablePointer<RenderActionFlags>, timeStamp: UnsafePointer<AudioTimeStamp>,
        frameCount: UInt32, ioData: UnsafeMutablePointer<AudioBufferList>
    ) -> AulosStatus {
        if conversion.isIdentity {
            ioData.pointee.setFrameCount(frameCount, bytesPerFrame: inputBytesPerFrame)
            return RenderInputs.pull(inputs, bus: 0, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: ioData)
        }
        inputBuffers.pointee.setFrameCount(frameCount, bytesPerFrame: inputBytesPerFrame)
        let status = RenderInputs.pull(inputs, bus: 0, flags: flags, timeStamp: timeStamp, frameCount: frameCount, into: inputBuffers)
        conversion.convert(inputBuffers, into: ioData, frameCount: Int(frameCount), scratch: scratch)
        return status
    }
}

import AulosCore
import AulosTestSupport
import AulosUnits
import Testing

@Suite struct UnitLifecycleTests {
    @Test func initializeTwiceIsAnError() throws {
        let unit = FormatConverterUnit()
        try unit.initialize()
        expectError(.initialized) { try unit.initialize() }
        #expect(unit.state == .initialized)
    }

    @Test func uninitializeWhenUninitializedIsAnError() {
        expectError(.uninitialized) { try FormatConverterUnit().uninitialize() }
    }

    @Test func renderBeforeInitializeIsAnError() {
        let unit = ToneGeneratorUnit()
        expectError(.uninitialized) { _ = try renderUnit(unit, frames: 64, buffers: RenderBuffers()) }
    }

    @Test func startBeforeInitializeIsAnError() {
        expectError(.uninitialized) { try GenericOutputUnit().start() }
    }

    @Test func startTwiceIsAnErrorAndStopIsIdempotent() throws {
        let io = GenericOutputUnit()
        try io.initialize()
        try io.start()
        #expect(io.isRunning)
        #expect(try io.get(.isRunning) == 1)
        expectError(.cannotDoInCurrentContext) { try io.start() }
        try io.stop()
        try io.stop()
        #expect(!io.isRunning)
    }

    @Test func uninitializeWhileRunningIsRefused() throws {
        let io = GenericOutputUnit()
        try io.initialize()
        try io.start()
        expectError(.cannotDoInCurrentContext) { try io.uninitialize() }
        try io.stop()
        try io.uninitialize()
        #expect(io.state == .uninitialized)
    }

    @Test func fullLifecycleCanRepeat() throws {
        let tone = ToneGeneratorUnit()
        let buffers = RenderBuffers()
        for _ in 0..<3 {
            try tone.initialize()
            let out = try renderUnit(tone, frames: 256, buffers: buffers)
            #expect(out.contains { $0 != 0 })
            try tone.uninitialize()
        }
    }

    @Test func disposedUnitRefusesEverythingWithoutCrashing() throws {
        let io = GenericOutputUnit()
        try io.initialize()
        try io.start()
        try io.dispose()
        #expect(io.state == .disposed)
        #expect(!io.isRunning)
        expectError(.instanceInvalidated) { try io.initialize() }
        expectError(.instanceInvalidated) { try io.uninitialize() }
        expectError(.instanceInvalidated) { try io.start() }
        expectError(.instanceInvalidated) { try io.dispose() }
        expectError(.instanceInvalidated) { _ = try io.get(.maximumFramesPerSlice) }
        expectError(.instanceInvalidated) { try io.set(.maximumFramesPerSlice, 512) }
        expectError(.instanceInvalidated) { _ = try io.propertyInfo(.streamFormat, scope: .input) }
        expectError(.instanceInvalidated) { _ = try renderUnit(io, frames: 64, buffers: RenderBuffers()) }
        let tone = ToneGeneratorUnit()
        try tone.dispose()
        expectError(.instanceInvalidated) { try tone.setParameter(ToneGeneratorUnit.Parameter.level, value: 0.5) }
        expectError(.instanceInvalidated) { _ = try tone.getParameter(ToneGeneratorUnit.Parameter.level) }
    }

    @Test func renderingMoreThanMaximumFramesPerSliceFails() throws {
        let tone = ToneGeneratorUnit()
        try tone.set(.maximumFramesPerSlice, 256)
        try tone.initialize()
        expectError(.tooManyFramesToProcess) { _ = try renderUnit(tone, frames: 257, buffers: RenderBuffers()) }
        _ = try renderUnit(tone, frames: 256, buffers: RenderBuffers())
    }

    @Test func renderingANonexistentBusFails() throws {
        let tone = ToneGeneratorUnit()
        try tone.initialize()
        var flags = RenderActionFlags(rawValue: 0)
        let buffers = RenderBuffers()
        buffers.prepare(64)
        expectError(.invalidElement) {
            try tone.render(
                flags: &flags, timeStamp: AudioTimeStamp(sampleTime: 0), bus: 1, frameCount: 64, ioData: buffers.list)
        }
    }

    @Test func silentOutputIsFlaggedAndZeroed() throws {
        let tone = ToneGeneratorUnit()
        try tone.setParameter(ToneGeneratorUnit.Parameter.level, value: 0)
        try tone.initialize()
        let buffers = RenderBuffers()
        buffers.prepare(128)
        buffers.list.pointee.floatChannel(1)[5] = 3  // garbage that must be overwritten
        var flags = RenderActionFlags(rawValue: 0)
        try tone.render(flags: &flags, timeStamp: AudioTimeStamp(sampleTime: 0), frameCount: 128, ioData: buffers.list)
        #expect(flags.contains(.outputIsSilence))
        #expect(buffers.channel(0, frames: 128).allSatisfy { $0 == 0 })
        #expect(buffers.channel(1, frames: 128).allSatisfy { $0 == 0 })
    }
}

@Suite struct PropertyTests {
    @Test func maximumFramesPerSliceDefaultsTo1024AndIsSettableOnlyWhileUninitialized() throws {
        let unit = FormatConverterUnit()
        #expect(try unit.get(.maximumFramesPerSlice) == 1024)
        try unit.set(.maximumFramesPerSlice, 4096)
        #expect(try unit.get(.maximumFramesPerSlice) == 4096)
        try unit.initialize()
        expectError(.initialized) { try unit.set(.maximumFramesPerSlice, 512) }
        expectError(.initialized) {
            try unit.set(.streamFormat, .canonical(channels: 1, sampleRate: 48_000), scope: .input)
        }
        #expect(try unit.get(.maximumFramesPerSlice) == 4096)
        #expect(try unit.propertyInfo(.maximumFramesPerSlice) == PropertyInfo(dataSize: 4, isWritable: true))
    }

    @Test func wrongScopeElementPropertyAndValueEachHaveTheirOwnError() {
        let unit = FormatConverterUnit()
        expectError(.invalidScope) { try unit.set(.maximumFramesPerSlice, 512, scope: .input) }
        expectError(.invalidElement) { try unit.set(.maximumFramesPerSlice, 512, scope: .global, element: 1) }
        expectError(.invalidElement) { _ = try unit.get(.streamFormat, scope: .input, element: 1) }
        expectError(.invalidScope) { _ = try unit.get(.streamFormat, scope: .global) }
        expectError(.invalidProperty) {
            _ = try unit.getProperty(PropertyID(rawValue: 9999), scope: .global, element: 0)
        }
        expectError(.invalidProperty) { _ = try unit.get(.factoryPresets) }
        expectError(.invalidProperty) { _ = try unit.get(.enableIO, scope: .output) }
        expectError(.invalidPropertyValue) { try unit.set(.maximumFramesPerSlice, 0) }
        expectError(.invalidPropertyValue) {
            try unit.setProperty(.maximumFramesPerSlice, scope: .global, element: 0, value: "1024")
        }
        expectError(.propertyNotWritable) { try unit.set(.lastRenderError, 0) }
        expectError(.propertyNotWritable) { try unit.set(.elementCount, 2, scope: .input) }
        expectError(.invalidElement) { _ = try unit.get(.elementCount, scope: .input, element: 1) }
        expectError(.propertyNotWritable) { try unit.set(.latency, 0.1) }
    }

    @Test func formatsAreValidatedPerUnit() throws {
        let tone = ToneGeneratorUnit()
        let s16 = StreamFormat(sample: .int16, channels: 2, sampleRate: 48_000, interleaved: true)
        expectError(.formatNotSupported) { try tone.set(.streamFormat, s16, scope: .output) }
        var broken = StreamFormat.canonical(channels: 2, sampleRate: 48_000)
        broken.bytesPerFrame = 3
        expectError(.formatNotSupported) { try tone.set(.streamFormat, broken, scope: .output) }
        // Converters and Generic Output accept any supported PCM layout on the client side.
        try FormatConverterUnit().set(.streamFormat, s16, scope: .output)
        try GenericOutputUnit().set(.streamFormat, s16, scope: .output)
        expectError(.formatNotSupported) { try GenericOutputUnit().set(.streamFormat, s16, scope: .input) }
    }

    @Test func mismatchedConverterFormatsFailAtInitialize() throws {
        let converter = FormatConverterUnit()
        // Stereo → 3 channels is not a conversion it knows (equal counts or mono ↔ stereo only).
        try converter.set(.streamFormat, .canonical(channels: 3, sampleRate: 48_000), scope: .output)
        expectError(.formatNotSupported) { try converter.initialize() }
        #expect(converter.state == .uninitialized)
    }

    @Test func sampleRatePropertySetsOnlyTheRate() throws {
        let converter = FormatConverterUnit()
        try converter.set(.sampleRate, 44_100, scope: .output)
        let format = try converter.get(.streamFormat, scope: .output)
        #expect(format.sampleRate == 44_100)
        #expect(format.channelsPerFrame == 2 && format.isCanonical)
        expectError(.formatNotSupported) { try converter.set(.sampleRate, -1, scope: .output) }
    }

    @Test func enableIOLivesOnTheIOElements() throws {
        let io = GenericOutputUnit()
        #expect(try io.get(.enableIO, scope: .output, element: 0) == 1)
        expectError(.invalidElement) { _ = try io.get(.enableIO, scope: .input, element: 1) }
        expectError(.invalidScope) { _ = try io.get(.enableIO, scope: .global) }
        expectError(.invalidElement) { _ = try io.get(.enableIO, scope: .output, element: 1) }
        expectError(.invalidPropertyValue) { try io.set(.enableIO, 2, scope: .output) }
        try io.set(.enableIO, 0, scope: .output)
        #expect(!io.isOutputEnabled)
        try io.initialize()
        expectError(.initialized) { try io.set(.enableIO, 1, scope: .output) }
    }

    @Test func listenersHearSuccessfulChangesOnlyUntilRemoved() throws {
        let unit = FormatConverterUnit()
        var heard: [(PropertyID, Scope, Element)] = []
        let token = unit.addPropertyListener(.streamFormat) { _, id, scope, element in
            heard.append((id, scope, element))
        }
        unit.addPropertyListener(.maximumFramesPerSlice) { _, _, _, _ in
            heard.append((.maximumFramesPerSlice, .global, 99))
        }
        try unit.set(.streamFormat, .canonical(channels: 2, sampleRate: 44_100), scope: .output)
        expectError(.formatNotSupported) { try unit.set(.sampleRate, 0, scope: .input) }
        try unit.set(.sampleRate, 44_100, scope: .input)
        unit.removePropertyListener(token)
        try unit.set(.streamFormat, .canonical(channels: 2, sampleRate: 48_000), scope: .output)
        try unit.set(.maximumFramesPerSlice, 64)
        #expect(heard.count == 2)
        #expect(heard[0].0 == .streamFormat && heard[0].1 == .output)
        #expect(heard[1].0 == .maximumFramesPerSlice && heard[1].2 == 99)
    }

    @Test func directConnectionsAndCallbacksRenderWithoutAGraph() throws {
        let tone = ToneGeneratorUnit()
        let converter = FormatConverterUnit()
        try converter.set(
            .makeConnection, AudioUnitConnection(source: tone, sourceOutput: 0, destinationInput: 0), scope: .input)
        expectError(.invalidPropertyValue) {
            try converter.set(
                .makeConnection, AudioUnitConnection(source: tone, sourceOutput: 0, destinationInput: 1), scope: .input)
        }
        try tone.initialize()
        try converter.initialize()
        let viaConverter = try renderUnit(converter, frames: 256, buffers: RenderBuffers())
        let reference = ToneGeneratorUnit()
        try reference.initialize()
        #expect(viaConverter == (try renderUnit(reference, frames: 256, buffers: RenderBuffers())))

        let io = GenericOutputUnit()
        try io.set(.setRenderCallback, RenderCallbackStruct(rampCallback()), scope: .input)
        try io.initialize()
        let ramp = try renderUnit(io, frames: 16, at: 995, buffers: RenderBuffers())
        #expect(ramp[0] == 0.995 && ramp[5] == 0 && ramp[6] == 0.001)
    }

    @Test func unconnectedInputRendersSilenceAndSaysSo() throws {
        let io = GenericOutputUnit()
        try io.initialize()
        expectError(.noConnection) { _ = try renderUnit(io, frames: 64, buffers: RenderBuffers()) }
        #expect(try io.get(.lastRenderError) == -10876)
    }
}

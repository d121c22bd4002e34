import CLV2Log
import CLilv

#if canImport(Glibc)
import Glibc
#endif

/// The host features one plugin instance is given, and the C memory behind them, alive as long as the
/// instance:
///
/// - `urid:map`, `urid:unmap` (shared by every instance, `LV2URIDMap.shared`);
/// - `options:options`: the sample rate, the block lengths (minimum 1, maximum and nominal the unit's
///   MaximumFramesPerSlice: the render passes any slice size up to that) and the atom sequence size;
/// - `buf-size:boundedBlockLength`: blocks never exceed the maximum;
/// - `worker:schedule` (`LV2Worker`), `log:log` (the C shim in CLV2Log);
/// - `state:makePath`, `state:mapPath`, `state:freePath`: files a plugin creates go under its own
///   directory in Aulos's LV2 state directory; `state:loadDefaultState` (the unit restores the plugin's
///   default state after instantiating it).
///
/// Threads: built and freed on the control thread; plugins call map/log/makePath from any of their
/// threads, schedule from `run()`.
final class LV2InstanceFeatures: @unchecked Sendable {
    /// The URIs of the features every instance gets (what `aulos units --lv2` checks plugins against).
    static let provided: Set<String> = [
        "http://lv2plug.in/ns/ext/urid#map", "http://lv2plug.in/ns/ext/urid#unmap",
        LV2URI.options, LV2URI.boundedBlockLength, LV2URI.workerSchedule, LV2URI.log,
        LV2URI.stateMakePath, LV2URI.stateMapPath, LV2URI.stateFreePath, LV2URI.stateLoadDefaultState,
    ]

    let worker = LV2Worker()
    let log: UnsafeMutablePointer<AulosLV2Log>
    /// The directory this instance's files go in (made on first use by makePath).
    let directory: String
    /// The plugin's name, for the crash report while it is freed.
    let pluginName: String
    /// The NULL-terminated feature list handed to instantiate (and to state calls).
    let list: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
    private var allocations: [UnsafeMutableRawPointer] = []
    /// The features' URI strings (strdup'd, so freed with free()).
    private var uriStrings: [UnsafeMutablePointer<CChar>] = []

    init(pluginName: String, sampleRate: Double, maximumFrames: Int, sequenceSize: Int, directory: String) {
        self.pluginName = pluginName
        self.directory = directory
        let map = LV2URIDMap.shared
        log = .allocate(capacity: 1)
        aulos_lv2_log_init(
            log, pluginName, map.map(LV2URI.logError), map.map(LV2URI.logWarning), map.map(LV2URI.logNote),
            map.map(LV2URI.logTrace))
        list = .allocate(capacity: 12)

        // Options: values first (they must stay put), then the option array ending in a zeroed entry.
        let rate = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        rate.initialize(to: Float(sampleRate))
        let lengths = UnsafeMutablePointer<Int32>.allocate(capacity: 4)
        lengths.initialize(from: [1, Int32(maximumFrames), Int32(maximumFrames), Int32(sequenceSize)], count: 4)
        let (floatType, intType) = (map.map(LV2URI.atomFloat), map.map(LV2URI.atomInt))
        func option(_ key: String, _ value: UnsafeRawPointer, type: UInt32) -> LV2_Options_Option {
            LV2_Options_Option(
                context: LV2_OPTIONS_INSTANCE, subject: 0, key: map.map(key), size: 4, type: type, value: value)
        }
        let options = UnsafeMutablePointer<LV2_Options_Option>.allocate(capacity: 6)
        options.initialize(
            from: [
                option(LV2URI.sampleRate, rate, type: floatType),
                option(LV2URI.minBlockLength, lengths, type: intType),
                option(LV2URI.maxBlockLength, lengths + 1, type: intType),
                option(LV2URI.nominalBlockLength, lengths + 2, type: intType),
                option(LV2URI.sequenceSize, lengths + 3, type: intType),
                LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: 0, size: 0, type: 0, value: nil),
            ], count: 6)
        allocations += [
            UnsafeMutableRawPointer(rate), UnsafeMutableRawPointer(lengths), UnsafeMutableRawPointer(options),
        ]

        let handle = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        let makePath = UnsafeMutablePointer<LV2_State_Make_Path>.allocate(capacity: 1)
        makePath.initialize(to: LV2_State_Make_Path(handle: handle, path: LV2InstanceFeatures.makePath))
        let mapPath = UnsafeMutablePointer<LV2_State_Map_Path>.allocate(capacity: 1)
        mapPath.initialize(
            to: LV2_State_Map_Path(
                handle: handle, abstract_path: LV2InstanceFeatures.abstractPath,
                absolute_path: LV2InstanceFeatures.absolutePath))
        let freePath = UnsafeMutablePointer<LV2_State_Free_Path>.allocate(capacity: 1)
        freePath.initialize(to: LV2_State_Free_Path(handle: handle, free_path: { _, path in free(path) }))
        allocations += [
            UnsafeMutableRawPointer(makePath), UnsafeMutableRawPointer(mapPath), UnsafeMutableRawPointer(freePath),
        ]

        let features: [(String, UnsafeMutableRawPointer?)] = [
            (LV2URI.options, UnsafeMutableRawPointer(options)),
            (LV2URI.boundedBlockLength, nil),
            (LV2URI.workerSchedule, UnsafeMutableRawPointer(worker.schedule)),
            (LV2URI.log, UnsafeMutableRawPointer(log)),
            (LV2URI.stateMakePath, UnsafeMutableRawPointer(makePath)),
            (LV2URI.stateMapPath, UnsafeMutableRawPointer(mapPath)),
            (LV2URI.stateFreePath, UnsafeMutableRawPointer(freePath)),
            (LV2URI.stateLoadDefaultState, nil),
        ]
        list[0] = UnsafePointer(map.mapFeature)
        list[1] = UnsafePointer(map.unmapFeature)
        for (index, (uri, data)) in features.enumerated() {
            let feature = UnsafeMutablePointer<LV2_Feature>.allocate(capacity: 1)
            let text = strdup(uri)!
            uriStrings.append(text)
            feature.initialize(to: LV2_Feature(URI: text, data: data))
            allocations.append(UnsafeMutableRawPointer(feature))
            list[2 + index] = UnsafePointer(feature)
        }
        list[2 + features.count] = nil
    }

    deinit {
        worker.stop()
        for pointer in allocations { pointer.deallocate() }
        for text in uriStrings { free(text) }
        log.deallocate()
        list.deallocate()
    }

    /// state:makePath: `directory/path`, its parent directories made; the plugin frees the result.
    private static let makePath:
        @convention(c) (LV2_State_Make_Path_Handle?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? = {
            handle, path in
            guard let handle, let path else { return nil }
            let features = Unmanaged<LV2InstanceFeatures>.fromOpaque(handle).takeUnretainedValue()
            let full = features.directory + "/" + String(cString: path)
            makeDirectories(String(full[..<(full.lastIndex(of: "/") ?? full.endIndex)]))
            return strdup(full)
        }

    /// state:mapPath: a path inside the instance's directory is saved relative to it; others as they are.
    private static let abstractPath:
        @convention(c) (LV2_State_Map_Path_Handle?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? = {
            handle, path in
            guard let handle, let path else { return nil }
            let directory = Unmanaged<LV2InstanceFeatures>.fromOpaque(handle).takeUnretainedValue().directory + "/"
            let absolute = String(cString: path)
            return strdup(absolute.hasPrefix(directory) ? String(absolute.dropFirst(directory.count)) : absolute)
        }

    private static let absolutePath:
        @convention(c) (LV2_State_Map_Path_Handle?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? = {
            handle, path in
            guard let handle, let path else { return nil }
            let directory = Unmanaged<LV2InstanceFeatures>.fromOpaque(handle).takeUnretainedValue().directory
            let abstract = String(cString: path)
            return strdup(abstract.hasPrefix("/") ? abstract : directory + "/" + abstract)
        }

    /// `mkdir -p`.
    static func makeDirectories(_ path: String) {
        var partial = ""
        for component in path.split(separator: "/") {
            partial += "/" + component
            mkdir(partial, 0o755)
        }
    }
}

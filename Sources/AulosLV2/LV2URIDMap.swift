import AulosCore
import CLilv

#if canImport(Glibc)
import Glibc
#endif

/// The host's `urid:map` and `urid:unmap` features: every URI a plugin or Aulos names gets one small
/// integer for the life of the process, the same for every plugin (LV2 requires one map per host).
///
/// Plugins map URIs while they are instantiated (control thread) and, some of them, from their worker
/// thread; the LV2 specification allows map to block, so a mutex guards the table. Aulos itself maps the
/// URIs its render path needs (atom:Sequence, midi:MidiEvent, …) before the audio starts, so the render
/// thread never calls it.
///
/// Threads: any (the table behind a mutex). The feature structs point at this object: it must outlive
/// every plugin instance given them (one per process, `shared`).
public final class LV2URIDMap: @unchecked Sendable {
    public static let shared = LV2URIDMap()

    private struct Table {
        var ids: [String: UInt32] = [:]
        var uris: [String] = []
    }
    private let table = Locked(Table())

    /// `LV2_URID_Map` and `LV2_URID_Unmap`, and the `LV2_Feature`s that carry them, at stable addresses.
    let mapData: UnsafeMutablePointer<LV2_URID_Map>
    let unmapData: UnsafeMutablePointer<LV2_URID_Unmap>
    public let mapFeature: UnsafeMutablePointer<LV2_Feature>
    public let unmapFeature: UnsafeMutablePointer<LV2_Feature>

    private init() {
        mapData = .allocate(capacity: 1)
        unmapData = .allocate(capacity: 1)
        mapFeature = .allocate(capacity: 1)
        unmapFeature = .allocate(capacity: 1)
        let handle = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        mapData.initialize(
            to: LV2_URID_Map(
                handle: handle,
                map: { handle, uri in
                    guard let handle, let uri else { return 0 }
                    return Unmanaged<LV2URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
                }))
        unmapData.initialize(
            to: LV2_URID_Unmap(
                handle: handle,
                unmap: { handle, id in
                    guard let handle else { return nil }
                    return Unmanaged<LV2URIDMap>.fromOpaque(handle).takeUnretainedValue().unmapCString(id)
                }))
        mapFeature.initialize(
            to: LV2_Feature(
                URI: Self.cString("http://lv2plug.in/ns/ext/urid#map"), data: UnsafeMutableRawPointer(mapData)))
        unmapFeature.initialize(
            to: LV2_Feature(
                URI: Self.cString("http://lv2plug.in/ns/ext/urid#unmap"), data: UnsafeMutableRawPointer(unmapData)))
    }

    /// The id of `uri` (1 and up; 0 is never an id).
    public func map(_ uri: String) -> UInt32 {
        table.withLock { table in
            if let id = table.ids[uri] { return id }
            table.uris.append(uri)
            let id = UInt32(table.uris.count)
            table.ids[uri] = id
            return id
        }
    }

    /// The URI of `id`, or nil for an id never given out.
    public func unmap(_ id: UInt32) -> String? {
        table.withLock { table in
            id >= 1 && Int(id) <= table.uris.count ? table.uris[Int(id) - 1] : nil
        }
    }

    /// C strings handed to plugins by unmap live as long as the process (the specification asks that they
    /// stay valid): one per id, made on first use.
    private let unmapped = Locked([UInt32: UnsafeMutablePointer<CChar>]())

    private func unmapCString(_ id: UInt32) -> UnsafePointer<CChar>? {
        guard let uri = unmap(id) else { return nil }
        return unmapped.withLock { strings in
            if let existing = strings[id] { return UnsafePointer(existing) }
            let copy = strdup(uri)!
            strings[id] = copy
            return UnsafePointer(copy)
        }
    }

    /// A C string that lives as long as the process (feature URIs).
    static func cString(_ text: String) -> UnsafePointer<CChar> { UnsafePointer(strdup(text)!) }
}

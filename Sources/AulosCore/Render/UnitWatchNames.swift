import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Unit names as C strings that live as long as the process, for the render thread's watch: the watchdog and
/// a crash report read the name of the unit a render thread is inside, possibly after the plan that named it
/// is gone, so the names are never freed. One copy per distinct name (a process builds few).
///
/// Threads: any (a lock guards the table; the render thread only reads pointers handed out earlier).
enum UnitWatchNames {
    private static let table = Mutex<[String: UnsafePointer<CChar>]>([:])

    static func interned(_ name: String) -> UnsafePointer<CChar> {
        table.withLock { names in
            if let known = names[name] { return known }
            let copy = UnsafePointer(strdup(name)!)
            names[name] = copy
            return copy
        }
    }
}

import Synchronization

/// A registered kind of audio unit (Core Audio's AudioComponent): what it is, what it is called, and how
/// to make one. Not an instance.
///
/// Threads: immutable; usable anywhere. `instantiate()` belongs on the control thread.
public struct Component: Sendable {
    /// Core Audio's AudioComponentGetDescription: the concrete description, never a search pattern.
    public let componentDescription: ComponentDescription
    /// Other descriptions that find it: Core Audio's own codes for a unit Aulos reimplements (Aulos's
    /// Generic Output is `auou/genr/Auls`, and `auou/genr/appl` finds it too), so code ported from Core
    /// Audio works unchanged.
    public let aliases: [ComponentDescription]
    /// "Manufacturer: Product", as Core Audio names components; the manufacturer is who wrote it.
    public let name: String
    /// 0xMMMMmmbb: major, minor, bug-fix.
    public let version: UInt32
    private let factory: @Sendable () -> AudioUnit

    public init(
        _ description: ComponentDescription, aliases: [ComponentDescription] = [], name: String,
        version: UInt32 = 0x0001_0000,
        factory: @escaping @Sendable () -> AudioUnit
    ) {
        self.componentDescription = description
        self.aliases = aliases
        self.name = name
        self.version = version
        self.factory = factory
    }

    /// Core Audio's AudioComponentInstanceNew.
    public func instantiate() -> AudioUnit { factory() }

    public var versionString: String {
        "\(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)"
    }

    /// Whether a search `pattern` finds this component: by its description or by an alias.
    public func matches(_ pattern: ComponentDescription) -> Bool {
        pattern.matches(componentDescription) || aliases.contains { pattern.matches($0) }
    }

    /// Registration order never matters: components sort by type, subtype, manufacturer, then name.
    static func precedes(_ a: Component, _ b: Component) -> Bool {
        (a.componentDescription.type, a.componentDescription.subtype, a.componentDescription.manufacturer, a.name)
            < (b.componentDescription.type, b.componentDescription.subtype, b.componentDescription.manufacturer, b.name)
    }
}

/// The components a process knows about, searched with Core Audio's wildcard rules.
///
/// Threads: any; registration and lookup are serialized by a mutex (control-side only, never used on the
/// render thread).
public final class ComponentRegistry: Sendable {
    private let components = Mutex<[Component]>([])
    private let observers = Mutex<[@Sendable () -> Void]>([])

    public init() {}

    /// Adds a component; replaces one with the same full description. Observers are told afterwards
    /// (Core Audio's AudioComponentRegistrationsChangedNotification).
    public func register(_ component: Component) {
        components.withLock { list in
            list.removeAll { $0.componentDescription == component.componentDescription }
            list.append(component)
            list.sort(by: Component.precedes)
        }
        for observer in observers.withLock({ $0 }) { observer() }
    }

    public func onRegistrationsChanged(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Every component, in the registry's deterministic order.
    public var all: [Component] { components.withLock { $0 } }

    /// Core Audio's AudioComponentFindNext: the first match after `previous` (or the first match when nil).
    public func findNext(after previous: Component?, matching pattern: ComponentDescription) -> Component? {
        let list = all
        var start = 0
        if let previous,
            let index = list.firstIndex(where: { $0.componentDescription == previous.componentDescription })
        {
            start = index + 1
        }
        return list[start...].first { $0.matches(pattern) }
    }

    /// Every match, in order.
    public func find(matching pattern: ComponentDescription) -> [Component] {
        all.filter { $0.matches(pattern) }
    }

    /// Instantiates the first match, or throws `componentNotFound`.
    public func instantiate(_ pattern: ComponentDescription) throws(AudioUnitError) -> AudioUnit {
        guard let component = findNext(after: nil, matching: pattern) else {
            throw AudioUnitError(.componentNotFound, "no audio unit matches \(pattern)")
        }
        return component.instantiate()
    }
}

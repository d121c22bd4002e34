import CAvahi
import Glibc

/// Advertises this box's network MIDI services over DNS-SD (mDNS) through avahi-daemon, so a Mac lists it
/// under Directory in Audio MIDI Setup by itself: `advertise(type:port:name:)` once per service
/// (`_apple-midi._udp` on the AppleMIDI control port, `_midi2._udp` for Network MIDI 2.0).
///
/// Never fatal, never blocking: Avahi runs on a thread of its own (`avahi_threaded_poll`), so neither the
/// audio nor the network thread waits for it. Without the daemon (or the D-Bus system bus) the client waits
/// for one to appear (AVAHI_CLIENT_NO_FAIL) and `onNotice` says once that the box is not advertised; a daemon
/// that goes away and comes back gets the services again. A name another host uses is replaced by Avahi's
/// alternative ("Aulos #2"), and the notice says so.
///
/// Threads: `advertise` and `stop` on the control thread, which takes the poll's lock; Avahi's thread runs the
/// callbacks with that lock held. Everything below is touched only under it. `onNotice` is called on either.
public final class AvahiAdvertiser: @unchecked Sendable {
    /// One service as asked for, and the name it is advertised under now (after collisions).
    /// Threads: under the poll's lock.
    private final class Entry {
        let type: String
        let port: UInt16
        let scope: AdvertisedScope
        var name: String
        var group: OpaquePointer?
        unowned let owner: AvahiAdvertiser

        init(type: String, port: UInt16, scope: AdvertisedScope, name: String, owner: AvahiAdvertiser) {
            self.type = type
            self.port = port
            self.scope = scope
            self.name = name
            self.owner = owner
        }

        var described: String { "'\(name)' (\(type) port \(port))" }
    }

    /// The most services one advertiser publishes (two are used; a bound, not a need).
    public static let maximumServices = 8

    /// Avahi's thread and its loop; nil once `stop` has freed them (so a second `stop`, as `deinit` makes after an
    /// explicit one, touches nothing freed).
    private var poll: OpaquePointer?
    private var client: OpaquePointer?
    private var entries: [Entry] = []
    private var stopped = false
    /// Whether "not advertised: avahi-daemon is not running" was said since the services were last published:
    /// said once, not at every retry.
    private var saidAbsent = false
    /// The timer that tries again to reach the bus when there was none (AvahiTimeout*, on Avahi's thread).
    private var retry: OpaquePointer?
    /// How long until a client is tried again when the D-Bus system bus was not there (ms).
    static let retryMilliseconds: UInt32 = 5000
    private let onNotice: @Sendable (String) -> Void

    /// Starts Avahi's thread and its client. `onNotice` gets one line per change: advertised, renamed, not
    /// advertised and why.
    public init(onNotice: @escaping @Sendable (String) -> Void) {
        self.onNotice = onNotice
        poll = avahi_threaded_poll_new()
        guard let poll else {
            onNotice("not advertised: Avahi's thread could not be made; peers can add this box by address")
            return
        }
        // Before the thread runs, so no lock yet: the callback may run inside avahi_client_new.
        connect()
        if avahi_threaded_poll_start(poll) < 0 {
            onNotice("not advertised: Avahi's thread could not start; peers can add this box by address")
        }
    }

    deinit { stop() }

    /// Advertises a service of `type` (`_apple-midi._udp`, `_midi2._udp`) on `port` under `name` (cut to a
    /// DNS label), where `scope` says (the interface and IP version its socket listens on). Returns false, saying
    /// why in a notice, for a type DNS-SD does not accept, a port of 0 or more than `maximumServices`.
    @discardableResult
    public func advertise(type: String, port: UInt16, name: String, scope: AdvertisedScope = .everywhere) -> Bool {
        guard DNSServiceName.isValidType(type), port != 0 else {
            onNotice("not advertised: '\(type)' port \(port) is not a service DNS-SD can advertise")
            return false
        }
        guard let poll else { return false }
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        guard !stopped, entries.count < Self.maximumServices else { return false }
        let entry = Entry(type: type, port: port, scope: scope, name: DNSServiceName.instanceName(name), owner: self)
        entries.append(entry)
        if let client, avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING { register(entry, on: client) }
        return true
    }

    /// The services' names as advertised now (Avahi's alternative after a collision), in the order asked.
    public var advertisedNames: [String] {
        guard let poll else { return [] }
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return entries.map(\.name)
    }

    /// Withdraws the services and ends Avahi's thread. Once: a second call finds no poll.
    public func stop() {
        guard let poll else { return }
        avahi_threaded_poll_lock(poll)
        stopped = true
        avahi_threaded_poll_unlock(poll)
        // The thread is stopped first, so no callback runs while the client is taken apart.
        avahi_threaded_poll_stop(poll)
        if let retry, let api = avahi_threaded_poll_get(poll) { api.pointee.timeout_free(retry) }
        retry = nil
        for entry in entries { forget(entry) }
        if let client { avahi_client_free(client) }
        client = nil
        avahi_threaded_poll_free(poll)
        self.poll = nil
    }

    // MARK: - Avahi's thread (under the lock)

    /// A client that waits for the daemon rather than failing without one.
    private func connect() {
        guard let poll else { return }
        var error: Int32 = 0
        let made = avahi_client_new(
            avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL,
            { client, state, raw in
                guard let raw, let client else { return }
                Unmanaged<AvahiAdvertiser>.fromOpaque(raw).takeUnretainedValue().clientChanged(client, state)
            }, Unmanaged.passUnretained(self).toOpaque(), &error)
        if let made {
            client = made
        } else {
            // No system bus at all: NO_FAIL covers a missing daemon, not a missing bus. Tried again later.
            sayAbsent(Self.reason(error))
            retryLater()
        }
    }

    /// Tries for a client again in `retryMilliseconds`, on Avahi's thread.
    private func retryLater() {
        guard let poll, let api = avahi_threaded_poll_get(poll) else { return }
        var when = timeval()
        avahi_elapse_time(&when, Self.retryMilliseconds, 0)
        if let retry {
            api.pointee.timeout_update(retry, &when)
            return
        }
        retry = api.pointee.timeout_new(
            api, &when,
            { _, raw in
                guard let raw else { return }
                let advertiser = Unmanaged<AvahiAdvertiser>.fromOpaque(raw).takeUnretainedValue()
                if !advertiser.stopped && advertiser.client == nil { advertiser.connect() }
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func clientChanged(_ client: OpaquePointer, _ state: AvahiClientState) {
        guard !stopped else { return }
        // avahi_client_new calls back before it returns: the pointer is kept from here.
        self.client = client
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            for entry in entries { register(entry, on: client) }
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host name is being (re)registered: the services go again once it runs.
            for entry in entries { if let group = entry.group { avahi_entry_group_reset(group) } }
        case AVAHI_CLIENT_CONNECTING:
            for entry in entries { forget(entry) }
            sayAbsent("avahi-daemon is not running")
        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(client)
            for entry in entries { forget(entry) }
            if error == AVAHI_ERR_DISCONNECTED {
                // The daemon or the bus went away: a new client waits for them to come back.
                avahi_client_free(client)
                self.client = nil
                sayAbsent("avahi-daemon is not running")
                connect()
            } else {
                onNotice("not advertised: \(Self.reason(error)); peers can add this box by address")
            }
        default: break
        }
    }

    private func sayAbsent(_ reason: String) {
        guard !saidAbsent else { return }
        saidAbsent = true
        onNotice("not advertised: \(reason); peers can add this box by address")
    }

    /// Publishes `entry` in a group of its own (one service's collision renames it alone).
    private func register(_ entry: Entry, on client: OpaquePointer) {
        if entry.group == nil {
            entry.group = avahi_entry_group_new(
                client,
                { group, state, raw in
                    guard let raw, let group else { return }
                    let entry = Unmanaged<Entry>.fromOpaque(raw).takeUnretainedValue()
                    entry.owner.groupChanged(group, state, entry)
                }, Unmanaged.passUnretained(entry).toOpaque())
        }
        guard let group = entry.group else {
            onNotice("not advertised: \(Self.reason(avahi_client_errno(client))) (\(entry.type))")
            return
        }
        guard avahi_entry_group_is_empty(group) != 0 else { return }
        // A name this daemon already holds is a collision at once, not later: renamed until one is free.
        for _ in 0..<Self.maximumServices * 4 {
            let added = avahi_entry_group_add_service_strlst(
                group, entry.scope.avahiInterface, entry.scope.avahiProtocol, AvahiPublishFlags(0),
                entry.name, entry.type, nil, nil, entry.port, nil)
            if added == Int32(AVAHI_ERR_COLLISION) {
                rename(entry)
                continue
            }
            if added < 0 || avahi_entry_group_commit(group) < 0 {
                onNotice("not advertised \(entry.described): \(Self.reason(avahi_client_errno(client)))")
                avahi_entry_group_reset(group)
            }
            return
        }
    }

    private func groupChanged(_ group: OpaquePointer, _ state: AvahiEntryGroupState, _ entry: Entry) {
        guard !stopped, entry.group == group else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            saidAbsent = false
            onNotice("advertised as \(entry.described) through Avahi\(entry.scope.described)")
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Another host on the network has the name: Avahi's alternative, and again.
            let previous = entry.name
            rename(entry)
            onNotice("'\(previous)' is taken on the network; advertising as '\(entry.name)'")
            avahi_entry_group_reset(group)
            if let client = avahi_entry_group_get_client(group) { register(entry, on: client) }
        case AVAHI_ENTRY_GROUP_FAILURE:
            let client = avahi_entry_group_get_client(group)
            let error = client.map { avahi_client_errno($0) } ?? Int32(AVAHI_ERR_FAILURE)
            onNotice("not advertised \(entry.described): \(Self.reason(error))")
        default: break
        }
    }

    private func rename(_ entry: Entry) {
        guard let alternative = avahi_alternative_service_name(entry.name) else { return }
        entry.name = DNSServiceName.instanceName(String(cString: alternative))
        avahi_free(alternative)
    }

    /// Frees the entry's group (the daemon dropped it, or the advertiser stops).
    private func forget(_ entry: Entry) {
        if let group = entry.group { avahi_entry_group_free(group) }
        entry.group = nil
    }

    /// Avahi's error as a sentence; a daemon or bus that is not there is said as such.
    static func reason(_ error: Int32) -> String {
        switch error {
        case Int32(AVAHI_ERR_NO_DAEMON), Int32(AVAHI_ERR_DISCONNECTED), Int32(AVAHI_ERR_DBUS_ERROR):
            return "avahi-daemon is not running"
        default: return String(cString: avahi_strerror(error)).lowercased()
        }
    }
}

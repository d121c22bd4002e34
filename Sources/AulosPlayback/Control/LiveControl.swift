/// The live session's control roads — the control socket, OSC and the web panel's bridge — into its one
/// executor: each tick it answers the socket's request lines, the OSC messages and the panel's requests
/// that waited for the control thread, and publishes the status for the panel. Parameter changes from OSC
/// and the panel do not wait for the tick: their threads set a parameter resolved before at once
/// (`ControlTargets.setAtOnce`), as a mapped MIDI controller does.
///
/// Threads: created and served on the control thread; the at-once sets run on the OSC thread and the
/// panel's tasks.
final class LiveControl {
    /// The one executor every road leads to.
    let executor = ControlExecutor()
    private let socket: ControlSocket?
    private let osc: OSCServer?
    private let bridge: ControlBridge?
    /// Answers the panel's rig-file requests (read, replace, load, save the file the session plays): the
    /// session that reloads rigs knows its file.
    var rigFiles: (ControlBridge.Request) -> ControlReply = { _ in .failure("no rig file is played here") }
    /// Answers the file player's requests: the session that plays the file owns it.
    var player: (ControlRequest.PlayerCommand) -> ControlReply = { _ in
        .failure(FilePlayer.noneLoaded)
    }
    /// Where a rig switch is logged, with the road it came by ("from the web panel"): the session's log, which
    /// a program change's switch reaches the same way, with the warning when the rig may not fit the period.
    var rigSwitched: (_ index: Int, _ name: String, _ road: String) -> Void = { _, _, _ in }

    init(socket: ControlSocket?, osc: OSCServer?, bridge: ControlBridge?) {
        self.socket = socket
        self.osc = osc
        self.bridge = bridge
        let targets = executor.targets
        osc?.answerAtOnce { targets.setAtOnce($0) }
        bridge?.answerAtOnce { targets.setAtOnce($0) }
    }

    /// A socket line's reply: the request read, then carried out.
    func answer(_ line: String) -> ControlReply {
        do throws(ControlFailure) {
            return perform(try ControlRequest(line: line), from: "the control socket")
        } catch {
            return .failure(error)
        }
    }

    /// `request` carried out; a rig it chose is logged with `source`, the road it came by.
    private func perform(_ request: ControlRequest, from source: String) -> ControlReply {
        if case .save(let name) = request { return rigFiles(.saveRigFile(name)) }
        if case .player(let command) = request { return player(command) }
        let reply = executor.perform(request)
        if let (index, name) = executor.chosenRig {
            executor.chosenRig = nil
            rigSwitched(index, name, "from \(source)")
        }
        return reply
    }

    /// Answers everything waiting on every road, then publishes this tick's status for the panel.
    func serve() {
        socket?.serve { answer($0).json }
        if let osc {
            for (mapped, sender) in osc.take() {
                switch mapped {
                case .success(let request):
                    osc.reply(
                        OSCMessage(request.reply, [.string(perform(request.request, from: "OSC").json)]), to: sender)
                case .failure(let problem):
                    osc.reply(OSCMessage("/aulos/error", [.string(problem.message)]), to: sender)
                }
            }
        }
        if let bridge {
            for (request, reply) in bridge.take() {
                if case .control(let request) = request {
                    reply(perform(request, from: "the web panel"))
                } else {
                    reply(rigFiles(request))
                }
            }
            bridge.publish(executor.statusReply.json)
        }
    }

    /// While there is nothing to play on (waiting for the audio device): every road answered with `reason`.
    func refuseAll(because reason: String) {
        let refusal = ControlReply.failure(reason, .unavailable)
        socket?.serve { _ in refusal.json }
        for (_, sender) in osc?.take() ?? [] { osc?.reply(OSCMessage("/aulos/error", [.string(reason)]), to: sender) }
        // The panel's requests too: left queued they would hold its pages until the device came.
        for (_, reply) in bridge?.take() ?? [] { reply(refusal) }
    }
}

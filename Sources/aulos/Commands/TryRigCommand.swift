import ArgumentParser
import AulosPlayback
import AulosRig
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `aulos try-rig FILE` (hidden): what a live instrument runs in a child process before it commits to a new
/// rig (`RigTrial`): the rig built in full at the live rate and slice and played for a quarter of a second.
/// Exit 0 when it came through; otherwise the rig's one-line error and exit 1 — or whatever a plugin did to
/// the process, which then costs only this child.
struct TryRigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "try-rig",
        abstract: "Build a rig or set file in full and play a note on every part (what a reload tries first).",
        shouldDisplay: false)

    @Argument(help: "A rig or set file.")
    var file: String

    @OptionGroup var slicing: SliceOptions

    func run() throws {
        // Ends with the instrument that started it: a trial left spinning in a plugin must not outlive it.
        // (prctl's PR_SET_PDEATHSIG is variadic, which Swift cannot call: a thread watches the parent.)
        let parent = getppid()
        Thread.detachNewThread {
            while getppid() == parent { usleep(200_000) }
            _exit(1)
        }
        let set = try RigSet.load(file)
        let first = set.entries[0].rig
        try RigTrial.tryOut(
            set, sampleRate: slicing.sampleRate ?? first.sampleRate,
            slice: UInt32(slicing.slice ?? Int(first.slice)))
        // Said last, and required by the parent with exit status 0: a crash handler that ends the process
        // with status 0 (Swift's backtracer can) must never read as a rig that came through.
        print(RigTrial.cameThrough)
    }
}

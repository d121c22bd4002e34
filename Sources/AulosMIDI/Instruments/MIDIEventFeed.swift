/// Something that plays before an instrument in the same slice and hands it events: a part's MIDI effect
/// (an LV2 plugin with MIDI in and out, eg-fifths) runs when the instrument's event list begins its slice,
/// after every source has delivered, and inserts what it made into that list at its frames.
///
/// Threads: set on the control thread while the instrument does not render (before its rig plays);
/// called on the render thread, from `MIDIEventList.beginSlice(frameCount:)`.
public struct MIDIEventFeed: @unchecked Sendable {
    /// Runs the feeder for `frameCount` frames with its `context`.
    public typealias Function = @convention(c) (UnsafeMutableRawPointer?, Int) -> Void

    public var function: Function
    public var context: UnsafeMutableRawPointer?

    public init(function: Function, context: UnsafeMutableRawPointer?) {
        self.function = function
        self.context = context
    }
}

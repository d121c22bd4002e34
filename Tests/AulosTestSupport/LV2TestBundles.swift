import Foundation

/// A folder of LV2 bundles for the "a bad plugin costs only itself" tests: good bundles linked from the
/// installed ones (mda-lv2, lv2-examples) beside bundles written broken in the ways that used to crash or
/// mislead every LV2 use — a port index of -1 or 4000000000 (lilv 0.24 memsets ~32 GB for either), a
/// plugin.ttl with a Turtle syntax error, and a manifest.ttl with one.
///
/// Threads: the calling test's.
public enum LV2TestBundles {
    /// The broken plugins written, by the way each is broken.
    public static let negativeIndex = "urn:aulos:broken:negative-index"
    public static let hugeIndex = "urn:aulos:broken:huge-index"
    public static let syntaxError = "urn:aulos:broken:syntax-error"
    /// Named in a manifest.ttl lilv gives up on (line 3 lacks a ';'): lilv knows none of its plugins.
    public static let manifestError = "urn:aulos:broken:manifest-error"
    public static let jx10 = "http://drobilla.net/plugins/mda/JX10"
    public static let amp = "http://lv2plug.in/plugins/eg-amp"

    /// A new scratch folder (the caller removes it) holding `good` installed bundles (by folder name under
    /// /usr/lib/lv2) as symbolic links, and the four broken bundles.
    public static func folder(good: [String] = ["mda.lv2", "eg-amp.lv2"]) throws -> String {
        let folder = TestFiles.scratch("lv2-bundles")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in good {
            try FileManager.default.createSymbolicLink(
                atPath: folder + "/" + name, withDestinationPath: "/usr/lib/lv2/" + name)
        }
        try write(negativeIndex, in: folder + "/negative-index.lv2", ports: port(index: "-1"))
        try write(hugeIndex, in: folder + "/huge-index.lv2", ports: port(index: "4000000000"))
        // Line 5: the second port's "lv2:index 1" lacks its ';'.
        let unterminated = "[ a lv2:AudioPort , lv2:OutputPort ; lv2:index 1 lv2:symbol \"out\" ]"
        try write(
            syntaxError, in: folder + "/syntax-error.lv2",
            ports: port(index: "0", input: true) + " ,\n\t\t" + unterminated)
        let unreadable = folder + "/manifest-error.lv2"
        try FileManager.default.createDirectory(atPath: unreadable, withIntermediateDirectories: true)
        TestFiles.write(
            "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                + "<\(manifestError)> a lv2:Plugin ; lv2:binary <file:///usr/lib/lv2/eg-amp.lv2/amp.so> "
                + "rdfs:seeAlso <plugin.ttl> .\n", to: unreadable + "/manifest.ttl")
        return folder
    }

    /// A port of the plugin.ttl `write` makes: an audio output (or input) with `index` written as given.
    public static func port(index: String, input: Bool = false) -> String {
        "[ a lv2:AudioPort , lv2:\(input ? "Input" : "Output")Port ; lv2:index \(index) ; "
            + "lv2:symbol \"\(input ? "in" : "out")\" ; lv2:name \"\(input ? "In" : "Out")\" ]"
    }

    /// A bundle whose manifest is sound and whose plugin.ttl declares `ports`. The binary is eg-amp's,
    /// which knows none of these URIs: nothing here is meant to be instantiated.
    public static func write(_ uri: String, in bundle: String, ports: String) throws {
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        let prefixes =
            "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n@prefix doap: <http://usefulinc.com/ns/doap#> .\n"
        TestFiles.write(
            prefixes + "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n<\(uri)> a lv2:Plugin ; "
                + "lv2:binary <file:///usr/lib/lv2/eg-amp.lv2/amp.so> ; rdfs:seeAlso <plugin.ttl> .\n",
            to: bundle + "/manifest.ttl")
        TestFiles.write(
            prefixes + "<\(uri)> a lv2:Plugin ; doap:name \"Broken\" ;\n\tlv2:port \(ports) .\n",
            to: bundle + "/plugin.ttl")
    }
}

import AulosSFZ
import Testing

@Suite struct ParsingTests {
    @Test func regionsInheritFromEveryLevelAndHeadersResetTheLevelsBelow() throws {
        let lib = try library(
            """
            <control> set_cc1=10 label_cc1=Mod
            <global> volume=-1 lokey=10
            <master> pan=10
            <group> tune=5
            <region> sample=a.wav
            <region> sample=b.wav tune=7 volume=-2
            <group> transpose=2
            <region> sample=c.wav
            <master> width=50
            <region> sample=d.wav
            <global> amplitude=50
            <region> sample=e.wav
            """)
        let r = lib.regions
        #expect(r.count == 5)
        #expect(r[0].volume == -1 && r[0].pan == 10 && r[0].tune == 5 && r[0].lowKey == 10)
        #expect(r[1].volume == -2 && r[1].tune == 7 && r[1].pan == 10)
        // A new <group> drops the old group's tune, keeps master and global.
        #expect(r[2].tune == 0 && r[2].transpose == 2 && r[2].pan == 10 && r[2].volume == -1)
        // A new <master> drops the group (transpose) and the old master (pan).
        #expect(r[3].transpose == 0 && r[3].pan == 0 && r[3].width == 50 && r[3].volume == -1)
        // A new <global> drops master and global values.
        #expect(r[4].width == 100 && r[4].volume == 0 && r[4].lowKey == 0 && r[4].amplitude == 50)
        #expect(lib.controllerDefaults[1] == 10 && lib.controllerLabels[1] == "Mod")
        // <control> is reset by a new <control>: default_path applies only until then.
        let paths = try library(
            "<control> default_path=Samples/\\Piano\n<region> sample=a.wav\n<control>\n<region> sample=b.wav")
        #expect(paths.regions.map(\.samplePath) == ["lib/Samples/Piano/a.wav", "lib/b.wav"])
    }

    @Test func parsedRegionsListTheirEffectiveOpcodesInOrder() throws {
        var parser = SFZParser(root: "lib", files: SFZMemoryFiles([:]))
        let result = try parser.parse(
            text: "<global> a=1 <group> b=2 <region> c=3 a=4 <region> d=5 <group> e=6 <region> f=7", file: "lib/x.sfz")
        let names = result.regions.map { $0.effectiveOpcodes.map { "\($0.name)=\($0.value)" } }
        #expect(names == [["a=1", "b=2", "c=3", "a=4"], ["a=1", "b=2", "d=5"], ["a=1", "e=6", "f=7"]])
        // Regions of one group share what they inherit.
        #expect(result.regions[0].inheritedVersion == result.regions[1].inheritedVersion)
        #expect(result.regions[1].inheritedVersion != result.regions[2].inheritedVersion)
    }

    @Test func definesSubstituteInNamesValuesAndIncludesAndChainsAreBounded() throws {
        let lib = try library(
            """
            #define $KEY 60
            #define $KEYS $KEY
            #define $LO lo
            #define $LOW 30
            <region> sample=s $KEY.wav key=$KEYS $LOvel=5 $LOkey=$LOW
            """)
        #expect(lib.regions[0].samplePath == "lib/s 60.wav")
        // $LOW is the longest name defined, so $LOW is 30 and $LOkey is "lokey".
        #expect(lib.regions[0].lowKey == 30 && lib.regions[0].highKey == 60 && lib.regions[0].lowVelocity == 5)
        // Each step doubles: 2^20 characters if unbounded; the limit stops it with the line it is on.
        var chain = "#define $A0 xxxxxxxxxxxxxxxx\n"
        for step in 1...20 { chain += "#define $A\(step) $A\(step - 1)$A\(step - 1)\n" }
        let error = loadError(chain + "<region> sample=$A20.wav")
        #expect(error?.hasPrefix("lib/test.sfz:10: $A9 expands to more than 4096 characters") == true, "\(error ?? "")")
        #expect(
            loadError("<region> sample=a.wav key=$NOPE")
                == "lib/test.sfz:1: $NOPE is not defined; add #define $NOPE VALUE before it")
    }

    @Test func defineValuesAreOneWordSoDirectivesAndOpcodesMayShareALine() throws {
        // Drum kits write two defines on a line; the Salamander piano writes a header, an include, a define,
        // opcodes and another include on one line. A define's value is one word, as ARIA and sfizz read it.
        let lib = try library(
            """
            #define $LOW 10    #define $HIGH 20 // velocities
            <group> #include "Data/tune.txt" #define $LAYER v1 lovel=$LOW hivel=$HIGH #include "Data/keys.txt"
            """,
            others: [
                "lib/Data/tune.txt": "#define $TUNE -5",
                "lib/Data/keys.txt": "<region> tune=$TUNE key=60 sample=C4$LAYER.wav",
            ])
        #expect(lib.regions.count == 1)
        #expect(lib.regions[0].samplePath == "lib/C4v1.wav")
        #expect(lib.regions[0].lowVelocity == 10 && lib.regions[0].highVelocity == 20)
        #expect(lib.files == ["lib/test.sfz", "lib/Data/tune.txt", "lib/Data/keys.txt"])
        // A value still runs on past a '#' that starts no directive ("C#4 take 2.wav").
        #expect(try library("<region> sample=C#4 #2 take.wav key=61").regions[0].samplePath == "lib/C#4 #2 take.wav")
    }

    @Test func opcodeNamesAreReadWithoutRegardToCaseAndHDControllerDefaultsAreRead() throws {
        // ARIA and sfizz read `Sample=` as `sample=` (the Discord GM bank writes it 176 times); `set_hdccN` is
        // `set_ccN` from 0 to 1 (seven of the twelve libraries surveyed start their controllers with it); and
        // `tune_ccN` is `pitch_onccN`.
        let lib = try library(
            """
            <control> set_hdcc7=0.5 SET_HDCC64=1 set_hdcc1=0
            <region> Sample=a.wav LoKey=60 HIKEY=62 tune_cc1=200
            """)
        #expect(lib.regions[0].samplePath == "lib/a.wav")
        #expect(lib.regions[0].lowKey == 60 && lib.regions[0].highKey == 62)
        #expect(lib.regions[0].pitchControllers == [SFZCCModulation(controller: 1, depth: 200)])
        #expect(lib.controllerDefaults == [7: 64, 64: 127, 1: 0])
        #expect(lib.warnings.isEmpty, "\(lib.warnings)")
    }

    @Test func includesAreRelativeToTheLoadedFileConfinedAndBounded() throws {
        let lib = try library(
            "#include \"inc/a.sfzh\"\n<region> sample=top.wav",
            others: [
                "lib/inc/a.sfzh": "#include \"inc/b.sfzh\"\n<group> volume=-3\n<region> sample=x.wav",
                "lib/inc/b.sfzh": "#define $V -6\n",
            ])
        #expect(lib.regions.count == 2)
        #expect(lib.regions[0].location == SFZLocation(file: "lib/inc/a.sfzh", line: 3))
        // Samples are relative to the loaded file, not the including one.
        #expect(lib.regions[0].samplePath == "lib/x.wav")
        #expect(lib.files == ["lib/test.sfz", "lib/inc/a.sfzh", "lib/inc/b.sfzh"])

        let loop = loadError(
            "\n#include \"a.sfzh\"", others: ["lib/a.sfzh": "#include \"b.sfzh\"", "lib/b.sfzh": "#include \"a.sfzh\""])
        let chain = "lib/a.sfzh → lib/b.sfzh → lib/a.sfzh"
        #expect(loop == "lib/b.sfzh:1: #include loop: \(chain); remove one of these includes")
        let selfLoop = loadError("#include \"test.sfz\"")
        #expect(selfLoop?.hasPrefix("lib/test.sfz:1: #include loop: lib/test.sfz → lib/test.sfz") == true)
        #expect(
            loadError("<region> sample=a.wav\n#include \"../secret.sfz\"")?
                .hasPrefix("lib/test.sfz:2: #include \"../secret.sfz\" is outside the library's folder lib")
                == true)
        #expect(loadError("#include \"/etc/passwd\"")?.contains("is outside the library's folder") == true)
        #expect(loadError("#include \"inc/../../x.sfz\"")?.contains("is outside the library's folder") == true)
        #expect(
            loadError("#include \"missing.sfz\"")
                == "lib/test.sfz:1: cannot read lib/missing.sfz: No such file or directory")
        // A chain of 20 distinct files nests deeper than 16.
        var files: [String: String] = [:]
        for depth in 0..<20 { files["lib/d\(depth).sfz"] = "#include \"d\(depth + 1).sfz\"" }
        files["lib/d20.sfz"] = ""
        let deep = loadError("#include \"d0.sfz\"", others: files)
        #expect(deep == "lib/d15.sfz:1: #include \"d16.sfz\" nests deeper than 16 files; flatten the includes")
        // At every depth an include is relative to the loaded file's folder (as in sfizz and ARIA), never to
        // the including file's: the Salamander and Headroom pianos' Data/*.txt include "Data/….txt".
        let nested = try library(
            "#include \"Data/group.txt\"",
            others: [
                "lib/Data/group.txt": "<group> lovel=1\n#include \"Data/region.txt\"",
                "lib/Data/region.txt": "<region> sample=n.wav",
            ])
        #expect(nested.files == ["lib/test.sfz", "lib/Data/group.txt", "lib/Data/region.txt"])
        #expect(
            loadError(
                "#include \"Data/g.txt\"", others: ["lib/Data/g.txt": "#include \"r.txt\"", "lib/Data/r.txt": ""])
                == "lib/Data/g.txt:1: cannot read lib/r.txt: No such file or directory")
        // The same file included twice (not a loop) is fine.
        let twice = try library(
            "#include \"r.sfzh\"\n#include \"r.sfzh\"", others: ["lib/r.sfzh": "<region> sample=r.wav"])
        #expect(twice.regions.count == 2)
    }

    @Test func commentsAreSkippedAndLinesStillCount() throws {
        let lib = try library(
            """
            // a comment <region> sample=no.wav
            /* a block
               <region> sample=no.wav
            */ <region> sample=yes.wav // lokey=5
            <region> /* inline */ sample=two.wav lokey=3/* after */
            """)
        #expect(lib.regions.map(\.samplePath) == ["lib/yes.wav", "lib/two.wav"])
        #expect(lib.regions[0].location.line == 4 && lib.regions[0].lowKey == 0 && lib.regions[1].lowKey == 3)
        #expect(
            loadError("/* never closed\n<region> sample=a.wav")
                == "lib/test.sfz:1: the comment /* is never closed; end it with */")
        #expect(
            loadError("/* two\nlines */\n\n<region> lokey=x sample=a.wav")?.hasPrefix("lib/test.sfz:4: lokey=x") == true
        )
    }

    @Test func noteNamesAndNumbers() {
        let cases: [(String, Int?)] = [
            ("c4", 60), ("C4", 60), ("c#4", 61), ("db4", 61), ("Db4", 61), ("b3", 59), ("cb4", 59), ("c-1", 0),
            ("g9", 127), ("a4", 69), ("60", 60), ("0", 0), ("127", 127), ("e#4", 65), ("h4", nil), ("c10", nil),
            ("c", nil), ("", nil), ("60.0", 60),
        ]
        for (text, key) in cases { #expect(SFZNote.parse(text) == key, "\(text)") }
        #expect(SFZNote.name(60) == "c4" && SFZNote.name(61) == "c#4" && SFZNote.name(0) == "c-1")
    }

    @Test func valuesRunToTheNextOpcodeOrHeader() throws {
        let lib = try library(
            """
            <region> sample=Piano C4 soft.wav lokey=60 hikey=62
            <region>sample=My Samples\\Kick  01.wav   <region> sample=tab\tname.wav\tkey=c4
            <region> sample=a=b.wav
            <region> sample = spaced.wav  lovel = 3
            """)
        #expect(
            lib.regions.map(\.samplePath) == [
                "lib/Piano C4 soft.wav", "lib/My Samples/Kick  01.wav", "lib/tab\tname.wav", "lib/a=b.wav",
                "lib/spaced.wav",
            ])
        #expect(lib.regions[0].lowKey == 60 && lib.regions[0].highKey == 62 && lib.regions[2].keycenter == 60)
        #expect(lib.regions[4].lowVelocity == 3)
    }

    @Test func everyErrorIsOneLineWithFileAndLine() {
        let cases: [(String, String)] = [
            ("<region> sample=a.wav lokey=zz", "lib/test.sfz:1: lokey=zz must be a key"),
            ("\n<region> sample=a.wav volume=loud", "lib/test.sfz:2: volume=loud must be a number"),
            ("<region> sample=a.wav\nloop_mode=forever", "lib/test.sfz:2: loop_mode=forever must be one of no_loop"),
            ("<region> sample=a.wav trigger=sometimes", "lib/test.sfz:1: trigger=sometimes must be one of attack"),
            ("<region> sample=a.wav sustain_sw=maybe", "lib/test.sfz:1: sustain_sw=maybe must be on or off"),
            ("<region sample=a.wav", "lib/test.sfz:1: a header is a name in angle brackets"),
            ("<region> just words", "lib/test.sfz:1: expected opcode=value or a <header>, found 'just'"),
            ("\n\n#undef $X", "lib/test.sfz:3: unknown directive '#undef'"),
            ("#define X 1", "lib/test.sfz:1: #define needs a $NAME and a value"),
            ("#include missing-quotes.sfz", "lib/test.sfz:1: #include needs a file name in double quotes"),
            ("<region> sample=../up.wav", "lib/test.sfz:1: sample ../up.wav is outside the library's folder lib"),
            ("<curve> v000=0", "lib/test.sfz:1: a <curve> needs curve_index=N"),
            ("<region> sample=a.wav fil_type=lpf_9p", "lib/test.sfz:1: fil_type=lpf_9p must be one of lpf_1p"),
        ]
        for (text, prefix) in cases {
            let error = loadError(text, others: [:])
            #expect(error?.hasPrefix(prefix) == true, "\(text): \(error ?? "no error")")
            #expect(error?.contains("\n") == false)
        }
        let missing = TestLibraryFiles(["lib/test.sfz": "\n<region> sample=gone.wav"], missing: ["lib/gone.wav"])
        #expect(
            throws: SFZError(
                "lib/test.sfz:2: sample gone.wav not found (looked for lib/gone.wav); is the library complete?")
        ) {
            try SFZLibrary.load(path: "lib/test.sfz", files: missing)
        }
    }

    @Test func unsupportedOpcodesAndHeadersAreListedOnceWithTheirFirstPlace() throws {
        let lib = try library(
            """
            <region> sample=a.wav foo_cc7=1 bar=2
            <region> sample=b.wav foo_cc12=3
            <midi> whatever=1
            <region> sample=c.wav bar=5
            <effect> type=reverb
            """)
        let listed = lib.warnings.map { "\($0)" }
        #expect(
            listed == [
                "lib/test.sfz:3: header <midi> is not supported; its opcodes are ignored",
                "lib/test.sfz:5: header <effect> is not supported; its opcodes are ignored",
                "lib/test.sfz:1: opcode foo_ccN is not supported and is ignored (2 times)",
                "lib/test.sfz:1: opcode bar is not supported and is ignored (2 times)",
            ])
        // The unknown header's opcodes went with it; the next <region> is read again.
        #expect(lib.regions.count == 3)
        #expect(lib.effects.first?.opcodes.first?.name == "type")
    }

    @Test func limitsAreErrorsNotExhaustion() {
        var limits = SFZLimits()
        limits.regions = 3
        #expect(
            loadError(String(repeating: "<region> sample=a.wav\n", count: 4), limits: limits)
                == "lib/test.sfz:4: more than 3 regions; split the library into smaller instruments")
        limits = SFZLimits()
        limits.lineBytes = 100
        #expect(
            loadError("\n<region> sample=" + String(repeating: "a", count: 200) + ".wav", limits: limits)
                == "lib/test.sfz:2: the line is longer than 100 bytes; is this an SFZ file?")
        limits = SFZLimits()
        limits.fileBytes = 50
        #expect(
            loadError(String(repeating: "<region> sample=a.wav\n", count: 4), limits: limits)
                == "cannot read lib/test.sfz: is larger than 50 bytes")
        limits = SFZLimits()
        limits.includes = 5
        #expect(
            loadError(String(repeating: "#include \"e.sfzh\"\n", count: 6), others: ["lib/e.sfzh": ""], limits: limits)
                == "lib/test.sfz:6: more than 5 #includes in one library")
    }

    @Test func theDefaultLimitsHoldALibraryThatIncludesOneFilePerRegion() throws {
        // Ivy Audio's Piano in 162 includes a one-line sample file for each region of each velocity layer,
        // round robin, pedal state and microphone: about 3,500 includes. Here 2 × 2 × 5 × 88 = 1,760 of them.
        let lib = try library(
            "#include \"ped.txt\"\n#include \"ped.txt\"",
            others: [
                "lib/ped.txt": "<master> #include \"group.txt\"\n<master> #include \"group.txt\"",
                "lib/group.txt": String(repeating: "<group> #include \"region.txt\"\n", count: 5),
                "lib/region.txt": (21...108).map { "<region> #define $NUM \($0) #include \"one.txt\"" }
                    .joined(separator: "\n"),
                "lib/one.txt": "key=$NUM sample=$NUM.wav",
            ])
        #expect(lib.regions.count == 1760)
        #expect(lib.regions.last?.lowKey == 108)
    }

    @Test func pathsNormaliseAndStayInside() {
        #expect(SFZPath.join("lib/a", "..\\b/./c.wav") == "lib/b/c.wav")
        #expect(SFZPath.join("lib", "../../x") == "../x")
        #expect(SFZPath.inside("lib/b/c.wav", root: "lib") == "b/c.wav")
        #expect(SFZPath.inside("library/x", root: "lib") == nil)
        #expect(SFZPath.inside("../x", root: ".") == nil)
        #expect(SFZPath.inside("/abs/x", root: "/abs") == "x")
    }

    @Test func samplesDifferingInCaseAreFoundAndListedOnce() throws {
        let files = SFZMemoryFiles([
            "lib/test.sfz": Array("<region> sample=samples/PIANO.WAV\n<region> sample=Samples/piano.wav".utf8),
            "lib/Samples/Piano.wav": [0],
        ])
        let lib = try SFZLibrary.load(path: "lib/test.sfz", files: files)
        #expect(lib.samples == ["lib/Samples/Piano.wav"])
        #expect(lib.regions.map(\.sampleIndex) == [0, 0])
    }
}

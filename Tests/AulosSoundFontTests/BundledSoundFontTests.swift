import AulosSoundFont
import AulosTestSupport
import Foundation
import Testing

/// The SoundFont the sampler plays by default is generated, not drawn: the committed file must be exactly
/// what the generator writes today.
@Suite struct BundledSoundFontTests {
    @Test func theCommittedFontIsExactlyWhatTheGeneratorWrites() throws {
        let committed = try #require(FileManager.default.contents(atPath: TestFiles.bundledFont))
        #expect([UInt8](committed) == AulosGMSoundFont.make().encode())
    }

    /// The size budget (soundfonts/README.md): small enough to ship and to load on a Raspberry Pi.
    @Test func theFontKeepsWithinItsSizeBudget() throws {
        let committed = try #require(FileManager.default.contents(atPath: TestFiles.bundledFont))
        #expect(committed.count < 12_000_000, "\(committed.count) bytes")
    }
}

import Testing
@testable import Argon2

@Suite("BLAKE2b")
struct Blake2bTests {
    @Test("RFC 7693 appendix A: BLAKE2b-512(\"abc\")")
    func rfc7693Abc() {
        let digest = Blake2b.hash(Array("abc".utf8), digestLength: 64)
        #expect(
            Hex.encode(digest) == """
                ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1\
                7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923
                """)
    }

    /// Lengths around the 128-byte block boundary catch off-by-one errors in
    /// the "keep the last block for the final flag" buffering; expected values
    /// are from Python's hashlib.blake2b over bytes (i * 7 + 3) & 255.
    @Test(
        "Matches hashlib.blake2b across block boundaries and digest sizes",
        arguments: [
            (
                0, 64,
                "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce"
            ),
            (
                3, 64,
                "76ce7e90c577d436a65b691e51f0a1ad536130d70a18df3bf5368551327258b6f706f4a47c45f2d0d8147cfbb5623077e798247972e4f9338603a13abc05a4db"
            ),
            (
                127, 64,
                "71546bbf9110ad184cc60f2eb120fcfd9b4dbbca7a7f1270045b8a23a6a4f4330f65c1f030dd2f5fabc6c57617242c37cf427bd90407fac5b9deffd3ae888c39"
            ),
            (
                128, 64,
                "2d9e329f42afa3601d646692b81c13e87fcaff5bf15972e9813d7373cb6d181f9599f4d513d4af4fd6ebd37497aceb29aba5ee23ed764d8510b552bd088814fb"
            ),
            (
                129, 64,
                "47889df9eb4d717afc5019df5c6a83df00a0b8677395e078cd5778ace0f338a618e68b7d9afb065d9e6a01ccd31d109447e7fae771c3ee3e105709194122ba2b"
            ),
            (255, 32, "f2d64a40e9412a3414161ff6250075225418fd7c271c1123e162e1bca0de9f93"),
            (256, 1, "f0"),
            (1000, 48, "3910b84a1fe7f38f69f3cf3b0a217a0ac1a8865dd72e74a315d615e475039f6a7b7299bbfe070081f141f544620926b8"),
            (
                1024, 64,
                "eddc3f3af9392eff065b359ce5f2b28f71e9f3a3a50e60ec27787b9fa623094d17b046c1dfce89bc5cdfc951b95a9a9c05fb8cc2361c905db01dd237fe56efb3"
            ),
        ])
    func hashlibVectors(length: Int, digestLength: Int, expected: String) {
        let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        #expect(Hex.encode(Blake2b.hash(input, digestLength: digestLength)) == expected)
    }

    @Test("Incremental updates equal a one-shot hash")
    func incremental() {
        let input = (0..<777).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var hasher = Blake2b(digestLength: 64)
        var offset = 0
        for chunk in [0, 1, 127, 128, 129, 64, 300, 28] {
            hasher.update(Array(input[offset..<offset + chunk]))
            offset += chunk
        }
        #expect(offset == input.count)
        #expect(hasher.finalize() == Blake2b.hash(input, digestLength: 64))
    }
}

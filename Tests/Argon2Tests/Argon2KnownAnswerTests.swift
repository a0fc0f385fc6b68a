import Testing
@testable import Argon2

@Suite("Argon2id known answers")
struct Argon2KnownAnswerTests {
    /// RFC 9106 section 5.3. Uses p = 4, a secret and associated data, so it
    /// covers cross-lane references and every H0 input.
    @Test("RFC 9106 section 5.3 test vector")
    func rfc9106() throws {
        let tag = try Argon2.hash(
            password: [UInt8](repeating: 0x01, count: 32),
            salt: [UInt8](repeating: 0x02, count: 16),
            parameters: Argon2Parameters(memoryKiB: 32, iterations: 3, parallelism: 4),
            tagLength: 32,
            secret: [UInt8](repeating: 0x03, count: 8),
            associatedData: [UInt8](repeating: 0x04, count: 12))
        #expect(Hex.encode(tag) == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")
    }

    /// The server's own parameters, checked against Debian's libargon2:
    /// `echo -n password | argon2 somesalt12345678 -id -t 2 -k 19456 -p 1 -l 32 -r`.
    @Test("OWASP parameters match the argon2 CLI")
    func owaspDefault() throws {
        let tag = try Argon2.hash(
            password: Array("password".utf8), salt: Array("somesalt12345678".utf8),
            parameters: .owaspDefault)
        #expect(Hex.encode(tag) == "0c4c0b6db219194b6006e078818a24eabea136f7af619a31930310e7f2d749a5")
    }

    @Test("OWASP default is m=19456 KiB, t=2, p=1")
    func owaspValues() {
        #expect(Argon2Parameters.owaspDefault == Argon2Parameters(memoryKiB: 19_456, iterations: 2, parallelism: 1))
    }

    /// H' for outputs > 64 bytes chains BLAKE2b; 1024 bytes is the size used
    /// for the initial blocks. Its *values* are covered by every known-answer
    /// and differential test (including tags of 65...200 bytes); this pins the
    /// lengths at the chaining boundaries.
    @Test("H' output length is exact", arguments: [4, 32, 63, 64, 65, 96, 97, 1024])
    func variableHashLength(length: Int) {
        #expect(Argon2.variableLengthHash([1, 2, 3], outputLength: length).count == length)
    }
}

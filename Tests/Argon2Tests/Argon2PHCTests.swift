import Testing
@testable import Argon2

@Suite("PHC strings")
struct Argon2PHCTests {
    static let cheap = Argon2Parameters(memoryKiB: 64, iterations: 1, parallelism: 1)

    @Test("hashPHC then verifyPHC round-trips; a wrong password is false")
    func roundTrip() throws {
        let phc = try Argon2.hashPHC(password: "correct horse", parameters: Self.cheap)
        #expect(phc.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"))
        #expect(try Argon2.verifyPHC(password: "correct horse", phc: phc))
        #expect(try !Argon2.verifyPHC(password: "correct horsE", phc: phc))
        #expect(try !Argon2.verifyPHC(password: "", phc: phc))
    }

    @Test("Default salts are 16 random bytes, different every time")
    func randomSalt() throws {
        let a = try Argon2PHC(Argon2.hashPHC(password: "pw", parameters: Self.cheap))
        let b = try Argon2PHC(Argon2.hashPHC(password: "pw", parameters: Self.cheap))
        #expect(a.salt.count == 16)
        #expect(a.hash.count == 32)
        #expect(a.salt != b.salt)
        #expect(a.hash != b.hash)
    }

    @Test("A fixed salt gives the documented format and the raw tag")
    func fixedSalt() throws {
        let salt = Array("somesalt12345678".utf8)
        let phc = try Argon2.hashPHC(password: "password", parameters: .owaspDefault, salt: salt)
        // Tag from `echo -n password | argon2 somesalt12345678 -id -t 2 -k 19456 -p 1 -e` (libargon2).
        #expect(phc == "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU")
        let parsed = try Argon2PHC(phc)
        #expect(parsed.parameters == .owaspDefault)
        #expect(parsed.salt == salt)
        #expect(parsed.string == phc)
    }

    @Test("needsRehash reports any parameter difference")
    func needsRehash() throws {
        let phc = try Argon2PHC(Argon2.hashPHC(password: "pw", parameters: Self.cheap))
        #expect(!phc.needsRehash(comparedTo: Self.cheap))
        #expect(phc.needsRehash(comparedTo: .owaspDefault))
        #expect(phc.needsRehash(comparedTo: Argon2Parameters(memoryKiB: 64, iterations: 2, parallelism: 1)))
        #expect(phc.needsRehash(comparedTo: Argon2Parameters(memoryKiB: 64, iterations: 1, parallelism: 2)))
    }

    @Test("Non-ASCII passwords hash as UTF-8")
    func unicodePassword() throws {
        let phc = try Argon2.hashPHC(password: "pässwörd 🔑", parameters: Self.cheap)
        #expect(try Argon2.verifyPHC(password: "pässwörd 🔑", phc: phc))
        // No Unicode normalisation: the decomposed spelling is a different password.
        #expect(try !Argon2.verifyPHC(password: "pa\u{0308}sswörd 🔑", phc: phc))
    }

    static let good = "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU"

    @Test("Well-formed control string parses")
    func control() throws {
        let phc = try Argon2PHC(Self.good)
        #expect(phc.parameters == Self.cheap)
        #expect(phc.hash.count == 32)
    }

    @Test(
        "Malformed PHC strings throw instead of crashing",
        arguments: [
            "",
            "$",
            "$$$$$",
            "argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // no leading $
            "$argon2id",
            "$argon2id$v=19",
            "$argon2id$v=19$m=64,t=1,p=1",
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA",
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$",  // empty hash
            "$argon2id$v=19$m=64,t=1,p=1$$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // empty salt
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU$",  // extra field
            "$argon2id$v=19$m=64,t=1,p=1,keyid=abc$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$t=1,m=64,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // wrong order
            "$argon2id$v=19$m=64,t=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=064,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // leading zero
            "$argon2id$v=19$m=+64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=-1,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=4294967296,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // > UInt32
            "$argon2id$v=19$m=99999999999999999999,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=4294967295,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // above the cap
            "$argon2id$v=19$m=4194305,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // cap + 1
            "$argon2id$v=19$m=64,t=0,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=64,t=1,p=0$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=64,t=1,p=16777216$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=8,t=1,p=2$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // m < 8p
            "$argon2id$v=16$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // no v= means 0x10
            "$argon2id$v=$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2i$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2d$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$ARGON2ID$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$scrypt$ln=16,r=8,p=1$aM15713r3Xsvxbi31lqr1Q$nFNh2CVHVjNldFVKDHDlm4CbdRSCdEBsjjJxD+iCs5E",
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA==$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // padding
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNh*HQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // bad char
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3O$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // length % 4 == 1
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OB$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaV",  // non-zero trailing bits
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5-LXSaU",  // URL-safe alphabet
            "$argon2id$v=19$m=64,t=1,p=1$c2FsdA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // salt < 8 bytes
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$AAAA",  // hash < 4 bytes
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$" + String(repeating: "A", count: 2000),  // absurdly long
            " $argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",
            "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU\n",
            "$argon2id$v=19$m=6４,t=1,p=1$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU",  // full-width digit
        ])
    func malformed(_ string: String) {
        #expect(throws: Argon2Error.self) { try Argon2PHC(string) }
        #expect(throws: Argon2Error.self) { try Argon2.verifyPHC(password: "password", phc: string) }
    }

    @Test("Specific errors for the cases a server may want to log")
    func specificErrors() {
        let tail = "$c29tZXNhbHQxMjM0NTY3OA$DEwLbbIZGUtgBuB4gYok6r6hNvevYZoxkwMQ5/LXSaU"
        #expect(throws: Argon2Error.unsupportedAlgorithm("argon2i")) { try Argon2PHC("$argon2i$v=19$m=64,t=1,p=1" + tail) }
        #expect(throws: Argon2Error.unsupportedVersion(16)) { try Argon2PHC("$argon2id$v=16$m=64,t=1,p=1" + tail) }
        #expect(throws: Argon2Error.unsupportedVersion(16)) { try Argon2PHC("$argon2id$m=64,t=1,p=1" + tail) }
        #expect(throws: Argon2Error.invalidIterations(0)) { try Argon2PHC("$argon2id$v=19$m=64,t=0,p=1" + tail) }
        #expect(throws: Argon2Error.memoryTooLarge(memoryKiB: 4_294_967_295, maximum: Argon2.maximumMemoryKiB)) {
            try Argon2PHC("$argon2id$v=19$m=4294967295,t=1,p=1" + tail)
        }
    }

    @Test("Base64 round-trips every length 0...40 and matches the standard alphabet")
    func base64() {
        for length in 0...40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let encoded = PHCBase64.encode(bytes)
            #expect(!encoded.contains("="))
            #expect(PHCBase64.decode(Array(encoded.utf8)) == bytes)
        }
        #expect(PHCBase64.encode(Array("somesalt12345678".utf8)) == "c29tZXNhbHQxMjM0NTY3OA")
        #expect(PHCBase64.encode([0xfb, 0xff]) == "+/8")
    }

    @Test("Constant-time comparison is an equality test")
    func constantTime() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([], []))
    }
}

import Crypto
import Foundation
@testable import GatehouseCore
import Testing

@Suite("Secrets")
struct SecretsTests {
    @Test("Constant-time comparison is exact")
    func constantTime() {
        #expect(Secrets.constantTimeEquals("abc", "abc"))
        #expect(!Secrets.constantTimeEquals("abc", "abd"))
        #expect(!Secrets.constantTimeEquals("abc", "abcd"))
        #expect(!Secrets.constantTimeEquals("", "a"))
    }

    @Test("Tokens carry 256 random bits; codes are 6 digits")
    func randomness() {
        let tokens = (0..<100).map { _ in Secrets.token(prefix: "gh_r_") }
        #expect(Set(tokens).count == 100)
        #expect(tokens.allSatisfy { $0.hasPrefix("gh_r_") && Base64URL.decode(String($0.dropFirst(5)))?.count == 32 })
        let codes = (0..<200).map { _ in Secrets.numericCode(digits: 6) }
        #expect(codes.allSatisfy { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        #expect(Set(codes).count > 150)
    }

    @Test("The server secret seals, derives a stable successor, and keys code hashes by binding")
    func serverSecret() throws {
        let secret = try ServerSecret(bytes: Array(repeating: 7, count: 32))
        let other = try ServerSecret(bytes: Array(repeating: 8, count: 32))
        let sealed = try secret.seal(Data("hello".utf8))
        #expect(try secret.open(sealed) == Data("hello".utf8))
        #expect(throws: (any Error).self) { try other.open(sealed) }
        #expect(secret.refreshSuccessor(of: "gh_r_a") == secret.refreshSuccessor(of: "gh_r_a"))
        #expect(secret.refreshSuccessor(of: "gh_r_a") != other.refreshSuccessor(of: "gh_r_a"))
        #expect(secret.refreshSuccessor(of: "gh_r_a") != secret.refreshSuccessor(of: "gh_r_b"))
        #expect(secret.codeHash("123456", binding: "x") != secret.codeHash("123456", binding: "y"))
        #expect(throws: ServerSecretError.self) { try ServerSecret(bytes: [1, 2, 3]) }
    }

    @Test(
        "RCT-1: chain tokens: parsed back to their session, generation and seed; genuine under any secret of the ring and under no other; the stored hash finds a token whichever ring secret made it; every other spelling is not a chain token"
    )
    func chainTokens() throws {
        let old = try ServerSecret(bytes: Array(repeating: 7, count: 32))
        let promoted = try ServerSecret(ring: [Array(repeating: 9, count: 32), Array(repeating: 7, count: 32)])
        let stranger = try ServerSecret(bytes: Array(repeating: 8, count: 32))
        let session = UUID()
        let first = RefreshChainToken.first(of: session)
        let made = old.refreshChainToken(first.generation(41))
        let parsed = try #require(RefreshChainToken(parsing: made))
        #expect(parsed.sessionID == session && parsed.generation == 41)
        #expect(old.verifies(parsed) && promoted.verifies(parsed) && !stranger.verifies(parsed))
        // Another chain of the same session (another seed) and the next generation are other tokens.
        #expect(old.refreshChainToken(RefreshChainToken.first(of: session).generation(41)) != made)
        #expect(old.refreshChainToken(parsed.successor) == old.refreshChainToken(first.generation(42)))
        // After a promotion the current secret makes another string; the hash still finds the old one.
        #expect(promoted.refreshChainToken(first.generation(41)) != made)
        #expect(promoted.refreshChainToken(first.generation(41), hashing: Secrets.sha256Hex(made)) == made)
        #expect(stranger.refreshChainToken(first.generation(41), hashing: Secrets.sha256Hex(made)) == nil)
        let parts = made.split(separator: ".").map(String.init)
        for spelling in [
            made + ".x", parts.dropLast().joined(separator: "."), "gh_r_" + parts[1...].joined(separator: "."),
            made.replacingOccurrences(of: ".41.", with: ".041."), made.replacingOccurrences(of: ".41.", with: ".-41."),
            made.replacingOccurrences(of: ".41.", with: ".99999999999."), String(made.dropLast()), "gh_r_c....",
        ] {
            #expect(RefreshChainToken(parsing: spelling) == nil, "\(spelling)")
        }
    }

    @Test("The secret file is created 0600 and read back")
    func secretFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gh-secret-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try ServerSecret.loadOrCreate(path: path)
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let again = try ServerSecret.loadOrCreate(path: path)
        #expect(first.refreshSuccessor(of: "gh_r_x") == again.refreshSuccessor(of: "gh_r_x"))
    }

    @Test("PKCE: only S256, verified in constant time")
    func pkce() throws {
        let verifier = String(repeating: "v", count: 50)
        let challenge = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
        let pkce = try #require(PKCEChallenge(challenge: challenge, method: "S256"))
        #expect(pkce.verify(verifier: verifier))
        #expect(!pkce.verify(verifier: verifier + "x"))
        #expect(PKCEChallenge(challenge: challenge, method: "plain") == nil)
        #expect(PKCEChallenge(challenge: "short", method: "S256") == nil)
    }
}

@Suite("base64url")
struct Base64URLTests {
    @Test("RFC 4648 §10 vectors in the URL alphabet, unpadded; padding, '+', '/' and junk are refused")
    func vectors() {
        let vectors = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xfb, 0xff, 0xbf])
        for bad in ["+/+/", "Zg==", "Z", "Zm9v!", "Zm 9v"] { #expect(Base64URL.decode(bad) == nil, "\(bad)") }
    }
}

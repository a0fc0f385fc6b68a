import Foundation
@testable import GatehouseCore
import Testing
import GatehouseAPI

@Suite("Caches")
struct CachesTests {
    static func claims(_ sub: String) -> AccessTokenClaims {
        AccessTokenClaims(
            iss: "https://id.example", sub: sub, aud: "https://id.example", exp: 2_000_000_000, iat: 1_900_000_000,
            jti: sub, clientID: "app", scope: "", sid: sub, amr: ["pwd"])
    }

    @Test("Verified tokens: exact-token hits only, bounded to two generations, hot entries survive")
    func verifiedTokens() {
        let cache = VerifiedTokenCache(capacity: 4)
        let hot = VerifiedTokenCache.key(for: "hot.token.sig")
        cache.store(.init(kid: "k", claims: Self.claims("hot")), for: hot)
        #expect(cache.entry(for: VerifiedTokenCache.key(for: "hot.token.sig!")) == nil)
        for i in 0..<20 {
            cache.store(.init(kid: "k", claims: Self.claims("\(i)")), for: VerifiedTokenCache.key(for: "t\(i)"))
            // Touching the hot one each round promotes it out of the generation about to be dropped.
            #expect(cache.entry(for: hot)?.claims.sub == "hot")
            #expect(cache.count <= 8)
        }
        #expect(cache.entry(for: VerifiedTokenCache.key(for: "t0")) == nil)
        #expect(cache.entry(for: VerifiedTokenCache.key(for: "t19"))?.claims.sub == "19")
    }

    @Test("Clients: cached until invalidated or expired; unknown ids are not cached")
    func clients() async throws {
        let cache = ClientCache(ttl: .seconds(60))
        let loads = LoadCounter()
        let record = ClientRecord(id: "app", name: "App", kind: .public, createdAt: Date())
        for _ in 0..<3 {
            #expect(
                await cache.client(id: "app") {
                    await loads.bump(); return record
                }?.id == "app")
        }
        #expect(await loads.value == 1)
        cache.invalidate(id: "app")
        _ = await cache.client(id: "app") {
            await loads.bump(); return record
        }
        #expect(await loads.value == 2)
        // A zero lifetime: every entry has expired by the next call.
        let expired = ClientCache(ttl: .zero)
        for _ in 0..<2 {
            _ = await expired.client(id: "app") {
                await loads.bump(); return record
            }
        }
        #expect(await loads.value == 4)
        for _ in 0..<2 {
            _ = await cache.client(id: "ghost") {
                await loads.bump(); return nil
            }
        }
        #expect(await loads.value == 6)
    }
}

actor LoadCounter {
    private(set) var value = 0
    func bump() { value += 1 }
}

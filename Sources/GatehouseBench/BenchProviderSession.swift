import Foundation
import NIOCore
import NIOHTTP1

extension LoadRunner {
    /// The `provider-token` scenario's provider: the bench's OAuth 2.0 provider whose tokens the
    /// server keeps (`scripts/bench_idp.py`).
    static let keptProviderID = "bench-kept"

    /// Set-up of a `provider-token` virtual user: a sign-in through the provider's web flow, hop by
    /// hop as a browser would (start, the provider's instant approval, the callback with the flow's
    /// cookie, the app's code exchange), then its identity's id. Not measured.
    func providerSession(_ worker: Int) async throws -> Session {
        func fail(_ step: String, _ answer: BenchClient.Answer) -> BenchError {
            .setup("provider-token \(step) answered \(answer.status): \(String(buffer: answer.body).prefix(200))")
        }
        func location(_ answer: BenchClient.Answer) -> String? { answer.headers["location"].first }
        let started = try await client.get(
            target.socialStartPath(provider: Self.keptProviderID, challenge: Self.benchPKCE.challenge, state: "w\(worker)"))
        guard let providerURL = location(started),
            let cookie = started.headers["set-cookie"].first?.split(separator: ";").first.map(String.init)
        else { throw fail("social start", started) }
        let approved = try await client.get(url: providerURL)
        // The provider sends the browser to the server's public URL; the bench talks to the address it was given.
        guard let back = location(approved).flatMap(URLComponents.init(string:)) else { throw fail("the provider", approved) }
        let landed = try await client.get(back.percentEncodedPath + "?" + (back.percentEncodedQuery ?? ""), cookie: cookie)
        guard let code = location(landed).flatMap(URLComponents.init(string:))?.queryItems?.first(where: { $0.name == "code" })?.value
        else { throw fail("the callback", landed) }
        let tokens = try await client.send(target.exchange(code: code, verifier: Self.benchPKCE.verifier))
        guard let access = tokens.string("access_token") else { throw fail("the code exchange", tokens) }
        let listed = try await client.send(target.identities(access: access))
        guard let id = (listed.json?["identities"] as? [[String: Any]])?.first?["id"] as? String else {
            throw fail("the identity list", listed)
        }
        return Session(access: access, identityID: id)
    }
}

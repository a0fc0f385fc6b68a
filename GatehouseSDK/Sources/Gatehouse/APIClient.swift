import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where an answer that is a second-factor challenge is reported. Set once, by the client that owns the
/// ``APIClient``, after it is initialised (an actor cannot hand out itself before).
/// `@unchecked Sendable` is sound: the only stored properties are a lock (`NSLock` is thread-safe) and
/// a `@Sendable` closure read and written only while that lock is held (`Mutex` needs iOS 18).
final class ChallengeRelay: @unchecked Sendable {
    private let lock = NSLock()
    private var listener: (@Sendable (SecondFactorChallenge) async -> Void)?

    func listen(_ body: @escaping @Sendable (SecondFactorChallenge) async -> Void) { lock.withLock { listener = body } }

    func report(_ challenge: SecondFactorChallenge) async {
        let body = lock.withLock { listener }
        await body?(challenge)
    }
}

/// JSON and form requests to the server, and its errors turned into ``GatehouseError``.
struct APIClient: Sendable {
    let baseURL: URL
    let transport: any HTTPTransport
    /// DPoP proofs on the requests that need them, when the server advertises DPoP.
    let dpop: DPoPSigner
    /// Told of every answer that is a second-factor challenge, before it is thrown: the client's
    /// delegate and event stream report it (``AuthEvent/secondFactorRequired(_:)``).
    var challenges = ChallengeRelay()

    func request(_ method: String, _ path: String, query: [URLQueryItem] = [], bearer: String? = nil, clientID: String? = nil) -> URLRequest
    {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query; components.encodePlusForForms() }
        var request = URLRequest(url: components.url!)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let clientID { request.setValue(clientID, forHTTPHeaderField: "Gatehouse-Client") }
        return request
    }

    func json<Body: Encodable>(_ request: URLRequest, body: Body) throws -> URLRequest {
        var request = request
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try WireCoding.encoder().encode(body)
        return request
    }

    func form(_ request: URLRequest, _ fields: [(String, String)]) -> URLRequest {
        var request = request
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
                .joined(separator: "&").utf8)
        return request
    }

    /// Sends and decodes a 2xx answer; anything else becomes a ``GatehouseError``.
    func send<Answer: Decodable>(_ request: URLRequest, as: Answer.Type = Answer.self) async throws -> Answer {
        let (data, response) = try await perform(request)
        do {
            return try WireCoding.decoder().decode(Answer.self, from: data)
        } catch {
            throw GatehouseError(code: GatehouseError.invalidResponse, status: response.statusCode, message: "Unreadable answer.")
        }
    }

    /// Sends, expecting no body.
    func send(_ request: URLRequest) async throws {
        _ = try await perform(request)
    }

    /// Sends `request` with a DPoP proof when it needs one, once more with the server's nonce when the
    /// server asks for one (`use_dpop_nonce`); any status. Network failures are `network_error`.
    func exchange(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        do {
            if dpop.needsDiscovery { await discoverDPoP() }
            var (data, response) = try await transport.send(try await dpop.sign(request))
            if dpop.noteNonce(data, response, for: request.url) {
                (data, response) = try await transport.send(try await dpop.sign(request))
                _ = dpop.noteNonce(data, response, for: request.url)
            }
            return (data, response)
        } catch let error as GatehouseError {
            throw error
        } catch {
            throw GatehouseError(code: GatehouseError.networkError, status: nil, message: error.localizedDescription)
        }
    }

    /// Reads `dpop_signing_alg_values_supported` from the server's discovery document, once: DPoP is on
    /// when it lists ES256, off when the document does not or there is none (404). A network failure
    /// or another status (a 502 during a deploy) leaves it unknown, to ask again on the next request.
    private func discoverDPoP() async {
        var request = URLRequest(url: baseURL.appendingPathComponent(".well-known/openid-configuration"))
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        guard let (data, response) = try? await transport.send(request) else { return }
        if response.statusCode == 404 || response.statusCode == 410 { return dpop.setAdvertised(false) }
        guard (200..<300).contains(response.statusCode),
            let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return }
        let algorithms = document["dpop_signing_alg_values_supported"] as? [String] ?? []
        dpop.setAdvertised(algorithms.contains("ES256"))
    }

    func perform(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await exchange(request)
        guard (200..<300).contains(response.statusCode) else {
            let error = Self.error(data, response)
            if let challenge = error.secondFactor { await challenges.report(challenge) }
            throw error
        }
        return (data, response)
    }

    static func error(_ data: Data, _ response: HTTPURLResponse) -> GatehouseError {
        let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init)
        if let problem = try? WireCoding.decoder().decode(Problem.self, from: data) {
            return GatehouseError(
                code: problem.code, status: response.statusCode, message: problem.detail ?? problem.title,
                retryAfter: retryAfter, remainingAttempts: problem.remainingAttempts,
                validation: ValidationResult(errors: problem.errors ?? []), failureCounts: problem.failureCounts,
                secondFactor: problem.flowId.map {
                    SecondFactorChallenge(
                        flowID: $0, factors: (problem.factors ?? []).map { SecondFactorKind(rawValue: $0) },
                        requiresEnrolment: problem.enrol == true)
                })
        }
        if let oauth = try? WireCoding.decoder().decode(OAuthErrorBody.self, from: data) {
            return GatehouseError(
                code: ErrorCode(oauth.error), status: response.statusCode, message: oauth.errorDescription ?? oauth.error,
                retryAfter: retryAfter)
        }
        return GatehouseError(
            code: GatehouseError.invalidResponse, status: response.statusCode,
            message: HTTPURLResponse.localizedString(forStatusCode: response.statusCode), retryAfter: retryAfter)
    }
}

extension URLComponents {
    /// URLComponents leaves `+` as it is in a query, and the server (like every form decoder) reads it
    /// as a space: an address like `ann+news@example.com` must travel as `%2B`.
    mutating func encodePlusForForms() {
        percentEncodedQuery = percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
    }
}

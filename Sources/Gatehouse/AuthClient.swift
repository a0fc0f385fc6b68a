import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The entry point of the Gatehouse SDK.
///
/// This is the foundation's skeleton: sign-up and login over the shared wire types. Sessions that
/// persist and refresh themselves, the auth-state stream and the delegate arrive with the SDK issue.
public actor AuthClient {
    /// The server's base URL, such as `https://id.example.com`.
    public let baseURL: URL
    /// The application's client id, as `gatehouse clients create` printed it.
    public let clientID: String
    private let transport: any HTTPTransport
    private let encoder = WireCoding.encoder()
    private let decoder = WireCoding.decoder()

    /// The current authentication state.
    public private(set) var state: AuthState = .signedOut

    /// Creates a client for one Gatehouse server and one application.
    public init(baseURL: URL, clientID: String, transport: any HTTPTransport = URLSessionTransport()) {
        self.baseURL = baseURL
        self.clientID = clientID
        self.transport = transport
    }

    /// Signs in with email and password.
    public func logIn(email: String, password: String, scope: String? = nil) async throws -> TokenResponse {
        let tokens: TokenResponse = try await post(
            "/v1/login", LoginRequest(clientId: clientID, email: email, password: password, scope: scope))
        if let user = tokens.user { state = .signedIn(user) }
        return tokens
    }

    private func post<Body: Encodable, Answer: Decodable>(_ path: String, _ body: Body) async throws -> Answer {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try encoder.encode(body)
        let (data, response) = try await transport.send(request)
        guard (200..<300).contains(response.statusCode) else {
            throw (try? decoder.decode(Problem.self, from: data))
                ?? Problem(status: response.statusCode, code: .internalError, title: "Unexpected answer")
        }
        return try decoder.decode(Answer.self, from: data)
    }
}

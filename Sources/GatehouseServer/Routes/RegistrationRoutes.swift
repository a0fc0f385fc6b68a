import Foundation
import GatehouseCore
import Hummingbird
import NIOFoundationEssentialsCompat

/// `/oauth/register` (RFC 7591) and `/oauth/register/{client_id}` (RFC 7592: read, update, delete): JSON
/// in and out, OAuth errors, bearer tokens (the initial access token, then the registration token).
struct RegistrationRoutes: Sendable {
    let registration: ClientRegistration
    let issuer: String

    init(services: CoreServices) {
        self.registration = ClientRegistration(
            persistence: services.persistence, clock: services.clock, cache: services.clientCache, fetcher: services.social.http)
        self.issuer = services.tokens.issuer
    }

    @Sendable func register(_ request: Request, context: AppRequestContext) async throws -> Response {
        let metadata = try await Self.metadata(request)
        let registered = try await registration.register(metadata, initialToken: request.bearerToken, issuer: issuer, meta: context.meta)
        return try Responses.json(registered, status: .created, noStore: true)
    }

    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> Response {
        let clientID = try Self.clientID(context)
        let metadata = try await Self.metadata(request)
        let registered = try await registration.update(
            clientID: clientID, accessToken: request.bearerToken, metadata: metadata, issuer: issuer, meta: context.meta)
        return try Responses.json(registered, noStore: true)
    }

    static func metadata(_ request: Request) async throws -> [String: Any] {
        guard let contentType = request.headers[.contentType], RequestDecoding.isJSON(contentType) else {
            throw GatehouseError.unsupportedMediaType("Send the client metadata as application/json.")
        }
        let data = Data(buffer: try await RequestDecoding.collect(request))
        guard let metadata = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw GatehouseError.invalidClientMetadata("The body must be a JSON object of client metadata.")
        }
        return metadata
    }

    @Sendable func read(_ request: Request, context: AppRequestContext) async throws -> Response {
        let registered = try await registration.read(clientID: try Self.clientID(context), accessToken: request.bearerToken, issuer: issuer)
        return try Responses.json(registered, noStore: true)
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await registration.delete(clientID: try Self.clientID(context), accessToken: request.bearerToken, meta: context.meta)
        return Responses.noContent()
    }

    static func clientID(_ context: AppRequestContext) throws -> String {
        guard let id = context.parameters.get("client_id"), !id.isEmpty, id.count <= 100 else {
            throw GatehouseError.unauthorized("The registration access token is not valid for this client.")
        }
        return id
    }
}

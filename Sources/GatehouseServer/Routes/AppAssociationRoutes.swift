import Foundation
import GatehouseCore
import Hummingbird

/// The files that let native apps use this server's passkeys: Apple's app-site association
/// (`webcredentials`) and Android's Digital Asset Links (`get_login_creds`). Built once from the
/// configuration; 404 when no app of that platform is configured.
struct AppAssociationRoutes: Sendable {
    let apple: Data?
    let android: Data?

    init(settings: PasskeySettings) {
        apple =
            settings.appleAppIDs.isEmpty
            ? nil : try? JSONSerialization.data(withJSONObject: ["webcredentials": ["apps": settings.appleAppIDs]], options: [.sortedKeys])
        let statements: [[String: Any]] = settings.androidApps.map { app in
            [
                "relation": ["delegate_permission/common.get_login_creds", "delegate_permission/common.handle_all_urls"],
                "target": [
                    "namespace": "android_app", "package_name": app.packageName,
                    "sha256_cert_fingerprints": (app.fingerprintBytes ?? []).map { bytes in
                        bytes.map { String(format: "%02X", $0) }.joined(separator: ":")
                    },
                ],
            ]
        }
        android = statements.isEmpty ? nil : try? JSONSerialization.data(withJSONObject: statements, options: [.sortedKeys])
    }

    @Sendable func appleAppSiteAssociation(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let apple else { throw GatehouseError.notFound("No Apple app is configured.") }
        return Responses.raw(apple, contentType: "application/json", cacheSeconds: 3600)
    }

    @Sendable func assetLinks(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let android else { throw GatehouseError.notFound("No Android app is configured.") }
        return Responses.raw(android, contentType: "application/json", cacheSeconds: 3600)
    }
}

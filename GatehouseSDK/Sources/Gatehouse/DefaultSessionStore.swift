import Foundation

extension AuthClient.Configuration {
    /// The store a configuration gets when it names none: one that keeps the session across launches.
    ///
    /// - On Apple platforms, a ``KeychainSessionStore`` (service `gatehouse:<host>`, account the client
    ///   id), so two servers or two clients in one app never share an item.
    /// - Elsewhere, a ``FileSessionStore`` at
    ///   `<Application Support>/Gatehouse/<host>/<client id>/session.json` (on Linux the application
    ///   support directory is `$XDG_DATA_HOME`, by default `~/.local/share`).
    ///
    /// Memory only is never the default: an app that forgot to pass a store would sign its users out
    /// at every launch. Pass ``InMemorySessionStore`` when that is what you want.
    public static func defaultStore(baseURL: URL, clientID: String) -> any SessionStore {
        let host = baseURL.host ?? "localhost"
        let server = baseURL.port.map { "\(host):\($0)" } ?? host
        #if canImport(Security)
        return KeychainSessionStore(service: "gatehouse:\(server)", account: clientID)
        #else
        let support =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
        let directory = support.appendingPathComponent("Gatehouse", isDirectory: true)
            .appendingPathComponent(pathComponent(server), isDirectory: true)
            .appendingPathComponent(pathComponent(clientID), isDirectory: true)
        return FileSessionStore(url: directory.appendingPathComponent("session.json"))
        #endif
    }

    /// A name that stays one path component whatever the client id holds (`/`, `..`).
    static func pathComponent(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")
        let mapped = String(name.map { allowed.contains($0) ? $0 : "_" })
        return mapped.allSatisfy({ $0 == "." }) ? "_" + mapped : mapped
    }
}

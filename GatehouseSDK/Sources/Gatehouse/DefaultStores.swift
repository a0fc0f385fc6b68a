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
        #if canImport(Security)
            return KeychainSessionStore(service: "gatehouse:\(serverName(baseURL))", account: clientID)
        #else
            return FileSessionStore(url: defaultDirectory(baseURL: baseURL, clientID: clientID).appendingPathComponent("session.json"))
        #endif
    }

    /// `host` or `host:port`: one Keychain service or folder per server.
    static func serverName(_ baseURL: URL) -> String {
        let host = baseURL.host ?? "localhost"
        return baseURL.port.map { "\(host):\($0)" } ?? host
    }

    /// `<Application Support>/Gatehouse/<host>/<client id>/`, where the default file stores live.
    static func defaultDirectory(baseURL: URL, clientID: String) -> URL {
        let support =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/share", isDirectory: true)
        return support.appendingPathComponent("Gatehouse", isDirectory: true)
            .appendingPathComponent(pathComponent(serverName(baseURL)), isDirectory: true)
            .appendingPathComponent(pathComponent(clientID), isDirectory: true)
    }

    /// A name that stays one path component whatever the client id holds (`/`, `..`).
    static func pathComponent(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")
        let mapped = String(name.map { allowed.contains($0) ? $0 : "_" })
        return mapped.allSatisfy({ $0 == "." }) ? "_" + mapped : mapped
    }
}

extension DeviceProfiles.Configuration {
    /// The device store a configuration gets when it names none: beside the client's session, kept
    /// across launches — a ``KeychainDeviceStore`` on Apple platforms (service `gatehouse:<host>`,
    /// account `<client id>.device`), a ``FileDeviceStore`` (`device.json`) next to the default
    /// session file elsewhere. A profile's PIN key that vanished at relaunch would strand the user.
    public static func defaultStore(baseURL: URL, clientID: String) -> any DeviceStore {
        #if canImport(Security)
            return KeychainDeviceStore(service: "gatehouse:\(AuthClient.Configuration.serverName(baseURL))", account: clientID + ".device")
        #else
            return FileDeviceStore(
                url: AuthClient.Configuration.defaultDirectory(baseURL: baseURL, clientID: clientID).appendingPathComponent("device.json"))
        #endif
    }
}

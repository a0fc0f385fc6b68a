#if canImport(Security)
import Foundation
import Security

/// The session in the Keychain, shared with app extensions through an access group.
public struct KeychainSessionStore: SessionStore {
    public let service: String
    public let account: String
    public let accessGroup: String?

    public init(service: String = "gatehouse", account: String = "session", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    private func query(account: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private var item: KeychainItem { KeychainItem(service: service, account: account, accessGroup: accessGroup) }

    public func load() async throws -> StoredSession? {
        try item.read().map { try JSONDecoder.gatehouse.decode(StoredSession.self, from: $0) }
    }

    public func save(_ session: StoredSession) async throws {
        try item.write(try JSONEncoder.gatehouse.encode(session))
    }

    public func savePendingVerifier(_ verifier: String?) async throws {
        let itemQuery = query(account: account + ".pkce")
        SecItemDelete(itemQuery as CFDictionary)
        guard let verifier else { return }
        var add = itemQuery
        add[kSecValueData as String] = Data(verifier.utf8)
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(add as CFDictionary, nil)
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    public func loadPendingVerifier() async throws -> String? {
        var request = query(account: account + ".pkce")
        request[kSecReturnData as String] = true
        var item: CFTypeRef?
        let status = SecItemCopyMatching(request as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
        return String(decoding: data, as: UTF8.self)
    }

    public func clear() async throws { try item.delete() }
}

/// A Keychain call failed with this `OSStatus`.
public struct KeychainError: Error, Sendable {
    public let status: OSStatus
}
#endif

#if canImport(Security) || GATEHOUSE_SECURITY_SHIM
    import Foundation
    #if canImport(Security)
        import Security
    #else
        // Linux type-check builds only (GATEHOUSE_SECURITY_SHIM): the same calls against a stand-in.
        import SecurityShim
    #endif

    /// One generic-password item: this device only, readable after first unlock.
    struct KeychainItem: Sendable {
        let service: String
        let account: String
        let accessGroup: String?

        var query: [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        func read() throws -> Data? {
            var item: CFTypeRef?
            var request = query
            request[kSecReturnData as String] = true
            let status = SecItemCopyMatching(request as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
            return data
        }

        func write(_ data: Data) throws {
            let update = [kSecValueData as String: data] as CFDictionary
            var status = SecItemUpdate(query as CFDictionary, update)
            if status == errSecItemNotFound {
                var add = query
                add[kSecValueData as String] = data
                add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                status = SecItemAdd(add as CFDictionary, nil)
                // Another process added it between our update and our add: update theirs.
                if status == errSecDuplicateItem { status = SecItemUpdate(query as CFDictionary, update) }
            }
            guard status == errSecSuccess else { throw KeychainError(status: status) }
        }

        func delete() throws {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
        }
    }
#endif

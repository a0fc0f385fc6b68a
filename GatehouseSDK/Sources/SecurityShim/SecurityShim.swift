// A stand-in for the part of Apple's Security framework the SDK calls (generic-password items; the
// Secure Enclave's part is in EnclaveShim.swift), so that Linux CI type-checks and runs the
// Keychain stores' code. It is built only when the SDK's
// manifest is evaluated with GATEHOUSE_SECURITY_SHIM=1 (scripts/check-apple-paths), never into an
// app. The signatures follow Apple's: `CFDictionary` is a `[String: Any]` here, so the SDK's
// `query as CFDictionary` casts compile unchanged on both. Hand-written: no package offers this.
import Foundation

public typealias OSStatus = Int32
public typealias CFString = String
public typealias CFDictionary = [String: Any]
public typealias CFTypeRef = AnyObject

public let errSecSuccess: OSStatus = 0
public let errSecParam: OSStatus = -50
public let errSecDuplicateItem: OSStatus = -25299
public let errSecItemNotFound: OSStatus = -25300
/// Apple's answer for a protected item before the device's first unlock.
public let errSecInteractionNotAllowed: OSStatus = -25308

public let kSecClass: CFString = "class"
public let kSecClassGenericPassword: CFString = "genp"
public let kSecAttrService: CFString = "svce"
public let kSecAttrAccount: CFString = "acct"
public let kSecAttrAccessGroup: CFString = "agrp"
public let kSecAttrAccessible: CFString = "pdmn"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
public let kSecValueData: CFString = "v_Data"
public let kSecReturnData: CFString = "r_Data"

public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    ShimKeychain.shared.add(attributes)
}

public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    ShimKeychain.shared.update(query, attributesToUpdate)
}

public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    let (status, data) = ShimKeychain.shared.copy(query)
    if let data, query[kSecReturnData] as? Bool == true { result?.pointee = data as AnyObject }
    return status
}

public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    ShimKeychain.shared.delete(query)
}

/// What tests may do to the stand-in that Apple's Keychain does on its own.
public enum SecurityShimControl {
    /// Every call answers `errSecInteractionNotAllowed` while `true`, as before first unlock.
    public static func setLocked(_ locked: Bool) { ShimKeychain.shared.state.withLock { $0.locked = locked } }
}

/// The items, in memory, behind one lock.
final class ShimKeychain: Sendable {
    static let shared = ShimKeychain()

    fileprivate struct Key: Hashable {
        var service: String
        var account: String
        var accessGroup: String?
    }

    struct State {
        fileprivate var items: [Key: (data: Data, accessible: String)] = [:]
        var locked = false
    }

    let state = Locked(State())

    /// The attributes of a query; `nil` for one the SDK should never send.
    private func parse(_ query: CFDictionary) -> (service: String, account: String, group: String?)? {
        guard query[kSecClass] as? String == kSecClassGenericPassword, let service = query[kSecAttrService] as? String,
            let account = query[kSecAttrAccount] as? String
        else { return nil }
        return (service, account, query[kSecAttrAccessGroup] as? String)
    }

    private func matches(_ key: Key, _ q: (service: String, account: String, group: String?)) -> Bool {
        key.service == q.service && key.account == q.account && (q.group == nil || key.accessGroup == q.group)
    }

    func add(_ attributes: CFDictionary) -> OSStatus {
        state.withLock { state in
            if state.locked { return errSecInteractionNotAllowed }
            guard let q = parse(attributes), let data = attributes[kSecValueData] as? Data else { return errSecParam }
            let accessible = attributes[kSecAttrAccessible] as? String ?? kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            let key = Key(service: q.service, account: q.account, accessGroup: q.group)
            guard state.items[key] == nil else { return errSecDuplicateItem }
            state.items[key] = (data, accessible)
            return errSecSuccess
        }
    }

    func update(_ query: CFDictionary, _ changes: CFDictionary) -> OSStatus {
        state.withLock { state in
            if state.locked { return errSecInteractionNotAllowed }
            guard let q = parse(query), let data = changes[kSecValueData] as? Data else { return errSecParam }
            let keys = state.items.keys.filter { matches($0, q) }
            guard !keys.isEmpty else { return errSecItemNotFound }
            for key in keys { state.items[key]?.data = data }
            return errSecSuccess
        }
    }

    func copy(_ query: CFDictionary) -> (OSStatus, Data?) {
        state.withLock { state in
            if state.locked { return (errSecInteractionNotAllowed, nil) }
            guard let q = parse(query) else { return (errSecParam, nil) }
            guard let key = state.items.keys.first(where: { matches($0, q) }) else { return (errSecItemNotFound, nil) }
            return (errSecSuccess, state.items[key]?.data)
        }
    }

    func delete(_ query: CFDictionary) -> OSStatus {
        state.withLock { state in
            if state.locked { return errSecInteractionNotAllowed }
            guard let q = parse(query) else { return errSecParam }
            let keys = state.items.keys.filter { matches($0, q) }
            guard !keys.isEmpty else { return errSecItemNotFound }
            for key in keys { state.items[key] = nil }
            return errSecSuccess
        }
    }
}

import Foundation

/// Where the device's profiles and key material live between launches: the Keychain on Apple
/// platforms, a 0600 file on Linux, memory in tests.
public protocol DeviceStore: Sendable {
    func load() async throws -> DeviceState?
    func save(_ state: DeviceState) async throws
    func clear() async throws
}

/// A device store that forgets everything when the process ends.
public actor InMemoryDeviceStore: DeviceStore {
    private var state: DeviceState?
    public init() {}
    public func load() async throws -> DeviceState? { state }
    public func save(_ state: DeviceState) async throws { self.state = state }
    public func clear() async throws { state = nil }
}

/// The device state in a file readable only by its owner (0600), replaced atomically.
public struct FileDeviceStore: DeviceStore {
    public let url: URL
    public init(url: URL) { self.url = url }

    public func load() async throws -> DeviceState? {
        guard let data = FileManager.default.contents(atPath: url.path), !data.isEmpty else { return nil }
        return try JSONDecoder.gatehouse.decode(DeviceState.self, from: data)
    }

    public func save(_ state: DeviceState) async throws {
        try AtomicFile.write(try JSONEncoder.gatehouse.encode(state), to: url)
    }

    public func clear() async throws {
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }
}

#if canImport(Security) || GATEHOUSE_SECURITY_SHIM

    /// The device state in the Keychain, this device only, after first unlock.
    public struct KeychainDeviceStore: DeviceStore {
        let items: KeychainItem

        public init(service: String = "gatehouse", account: String = "device", accessGroup: String? = nil) {
            items = KeychainItem(service: service, account: account, accessGroup: accessGroup)
        }

        public func load() async throws -> DeviceState? {
            try items.read().map { try JSONDecoder.gatehouse.decode(DeviceState.self, from: $0) }
        }

        public func save(_ state: DeviceState) async throws { try items.write(try JSONEncoder.gatehouse.encode(state)) }
        public func clear() async throws { try items.delete() }
    }
#endif

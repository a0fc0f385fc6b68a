// swift-tools-version:6.0
import PackageDescription

// The Gatehouse client SDK alone, for its development: `swift test --package-path GatehouseSDK` and the
// Keychain shim build below. Apps add the SDK by the repository's URL instead: the root manifest
// declares the same three targets (GatehouseAPI, Argon2, Gatehouse) over these sources, and its
// `Gatehouse` product builds nothing of the server. Keep the two target lists in step.

// GATEHOUSE_SECURITY_SHIM=1 (Linux CI only, scripts/check-apple-paths) compiles the Keychain stores
// and the Secure Enclave key provider against stand-ins for Apple's Security, CryptoKit Secure
// Enclave and LocalAuthentication calls, so that code is type-checked and tested where no Apple SDK
// exists.
let securityShim = Context.environment["GATEHOUSE_SECURITY_SHIM"] == "1"

var sdkDependencies: [Target.Dependency] = ["GatehouseAPI", "Argon2", .product(name: "Crypto", package: "swift-crypto")]
var sdkSettings: [SwiftSetting] = []
var shimTargets: [Target] = []
if securityShim {
    sdkDependencies.append("SecurityShim")
    sdkSettings.append(.define("GATEHOUSE_SECURITY_SHIM"))
    shimTargets.append(.target(name: "SecurityShim", dependencies: [.product(name: "Crypto", package: "swift-crypto")]))
}

let package = Package(
    name: "GatehouseSDK",
    platforms: [.iOS(.v15), .macOS(.v14), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "Gatehouse", targets: ["Gatehouse"]),
        .library(name: "GatehouseAPI", targets: ["GatehouseAPI"]),
        // RFC 9106 in Swift, shared: the server hashes passwords with it, the SDK derives PIN keys.
        .library(name: "Argon2", targets: ["Argon2"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
    ],
    targets: [
        // Wire types shared by the server and the SDK: Foundation only.
        .target(name: "GatehouseAPI"),
        // RFC 9106 in Swift: no listed package offers Argon2 and a system library would break the
        // two-command set-up (and an app's build).
        .target(name: "Argon2"),
        .target(name: "Gatehouse", dependencies: sdkDependencies, swiftSettings: sdkSettings),
        // The SDK against a scripted transport and clock: refresh timing, error mapping, event order.
        // Also compiled into the root package's `swift test` (see its manifest).
        .testTarget(
            name: "GatehouseUnitTests",
            dependencies: ["Gatehouse"] + (securityShim ? ["SecurityShim", .product(name: "Crypto", package: "swift-crypto")] : []),
            swiftSettings: sdkSettings),
    ] + shimTargets
)

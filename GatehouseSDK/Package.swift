// swift-tools-version:6.0
import PackageDescription

// The Gatehouse client SDK, a package of its own so that it can declare the platforms apps ship on
// (the server needs macOS 14) and depend on nothing but Foundation and swift-crypto.
let package = Package(
    name: "GatehouseSDK",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "Gatehouse", targets: ["Gatehouse"]),
        .library(name: "GatehouseAPI", targets: ["GatehouseAPI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
    ],
    targets: [
        // Wire types shared by the server and the SDK: Foundation only.
        .target(name: "GatehouseAPI"),
        .target(
            name: "Gatehouse",
            dependencies: ["GatehouseAPI", .product(name: "Crypto", package: "swift-crypto")]
        ),
    ]
)

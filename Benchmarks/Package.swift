// swift-tools-version: 6.1
// Benchmarks for Processed, kept out of the main package so that it stays dependency-free.
// Run with `Benchmarks/run.sh` (see Documentation/Performance.md).
import PackageDescription

let package = Package(
  name: "ProcessedBenchmarks",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [
    .package(name: "Processed", path: ".."),
    .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    .package(url: "https://github.com/ordo-one/malloc-interposer", exact: "1.6.1"),
  ],
  targets: [
    .target(
      name: "HandWritten",
      dependencies: [.product(name: "Processed", package: "Processed")],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "ProfileScenario",
      dependencies: ["HandWritten", .product(name: "Processed", package: "Processed")],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "MainLoopScenario",
      dependencies: ["HandWritten", .product(name: "Processed", package: "Processed")],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "ProcessedBenchmarks",
      dependencies: [
        "HandWritten",
        .product(name: "Processed", package: "Processed"),
        .product(name: "ProcessedStorage", package: "Processed"),
        .product(name: "ProcessedTesting", package: "Processed"),
        .product(name: "OpenCombine", package: "OpenCombine"),
        .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)

// swift-tools-version: 6.2
import PackageDescription

let package = Package(
  name: "Processed",
  platforms: [
    .macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1),
  ],
  products: [
    .library(name: "Processed", targets: ["Processed"]),
    .library(name: "ProcessedTesting", targets: ["ProcessedTesting"]),
    .library(name: "ProcessedStorage", targets: ["ProcessedStorage"]),
  ],
  targets: [
    .target(name: "CProcessedAtomics"),
    .target(name: "Processed", dependencies: ["CProcessedAtomics"], exclude: ["Unsafe/README.md"]),
    .target(name: "ProcessedTesting", dependencies: ["Processed"]),
    .target(name: "ProcessedStorage", dependencies: ["Processed"]),
    .testTarget(name: "ProcessedTests", dependencies: ["Processed", "ProcessedTesting"]),
    .testTarget(name: "ProcessedStorageTests", dependencies: ["ProcessedStorage", "Processed", "ProcessedTesting"]),
    .executableTarget(name: "Demo", dependencies: ["Processed"], path: "Playgrounds/Demo"),
    .executableTarget(name: "Stories", dependencies: ["Processed"], path: "Playgrounds/Stories"),
    .executableTarget(name: "Requests", dependencies: ["Processed"], path: "Playgrounds/Requests"),
    .executableTarget(
      name: "Persistence", dependencies: ["Processed", "ProcessedStorage"], path: "Playgrounds/Persistence"),
  ],
  swiftLanguageModes: [.v6]
)

let upcomingFeatures = ["ExistentialAny", "InternalImportsByDefault", "MemberImportVisibility"]
for target in package.targets where target.name != "CProcessedAtomics" {
  var settings = target.swiftSettings ?? []
  settings += upcomingFeatures.map { .enableUpcomingFeature($0) }
  target.swiftSettings = settings
}

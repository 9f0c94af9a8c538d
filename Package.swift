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
  ],
  targets: [
    .target(name: "CProcessedAtomics"),
    .target(name: "Processed", dependencies: ["CProcessedAtomics"], exclude: ["Unsafe/README.md"]),
    .target(name: "ProcessedTesting", dependencies: ["Processed"]),
    .testTarget(name: "ProcessedTests", dependencies: ["Processed", "ProcessedTesting"]),
    .executableTarget(name: "Demo", dependencies: ["Processed"], path: "Playgrounds/Demo"),
    .executableTarget(name: "Stories", dependencies: ["Processed"], path: "Playgrounds/Stories"),
    .executableTarget(name: "Requests", dependencies: ["Processed"], path: "Playgrounds/Requests"),
  ],
  swiftLanguageModes: [.v6]
)

let upcomingFeatures = ["ExistentialAny", "InternalImportsByDefault", "MemberImportVisibility"]
for target in package.targets where target.name != "CProcessedAtomics" {
  var settings = target.swiftSettings ?? []
  settings += upcomingFeatures.map { .enableUpcomingFeature($0) }
  target.swiftSettings = settings
}

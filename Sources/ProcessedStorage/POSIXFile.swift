#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Android)
  import Android
#else
  #error("ProcessedStorage needs a POSIX C library (Darwin, Glibc, Musl or Android)")
#endif

/// The few POSIX calls `FileCacheStorage` makes itself, so that their semantics are the same on every platform:
/// `rename(2)` replaces its target atomically, `open(2)` with `O_EXCL` never reuses a file, `fsync(2)` makes a
/// temporary file durable before it is renamed, and a missing file is told apart from an unreadable one.
///
/// Failures throw ``FileCacheStorageError/fileSystem(operation:path:code:)``.
enum POSIXFile {
  /// The contents of the file at `path`, or `nil` when there is no file there (`ENOENT`).
  static func read(at path: String) throws -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      let code = errno
      if code == ENOENT { return nil }
      throw FileCacheStorageError.fileSystem(operation: "open", path: path, code: code)
    }
    defer { _ = close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { buffer in
        Self.systemRead(descriptor, buffer.baseAddress, buffer.count)
      }
      if count == 0 { return bytes }
      if count < 0 {
        let code = errno
        if code == EINTR { continue }
        throw FileCacheStorageError.fileSystem(operation: "read", path: path, code: code)
      }
      bytes.append(contentsOf: chunk[0..<count])
    }
  }

  /// Creates a new file at `path` (failing if one exists) holding `bytes`, with `modified` as its modification date,
  /// flushed to the disk; the file is deleted again when any step fails.
  static func create(at path: String, bytes: [UInt8], modified: Double) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw FileCacheStorageError.fileSystem(operation: "open", path: path, code: errno)
    }
    var closed = false
    do {
      try bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
          let count = Self.systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
          if count < 0 {
            let code = errno
            if code == EINTR { continue }
            throw FileCacheStorageError.fileSystem(operation: "write", path: path, code: code)
          }
          offset += count
        }
      }
      let seconds = modified.rounded(.down)
      let nanoseconds = min(999_999_999, Int(((modified - seconds) * 1e9).rounded()))
      var times = [timespec](
        repeating: timespec(tv_sec: time_t(seconds), tv_nsec: nanoseconds), count: 2)
      guard futimens(descriptor, &times) == 0 else {
        throw FileCacheStorageError.fileSystem(operation: "futimens", path: path, code: errno)
      }
      guard fsync(descriptor) == 0 else {
        throw FileCacheStorageError.fileSystem(operation: "fsync", path: path, code: errno)
      }
      closed = true
      guard close(descriptor) == 0 else {
        throw FileCacheStorageError.fileSystem(operation: "close", path: path, code: errno)
      }
    } catch {
      if !closed { _ = close(descriptor) }
      _ = unlink(path)
      throw error
    }
  }

  /// Renames `source` to `destination`, atomically replacing any file there (`rename(2)`): a reader sees the old
  /// file or the new one, never a mix, and a crash leaves one of them.
  static func rename(_ source: String, to destination: String) throws {
    #if canImport(Darwin)
      let result = Darwin.rename(source, destination)
    #elseif canImport(Glibc)
      let result = Glibc.rename(source, destination)
    #elseif canImport(Musl)
      let result = Musl.rename(source, destination)
    #else
      let result = Android.rename(source, destination)
    #endif
    guard result == 0 else {
      throw FileCacheStorageError.fileSystem(operation: "rename", path: destination, code: errno)
    }
  }

  /// Deletes the file at `path`; returns whether there was one (a missing file is not an error).
  @discardableResult
  static func remove(at path: String) throws -> Bool {
    guard unlink(path) == 0 else {
      let code = errno
      if code == ENOENT { return false }
      throw FileCacheStorageError.fileSystem(operation: "unlink", path: path, code: code)
    }
    return true
  }

  /// Creates the directory at `path` and any missing parent (`mkdir -p`); an existing directory is left as it is.
  static func createDirectory(at path: String) throws {
    var code = mkdir(path, 0o755) == 0 ? 0 : errno
    if code == ENOENT, let parent = parent(of: path) {
      // A missing parent: create it, then try again (another process may create either meanwhile: EEXIST).
      try createDirectory(at: parent)
      code = mkdir(path, 0o755) == 0 ? 0 : errno
    }
    // EEXIST: there is a directory already, or a file, which makes the next open fail with ENOTDIR.
    guard code == 0 || code == EEXIST else {
      throw FileCacheStorageError.fileSystem(operation: "mkdir", path: path, code: code)
    }
  }

  /// The path of the directory holding `path` (`a/b/` → `a`), or `nil` when it has none (`a`, `/`, `/a`).
  private static func parent(of path: String) -> String? {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
    guard let slash = trimmed.lastIndex(of: "/"), slash > trimmed.startIndex else { return nil }
    return String(trimmed[..<slash])
  }

  /// The size and modification date (seconds since 1970) of the regular file at `path`, without following a
  /// symbolic link; `nil` when there is no file there or it is not a regular file.
  static func regularFileStatus(at path: String) throws -> (bytes: Int, modified: Double)? {
    var status = stat()
    guard lstat(path, &status) == 0 else {
      let code = errno
      if code == ENOENT { return nil }
      throw FileCacheStorageError.fileSystem(operation: "lstat", path: path, code: code)
    }
    guard status.st_mode & S_IFMT == S_IFREG else { return nil }
    #if canImport(Darwin)
      let modified = status.st_mtimespec
    #else
      let modified = status.st_mtim
    #endif
    return (Int(status.st_size), Double(modified.tv_sec) + Double(modified.tv_nsec) / 1e9)
  }

  // The C library's `read(2)` and `write(2)`, named through its module: this type's `read(at:)` hides the bare name.
  #if canImport(Darwin)
    private static let (systemRead, systemWrite): (SystemRead, SystemWrite) = (Darwin.read, Darwin.write)
  #elseif canImport(Glibc)
    private static let (systemRead, systemWrite): (SystemRead, SystemWrite) = (Glibc.read, Glibc.write)
  #elseif canImport(Musl)
    private static let (systemRead, systemWrite): (SystemRead, SystemWrite) = (Musl.read, Musl.write)
  #else
    private static let (systemRead, systemWrite): (SystemRead, SystemWrite) = (Android.read, Android.write)
  #endif

  private typealias SystemRead = @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int
  private typealias SystemWrite = @Sendable (Int32, UnsafeRawPointer?, Int) -> Int
}

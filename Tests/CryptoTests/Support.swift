import Crypto
import Foundation

/// Bytes of hex text in test vectors (the text is known good).
func hex(_ text: String) -> [UInt8] {
    Hex.decode(text.replacingOccurrences(of: " ", with: ""))!
}

/// Bytes of ASCII/UTF-8 text.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A fresh private directory for one test, removed by the caller.
func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "crypto-tests-" + Hex.encode(SecureRandom.bytes(8))
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

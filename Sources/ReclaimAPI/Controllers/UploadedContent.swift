import HTTPServer
import ReclaimOperations

/// A request body or form file, spooled or in memory, is what the evidence operations read an upload from.
extension BodyContent: UploadedBytes {
    /// The first `count` bytes.
    public func head(_ count: Int) throws -> [UInt8] { try prefix(count) }
}

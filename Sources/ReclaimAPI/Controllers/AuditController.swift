import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimOperations
import ReclaimStore

/// `/api/v1/audit/…` (no sign-in): the transparency log's latest signed checkpoint, its verifier key, and RFC 9162
/// inclusion and consistency proofs, so that anyone holding a checkpoint can check it; and `/api/v1/admin/checkpoint`
/// (admins), whether the service's own tree still extends its latest checkpoint.
final class AuditController: Sendable {
    let context: ServiceContext

    init(context: ServiceContext) {
        self.context = context
    }

    private var origin: String { context.configuration.logOrigin }

    /// `GET /api/v1/audit/checkpoint`: the latest checkpoint as a signed note (`text/plain`).
    @Sendable func checkpoint(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let latest = try context.pool.withConnection({ try TransparencyLogStore.latestCheckpoint(on: $0) }) else {
            throw Problem.unavailable(retryAfter: 2, detail: "The first checkpoint is being signed; try again in a moment.")
        }
        return .text(latest.note)
    }

    /// `GET /api/v1/audit/key`: `<origin>+<hex key id>+<base64(0x01 ‖ public key)>` of the active checkpoint key.
    @Sendable func key(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let keys = context.keys, let key = TransparencyLog.verifierKey(origin: origin, keys: keys) else {
            throw Problem.unavailable(retryAfter: 60, detail: "The service has no checkpoint key.")
        }
        return .text(key.description)
    }

    /// `GET /api/v1/audit/proof?leaf=&size=`: `{"hashes"}`, RFC 9162 §2.1.3 PATH(leaf, D[0:size]).
    @Sendable func inclusion(_ request: HTTPRequest) throws -> HTTPResponse {
        let leaf = try Self.count(request, "leaf", minimum: 0)
        let size = try Self.count(request, "size", minimum: 1)
        let proof = try context.pool.withConnection { connection -> [MerkleTree.Hash] in
            let tree = try TransparencyLogStore.size(on: connection)
            var errors: [FieldError] = []
            if size > tree { errors.append(FieldError(field: "size", message: "the tree has \(tree) leaves")) }
            if leaf >= size { errors.append(FieldError(field: "leaf", message: "must be below size")) }
            guard errors.isEmpty else { throw Problem.unprocessable(errors: errors) }
            return try TransparencyLogStore.inclusionProof(leaf: leaf, size: size, on: connection)
        }
        return Self.hashes(proof)
    }

    /// `GET /api/v1/audit/consistency?from=&to=`: `{"hashes"}`, RFC 9162 §2.1.4 PROOF(from, D[0:to]).
    @Sendable func consistency(_ request: HTTPRequest) throws -> HTTPResponse {
        let from = try Self.count(request, "from", minimum: 1)
        let to = try Self.count(request, "to", minimum: 1)
        let proof = try context.pool.withConnection { connection -> [MerkleTree.Hash] in
            let tree = try TransparencyLogStore.size(on: connection)
            var errors: [FieldError] = []
            if to > tree { errors.append(FieldError(field: "to", message: "the tree has \(tree) leaves")) }
            if from > to { errors.append(FieldError(field: "from", message: "must not exceed to")) }
            guard errors.isEmpty else { throw Problem.unprocessable(errors: errors) }
            return try TransparencyLogStore.consistencyProof(from: from, to: to, on: connection)
        }
        return Self.hashes(proof)
    }

    /// `GET /api/v1/admin/checkpoint` (admins): the latest checkpoint, today's tree, and whether the tree extends it
    /// (signature, size, consistency proof: the server's verdict, so the page recomputes nothing).
    @Sendable func adminCheckpoint(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.administer, request)
        guard case .agent = principal, let keys = context.keys else { throw Problem.forbidden(detail: "Only admin agents may do this.") }
        let body: JSONValue = try context.pool.withTransaction(isolation: .repeatableRead) { connection in
            let size = try TransparencyLogStore.size(on: connection)
            let root = try TransparencyLogStore.root(size: size, on: connection)
            var members: [String: JSONValue] = [
                "tree_size": .int(Int64(size)), "root_hash": .string(Data(root).base64EncodedString()),
                "pending": .int(Int64(try TransparencyLogStore.pendingCount(on: connection))),
                "verifier_key": .optional(TransparencyLog.verifierKey(origin: origin, keys: keys)?.description),
                "checkpoint": .null, "verified": .bool(false), "problem": .string("No checkpoint has been signed yet."),
            ]
            if let latest = try TransparencyLogStore.latestCheckpoint(on: connection) {
                let verdict = try TransparencyLog.verify(note: latest.note, origin: origin, keys: keys, size: size, root: root, on: connection)
                members["checkpoint"] = [
                    "note": .string(latest.note), "tree_size": .int(Int64(latest.size)),
                    "root_hash": .string(Data(latest.root).base64EncodedString()), "signed_at": Timestamp.json(latest.createdAt),
                    "key_id": .string(latest.keyID),
                ]
                members["verified"] = .bool(verdict.verified)
                members["problem"] = .optional(verdict.problem)
            }
            return .object(members)
        }
        return CaseHTTP.json(body)
    }

    /// A query parameter that must be a whole number ≥ `minimum`; 422 naming it otherwise.
    private static func count(_ request: HTTPRequest, _ name: String, minimum: Int) throws -> Int {
        guard let text = request.query(name), !text.isEmpty else {
            throw Problem.unprocessable(errors: [FieldError(field: name, message: "required: a whole number")])
        }
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text), value >= minimum else {
            throw Problem.unprocessable(errors: [FieldError(field: name, message: "must be a whole number of at least \(minimum)")])
        }
        return value
    }

    private static func hashes(_ proof: [MerkleTree.Hash]) -> HTTPResponse {
        CaseHTTP.json(["hashes": .array(proof.map { .string(Data($0).base64EncodedString()) })])
    }
}

extension OpenAPIDocument {
    /// The transparency log's schemas.
    nonisolated(unsafe) static let auditSchemas: [String: Any] = [  // immutable after initialisation
        "AuditProof": [
            "type": "object", "required": ["hashes"],
            "properties": [
                "hashes": [
                    "type": "array", "items": ["type": "string", "contentEncoding": "base64"],
                    "description": "The proof's SHA-256 hashes, base64, in RFC 9162 order.",
                ]
            ],
        ],
        "AdminCheckpoint": [
            "type": "object", "required": ["tree_size", "root_hash", "pending", "verifier_key", "checkpoint", "verified", "problem"],
            "properties": [
                "tree_size": ["type": "integer", "description": "Leaves in the tree now."],
                "root_hash": ["type": "string", "contentEncoding": "base64"],
                "pending": ["type": "integer", "description": "Events committed but not yet in the tree."],
                "verifier_key": ["type": ["string", "null"]],
                "checkpoint": [
                    "type": ["object", "null"], "required": ["note", "tree_size", "root_hash", "signed_at", "key_id"],
                    "properties": [
                        "note": ["type": "string", "description": "The signed note, as GET /api/v1/audit/checkpoint answers it."],
                        "tree_size": ["type": "integer"], "root_hash": ["type": "string", "contentEncoding": "base64"],
                        "signed_at": ["type": "string", "format": "date-time"], "key_id": ["type": "string"],
                    ],
                ],
                "verified": [
                    "type": "boolean", "description": "The checkpoint's signature holds and today's tree extends it (consistency proof checked).",
                ],
                "problem": ["type": ["string", "null"]],
            ],
        ],
    ]
}

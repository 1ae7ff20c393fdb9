import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// What the transparency log is configured with.
public struct TransparencyLogSettings: Sendable {
    /// The checkpoints' origin line and the note key's name (`RECLAIM_LOG_ORIGIN`).
    public var origin: String
    /// Least seconds between two checkpoints (`RECLAIM_CHECKPOINT_SECONDS`, default 3600).
    public var checkpointInterval: TimeInterval
    /// Events appended per transaction.
    public var batchSize = 1000

    /// Settings for `origin`, a checkpoint at most every `checkpointInterval` seconds.
    public init(origin: String, checkpointInterval: TimeInterval) {
        self.origin = origin
        self.checkpointInterval = checkpointInterval
    }
}

/// The transparency log (api.md v1.2 "Signed checkpoints"): every timeline event and admin-log entry a leaf of one
/// RFC 9162 tree, in commit order, and signed checkpoints of it that partners keep, so that a history rewritten in
/// the database, chains recomputed, no longer extends what they hold.
public enum TransparencyLog {
    /// What one sequencer pass did.
    public struct Pass: Sendable, Equatable {
        /// Leaves appended.
        public let appended: Int
        /// The tree's size afterwards.
        public let size: Int
        /// The checkpoint signed in this pass, if one was due.
        public let checkpoint: StoredCheckpoint?
    }

    /// One sequencer pass, in the caller's transaction: nil when another session holds the sequencer's lock; otherwise
    /// appends up to a batch of committed events and, when one is due (none yet, or the tree grew and the last is at
    /// least `checkpointInterval` old), signs a checkpoint with the key file's active `checkpoint` key, stores it and
    /// queues `audit.checkpoint` for every subscribed endpoint, all in that transaction.
    public static func sequence(settings: TransparencyLogSettings, keys: KeyFile?, at now: Date, on connection: PostgresConnection) throws -> Pass? {
        guard try TransparencyLogStore.trySequencerLock(on: connection) else { return nil }
        let (frontier, appended) = try TransparencyLogStore.sequence(limit: settings.batchSize, on: connection)
        guard let keys else { return Pass(appended: appended, size: frontier.size, checkpoint: nil) }
        let latest = try TransparencyLogStore.latestCheckpoint(on: connection)
        if let latest, frontier.size <= latest.size || now < latest.createdAt.addingTimeInterval(settings.checkpointInterval) {
            return Pass(appended: appended, size: frontier.size, checkpoint: nil)
        }
        let checkpoint = sign(TreeCheckpoint(origin: settings.origin, size: frontier.size, root: frontier.root), keys: keys, at: now)
        try TransparencyLogStore.insertCheckpoint(checkpoint, on: connection)
        let body: JSONValue = [
            "type": .string(WebhookEvent.auditCheckpoint.rawValue), "timestamp": Timestamp.json(checkpoint.createdAt),
            "data": [
                "origin": .string(settings.origin), "tree_size": .int(Int64(checkpoint.size)),
                "root_hash": .string(Data(checkpoint.root).base64EncodedString()), "checkpoint": .string(checkpoint.note),
            ],
        ]
        try OutboxStore.insertWebhooks(event: WebhookEvent.auditCheckpoint.rawValue, body: body.canonical, now: now, on: connection)
        return Pass(appended: appended, size: frontier.size, checkpoint: checkpoint)
    }

    /// The checkpoint signed as a C2SP signed note with the active `checkpoint` key.
    static func sign(_ checkpoint: TreeCheckpoint, keys: KeyFile, at now: Date) -> StoredCheckpoint {
        let key = keys.activeKey(for: .checkpoint)
        return StoredCheckpoint(
            size: checkpoint.size, root: checkpoint.root, createdAt: Timestamp.truncated(now), keyID: key.id,
            note: SignedNote.sign(checkpoint.body, name: checkpoint.origin, seed: key.key))
    }

    /// The verifier key of the active `checkpoint` key under `origin`: what `GET /api/v1/audit/key` answers.
    public static func verifierKey(origin: String, keys: KeyFile) -> NoteVerifierKey? {
        NoteVerifierKey(name: origin, publicKey: Ed25519.publicKey(seed: keys.activeKey(for: .checkpoint).key))
    }

    /// Every `checkpoint` key of the key file, old ones included, under `origin`: old checkpoints verify under old keys.
    public static func verifierKeys(origin: String, keys: KeyFile) -> [NoteVerifierKey] {
        keys.entries(for: .checkpoint).compactMap { NoteVerifierKey(name: origin, publicKey: Ed25519.publicKey(seed: $0.key)) }
    }

    /// Whether today's tree extends a checkpoint.
    public struct Verification: Sendable {
        /// The checkpoint checked, once its signature verified.
        public let checkpoint: TreeCheckpoint?
        /// Today's tree.
        public let size: Int
        /// Today's root.
        public let root: MerkleTree.Hash
        /// Why it does not verify; nil when it does.
        public let problem: String?

        /// The signature holds and today's tree extends the checkpoint.
        public var verified: Bool { problem == nil }
    }

    /// Checks `note` against today's tree (the first `size` leaves, with `root`): its signature by one of the key file's
    /// `checkpoint` keys under `origin`, its size not beyond today's, and the consistency proof from its size to
    /// today's, computed from the stored nodes, against both roots (RFC 9162 §2.1.4.2).
    public static func verify(
        note: String, origin: String, keys: KeyFile, size: Int, root: MerkleTree.Hash,
        on connection: PostgresConnection
    ) throws -> Verification {
        func refuse(_ checkpoint: TreeCheckpoint?, _ problem: String) -> Verification {
            Verification(checkpoint: checkpoint, size: size, root: root, problem: problem)
        }
        let text: String
        do {
            text = try SignedNote.open(note, keys: verifierKeys(origin: origin, keys: keys)).text
        } catch {
            return refuse(nil, "the checkpoint's signature: \(error) (origin \(origin))")
        }
        guard let checkpoint = TreeCheckpoint(body: text), checkpoint.origin == origin else {
            return refuse(nil, "the signed text is not a checkpoint of \(origin)")
        }
        guard checkpoint.size <= size else {
            return refuse(checkpoint, "the checkpoint has \(checkpoint.size) leaves, today's tree only \(size): the log lost leaves")
        }
        if checkpoint.size == 0 {
            return checkpoint.root == MerkleTree.emptyRoot
                ? Verification(checkpoint: checkpoint, size: size, root: root, problem: nil)
                : refuse(checkpoint, "a checkpoint of the empty tree with another root")
        }
        let proof = try TransparencyLogStore.consistencyProof(from: checkpoint.size, to: size, on: connection)
        guard MerkleTree.verifyConsistency(from: checkpoint.size, to: size, fromRoot: checkpoint.root, toRoot: root, proof: proof) else {
            return refuse(checkpoint, "today's tree is not an extension of the checkpoint at size \(checkpoint.size): history was rewritten")
        }
        return Verification(checkpoint: checkpoint, size: size, root: root, problem: nil)
    }
}

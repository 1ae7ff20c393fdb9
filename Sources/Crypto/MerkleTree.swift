/// RFC 9162 §2.1 Merkle tree hashing over SHA-256 (the tree of Certificate Transparency, C2SP tlog): leaf hash
/// SHA-256(0x00 ‖ data), node hash SHA-256(0x01 ‖ left ‖ right). A tree of any size is a right fold of at most
/// log₂ n perfect subtrees, and every proof element is one such subtree or a fold of them, so a log that keeps each
/// perfect subtree's hash by (level, index) answers roots and proofs from O(log n) stored hashes. Pure: the caller
/// fetches the hashes these functions name.
public enum MerkleTree {
    /// A 32-byte SHA-256 hash.
    public typealias Hash = [UInt8]

    /// A perfect subtree: the 2^level leaves starting at leaf `index` · 2^level (level 0 is a leaf).
    public struct Node: Hashable, Sendable, CustomStringConvertible {
        /// Height above the leaves.
        public let level: Int
        /// Position among the subtrees of that level, from the left.
        public let index: Int

        /// The subtree of 2^`level` leaves at position `index`.
        public init(level: Int, index: Int) {
            self.level = level
            self.index = index
        }

        /// `level/index`.
        public var description: String { "\(level)/\(index)" }
    }

    /// Why a root or a proof could not be assembled.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// A size or index outside the tree (leaf ≥ size, from > to, ...).
        case outOfRange
        /// A hash the computation needs was not supplied (the store lacks a node).
        case missingNode(Node)

        /// One line.
        public var description: String {
            switch self {
            case .outOfRange: "outside the tree"
            case .missingNode(let node): "the tree lacks node \(node)"
            }
        }
    }

    /// The root of the empty tree: SHA-256 of nothing.
    public static var emptyRoot: Hash { SHA256.hash([UInt8]()) }

    /// SHA-256(0x00 ‖ data).
    public static func leafHash<Bytes: Collection<UInt8>>(_ data: Bytes) -> Hash {
        var input: [UInt8] = [0x00]
        input.append(contentsOf: data)
        return SHA256.hash(input)
    }

    /// SHA-256(0x01 ‖ left ‖ right).
    public static func nodeHash(_ left: Hash, _ right: Hash) -> Hash {
        var input: [UInt8] = [0x01]
        input.reserveCapacity(1 + left.count + right.count)
        input.append(contentsOf: left)
        input.append(contentsOf: right)
        return SHA256.hash(input)
    }

    // MARK: Which hashes a computation needs

    /// The perfect subtrees that make up leaves `start..<end`, largest (leftmost) first. Every range the RFC's
    /// recursion visits starts at a multiple of the smallest power of two not below its length, so each piece aligns.
    public static func subtrees(from start: Int, to end: Int) -> [Node] {
        var nodes: [Node] = []
        var position = start
        var count = end - start
        while count > 0 {
            let width = count & (count - 1) == 0 ? count : largestPowerOfTwo(below: count)
            let level = width.trailingZeroBitCount
            nodes.append(Node(level: level, index: position >> level))
            position += width
            count -= width
        }
        return nodes
    }

    /// The stored hashes the root of a tree of `size` leaves needs.
    public static func nodesForRoot(size: Int) -> [Node] { subtrees(from: 0, to: size) }

    /// The stored hashes the inclusion proof of `leaf` in a tree of `size` leaves needs.
    public static func nodesForInclusion(leaf: Int, size: Int) throws(Failure) -> [Node] {
        guard leaf >= 0, leaf < size else { throw .outOfRange }
        return inclusionRanges(leaf: leaf, start: 0, end: size).flatMap { subtrees(from: $0.lowerBound, to: $0.upperBound) }
    }

    /// The stored hashes the consistency proof from `from` leaves to `to` leaves needs.
    public static func nodesForConsistency(from: Int, to: Int) throws(Failure) -> [Node] {
        guard from >= 1, from <= to else { throw .outOfRange }
        return consistencyRanges(from: from, to: to).flatMap { subtrees(from: $0.lowerBound, to: $0.upperBound) }
    }

    // MARK: Assembling from the hashes

    /// MTH(D[0:size]) from the perfect subtrees' hashes.
    public static func root(size: Int, hashes: [Node: Hash]) throws(Failure) -> Hash {
        guard size >= 0 else { throw .outOfRange }
        if size == 0 { return emptyRoot }
        return try fold(0..<size, hashes)
    }

    /// RFC 9162 §2.1.3.1 PATH(leaf, D[0:size]): the hashes a verifier combines with the leaf to reach the root.
    public static func inclusionProof(leaf: Int, size: Int, hashes: [Node: Hash]) throws(Failure) -> [Hash] {
        guard leaf >= 0, leaf < size else { throw .outOfRange }
        var proof: [Hash] = []
        for range in inclusionRanges(leaf: leaf, start: 0, end: size) { proof.append(try fold(range, hashes)) }
        return proof
    }

    /// RFC 9162 §2.1.4.1 PROOF(from, D[0:to]): empty when the sizes are equal.
    public static func consistencyProof(from: Int, to: Int, hashes: [Node: Hash]) throws(Failure) -> [Hash] {
        guard from >= 1, from <= to else { throw .outOfRange }
        var proof: [Hash] = []
        for range in consistencyRanges(from: from, to: to) { proof.append(try fold(range, hashes)) }
        return proof
    }

    // MARK: Verifying (RFC 9162 §2.1.3.2 and §2.1.4.2)

    /// Whether `proof` shows the leaf with `leafHash` at `index` in the tree of `size` leaves whose root is `root`.
    public static func verifyInclusion(index: Int, size: Int, leafHash: Hash, proof: [Hash], root: Hash) -> Bool {
        guard index >= 0, index < size else { return false }
        var fn = index
        var sn = size - 1
        var r = leafHash
        for p in proof {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                r = nodeHash(p, r)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                r = nodeHash(r, p)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && r == root
    }

    /// Whether `proof` shows the tree of `from` leaves with root `fromRoot` to be a prefix of the tree of `to` leaves
    /// with root `toRoot`. Equal sizes need an empty proof and equal roots; a size of 0 proves nothing.
    public static func verifyConsistency(from: Int, to: Int, fromRoot: Hash, toRoot: Hash, proof: [Hash]) -> Bool {
        guard from >= 1, from <= to else { return false }
        if from == to { return proof.isEmpty && fromRoot == toRoot }
        guard !proof.isEmpty else { return false }
        var path = proof
        if from & (from - 1) == 0 { path.insert(fromRoot, at: 0) }
        var fn = from - 1
        var sn = to - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var fr = path[0]
        var sr = path[0]
        for c in path.dropFirst() {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                fr = nodeHash(c, fr)
                sr = nodeHash(c, sr)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                sr = nodeHash(sr, c)
            }
            fn >>= 1
            sn >>= 1
        }
        return fr == fromRoot && sr == toRoot && sn == 0
    }

    // MARK: Appending

    /// The right edge of a tree: the hashes of its perfect subtrees (`subtrees(from: 0, to: size)`), enough to append
    /// leaves and to know the root without any other node.
    public struct Frontier: Sendable {
        /// Leaves so far.
        public private(set) var size: Int
        private var stack: [(level: Int, hash: Hash)]

        /// The empty tree.
        public init() {
            size = 0
            stack = []
        }

        /// The tree of `size` leaves whose perfect subtrees (largest first) have these hashes.
        public init(size: Int, hashes: [Hash]) throws(Failure) {
            let nodes = MerkleTree.subtrees(from: 0, to: size)
            guard nodes.count == hashes.count else { throw .outOfRange }
            self.size = size
            stack = zip(nodes, hashes).map { ($0.level, $1) }
        }

        /// Appends one leaf; returns every subtree it completes, the leaf itself first, to be stored.
        public mutating func append(leafHash: Hash) -> [(node: Node, hash: Hash)] {
            var completed: [(node: Node, hash: Hash)] = [(Node(level: 0, index: size), leafHash)]
            stack.append((0, leafHash))
            var index = size
            while stack.count >= 2, stack[stack.count - 1].level == stack[stack.count - 2].level {
                let right = stack.removeLast()
                let left = stack.removeLast()
                let parent = (level: right.level + 1, hash: MerkleTree.nodeHash(left.hash, right.hash))
                index >>= 1
                stack.append(parent)
                completed.append((Node(level: parent.level, index: index), parent.hash))
            }
            size += 1
            return completed
        }

        /// MTH of the leaves so far.
        public var root: Hash {
            guard var result = stack.last?.hash else { return MerkleTree.emptyRoot }
            for entry in stack.dropLast().reversed() { result = MerkleTree.nodeHash(entry.hash, result) }
            return result
        }
    }

    // MARK: The RFC's recursions, as leaf ranges

    // PATH(m, D[start:end]): each element is the hash of one range.
    private static func inclusionRanges(leaf: Int, start: Int, end: Int) -> [Range<Int>] {
        let count = end - start
        guard count > 1 else { return [] }
        let split = largestPowerOfTwo(below: count)
        if leaf < start + split {
            return inclusionRanges(leaf: leaf, start: start, end: start + split) + [(start + split)..<end]
        }
        return inclusionRanges(leaf: leaf, start: start + split, end: end) + [start..<(start + split)]
    }

    private static func consistencyRanges(from: Int, to: Int) -> [Range<Int>] {
        from == to ? [] : subproofRanges(size: from, start: 0, end: to, complete: true)
    }

    // SUBPROOF(m, D[start:end], b).
    private static func subproofRanges(size m: Int, start: Int, end: Int, complete: Bool) -> [Range<Int>] {
        let count = end - start
        if m == count { return complete ? [] : [start..<end] }
        let split = largestPowerOfTwo(below: count)
        if m <= split {
            return subproofRanges(size: m, start: start, end: start + split, complete: complete) + [(start + split)..<end]
        }
        return subproofRanges(size: m - split, start: start + split, end: end, complete: false) + [start..<(start + split)]
    }

    // MTH of a range: the right fold of its perfect subtrees.
    private static func fold(_ range: Range<Int>, _ hashes: [Node: Hash]) throws(Failure) -> Hash {
        let nodes = subtrees(from: range.lowerBound, to: range.upperBound)
        guard let last = nodes.last else { throw .outOfRange }
        guard var result = hashes[last] else { throw .missingNode(last) }
        for node in nodes.dropLast().reversed() {
            guard let hash = hashes[node] else { throw .missingNode(node) }
            result = nodeHash(hash, result)
        }
        return result
    }

    // The largest power of two strictly below `n` (n ≥ 2).
    private static func largestPowerOfTwo(below n: Int) -> Int {
        1 << (Int.bitWidth - (n - 1).leadingZeroBitCount - 1)
    }
}

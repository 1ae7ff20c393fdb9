import Foundation
import Testing

@testable import Crypto

/// The RFC 9162 tree against the known answers of transparency-dev/merkle (`testonly/constants.go`,
/// `testonly/reference_test.go`: eight leaf inputs, every node and root, and their inclusion and consistency
/// proofs), and against the RFC's recursive definitions written out naively here, on trees up to 70 leaves.
@Suite struct MerkleTreeTests {
    static let inputs = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"].map(hex)
    static let levels: [[String]] = [
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d", "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7", "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b", "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f", "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
        ],
        [
            "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125", "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a", "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        ],
        ["d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7", "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"],
        ["5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"],
    ]
    static let roots = [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125", "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7", "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef", "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ].map(hex)

    /// Every node the tree stores, as appending the leaves one by one completes them.
    static func store(_ leaves: [MerkleTree.Hash]) -> [MerkleTree.Node: MerkleTree.Hash] {
        var frontier = MerkleTree.Frontier()
        var nodes: [MerkleTree.Node: MerkleTree.Hash] = [:]
        for leaf in leaves {
            for (node, hash) in frontier.append(leafHash: leaf) { nodes[node] = hash }
        }
        return nodes
    }

    static let leafHashes = inputs.map { MerkleTree.leafHash($0) }

    @Test func nodesAndRootsAreTheKnownAnswers() throws {
        let nodes = Self.store(Self.leafHashes)
        for (level, hashes) in Self.levels.enumerated() {
            for (index, hash) in hashes.enumerated() {
                #expect(nodes[MerkleTree.Node(level: level, index: index)] == hex(hash), "node \(level)/\(index)")
            }
        }
        #expect(nodes.count == 15)
        var frontier = MerkleTree.Frontier()
        #expect(frontier.root == Self.roots[0])
        for size in 0...8 {
            #expect(try MerkleTree.root(size: size, hashes: nodes) == Self.roots[size], "size \(size)")
            if size > 0 {
                _ = frontier.append(leafHash: Self.leafHashes[size - 1])
                #expect(frontier.root == Self.roots[size])
            }
        }
    }

    @Test func inclusionProofsAreTheKnownAnswers() throws {
        let nodes = Self.store(Self.leafHashes)
        let vectors: [(leaf: Int, size: Int, proof: [String])] = [
            (0, 1, []),
            (0, 2, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"]),
            (1, 2, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"]),
            (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
            (
                1, 5,
                [
                    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ]
            ),
            (
                0, 8,
                [
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ]
            ),
            (
                5, 8,
                [
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ]
            ),
        ]
        for vector in vectors {
            let proof = try MerkleTree.inclusionProof(leaf: vector.leaf, size: vector.size, hashes: nodes)
            #expect(proof == vector.proof.map(hex), "\(vector.leaf):\(vector.size)")
            #expect(
                MerkleTree.verifyInclusion(
                    index: vector.leaf, size: vector.size, leafHash: Self.leafHashes[vector.leaf], proof: proof,
                    root: Self.roots[vector.size]))
        }
    }

    @Test func consistencyProofsAreTheKnownAnswers() throws {
        let nodes = Self.store(Self.leafHashes)
        let vectors: [(from: Int, to: Int, proof: [String])] = [
            (1, 1, []),
            (
                1, 8,
                [
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ]
            ),
            (
                2, 5,
                [
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ]
            ),
            (
                6, 8,
                [
                    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ]
            ),
        ]
        for vector in vectors {
            let proof = try MerkleTree.consistencyProof(from: vector.from, to: vector.to, hashes: nodes)
            #expect(proof == vector.proof.map(hex), "\(vector.from):\(vector.to)")
            #expect(
                MerkleTree.verifyConsistency(
                    from: vector.from, to: vector.to, fromRoot: Self.roots[vector.from], toRoot: Self.roots[vector.to],
                    proof: proof))
        }
    }

    // MARK: Against the RFC's definitions, naively

    static func mth(_ leaves: ArraySlice<MerkleTree.Hash>) -> MerkleTree.Hash {
        if leaves.isEmpty { return MerkleTree.emptyRoot }
        if leaves.count == 1 { return leaves.first! }
        var k = 1
        while k * 2 < leaves.count { k *= 2 }
        return MerkleTree.nodeHash(mth(leaves.prefix(k)), mth(leaves.dropFirst(k)))
    }

    static func path(_ m: Int, _ leaves: ArraySlice<MerkleTree.Hash>) -> [MerkleTree.Hash] {
        guard leaves.count > 1 else { return [] }
        var k = 1
        while k * 2 < leaves.count { k *= 2 }
        return m < k ? path(m, leaves.prefix(k)) + [mth(leaves.dropFirst(k))] : path(m - k, leaves.dropFirst(k)) + [mth(leaves.prefix(k))]
    }

    static func subproof(_ m: Int, _ leaves: ArraySlice<MerkleTree.Hash>, _ complete: Bool) -> [MerkleTree.Hash] {
        if m == leaves.count { return complete ? [] : [mth(leaves)] }
        var k = 1
        while k * 2 < leaves.count { k *= 2 }
        return m <= k
            ? subproof(m, leaves.prefix(k), complete) + [mth(leaves.dropFirst(k))]
            : subproof(m - k, leaves.dropFirst(k), false) + [mth(leaves.prefix(k))]
    }

    @Test func everyProofUpTo70LeavesIsTheRFCsAndVerifies() throws {
        let leaves = (0..<70).map { MerkleTree.leafHash(SHA256.hash(Array("leaf \($0)".utf8))) }
        let nodes = Self.store(leaves)
        for size in 1...leaves.count {
            let tree = leaves.prefix(size)
            let root = Self.mth(tree)
            #expect(try MerkleTree.root(size: size, hashes: nodes) == root)
            for leaf in 0..<size {
                let proof = try MerkleTree.inclusionProof(leaf: leaf, size: size, hashes: nodes)
                #expect(proof == Self.path(leaf, tree))
                #expect(MerkleTree.verifyInclusion(index: leaf, size: size, leafHash: leaves[leaf], proof: proof, root: root))
                #expect(!MerkleTree.verifyInclusion(index: leaf, size: size, leafHash: leaves[(leaf + 1) % 70], proof: proof, root: root))
            }
            for from in 1...size {
                let proof = try MerkleTree.consistencyProof(from: from, to: size, hashes: nodes)
                #expect(proof == Self.subproof(from, tree, true))
                let fromRoot = Self.mth(leaves.prefix(from))
                #expect(MerkleTree.verifyConsistency(from: from, to: size, fromRoot: fromRoot, toRoot: root, proof: proof))
                if from < size {
                    // Another first tree (one leaf rewritten) never verifies against the same proof and root.
                    var rewritten = Array(leaves.prefix(from))
                    rewritten[from / 2] = MerkleTree.leafHash(Array("rewritten".utf8))
                    #expect(!MerkleTree.verifyConsistency(from: from, to: size, fromRoot: Self.mth(rewritten[...]), toRoot: root, proof: proof))
                }
            }
        }
    }

    @Test func tamperedProofsFail() throws {
        let nodes = Self.store(Self.leafHashes)
        let inclusion = try MerkleTree.inclusionProof(leaf: 5, size: 8, hashes: nodes)
        for index in inclusion.indices {
            var tampered = inclusion
            tampered[index][0] ^= 1
            #expect(!MerkleTree.verifyInclusion(index: 5, size: 8, leafHash: Self.leafHashes[5], proof: tampered, root: Self.roots[8]))
        }
        #expect(!MerkleTree.verifyInclusion(index: 5, size: 8, leafHash: Self.leafHashes[5], proof: inclusion + [inclusion[0]], root: Self.roots[8]))
        #expect(!MerkleTree.verifyInclusion(index: 5, size: 8, leafHash: Self.leafHashes[5], proof: Array(inclusion.dropLast()), root: Self.roots[8]))
        #expect(!MerkleTree.verifyInclusion(index: 4, size: 8, leafHash: Self.leafHashes[5], proof: inclusion, root: Self.roots[8]))
        #expect(!MerkleTree.verifyInclusion(index: 8, size: 8, leafHash: Self.leafHashes[5], proof: inclusion, root: Self.roots[8]))
        let consistency = try MerkleTree.consistencyProof(from: 6, to: 8, hashes: nodes)
        for index in consistency.indices {
            var tampered = consistency
            tampered[index][31] ^= 1
            #expect(!MerkleTree.verifyConsistency(from: 6, to: 8, fromRoot: Self.roots[6], toRoot: Self.roots[8], proof: tampered))
        }
        #expect(!MerkleTree.verifyConsistency(from: 6, to: 8, fromRoot: Self.roots[5], toRoot: Self.roots[8], proof: consistency))
        #expect(!MerkleTree.verifyConsistency(from: 6, to: 8, fromRoot: Self.roots[6], toRoot: Self.roots[7], proof: consistency))
        #expect(!MerkleTree.verifyConsistency(from: 6, to: 8, fromRoot: Self.roots[6], toRoot: Self.roots[8], proof: []))
        #expect(!MerkleTree.verifyConsistency(from: 8, to: 8, fromRoot: Self.roots[7], toRoot: Self.roots[8], proof: []))
        #expect(!MerkleTree.verifyConsistency(from: 0, to: 8, fromRoot: Self.roots[0], toRoot: Self.roots[8], proof: []))
        #expect(throws: MerkleTree.Failure.outOfRange) { try MerkleTree.consistencyProof(from: 9, to: 8, hashes: nodes) }
        #expect(throws: MerkleTree.Failure.outOfRange) { try MerkleTree.inclusionProof(leaf: 8, size: 8, hashes: nodes) }
        #expect(throws: MerkleTree.Failure.missingNode(MerkleTree.Node(level: 3, index: 0))) { try MerkleTree.root(size: 8, hashes: [:]) }
    }

    /// What a stored tree reads per answer: O(log n) hashes, at ten million leaves and at the largest sizes.
    @Test func proofsNeedLogarithmicallyManyNodes() throws {
        for size in [10_000_000, 10_000_001, (1 << 40) - 1, 1 << 40] {
            let bound = 2 * (Int.bitWidth - size.leadingZeroBitCount)
            #expect(MerkleTree.nodesForRoot(size: size).count <= bound / 2)
            for leaf in [0, size / 3, size - 1] { #expect(try MerkleTree.nodesForInclusion(leaf: leaf, size: size).count <= bound) }
            for from in [1, size / 2 + 1, size - 1] { #expect(try MerkleTree.nodesForConsistency(from: from, to: size).count <= bound) }
        }
    }

    @Test func theFrontierResumesFromTheStoredRightEdge() throws {
        let nodes = Self.store(Self.leafHashes)
        for size in 0...7 {
            let edge = MerkleTree.nodesForRoot(size: size).map { nodes[$0]! }
            var frontier = try MerkleTree.Frontier(size: size, hashes: edge)
            for leaf in Self.leafHashes[size...] { _ = frontier.append(leafHash: leaf) }
            #expect(frontier.root == Self.roots[8])
            #expect(frontier.size == 8)
        }
        #expect(throws: MerkleTree.Failure.outOfRange) { try MerkleTree.Frontier(size: 3, hashes: []) }
    }
}

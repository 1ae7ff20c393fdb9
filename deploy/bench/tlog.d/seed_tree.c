/* The bench's tree of N leaves, computed here rather than by SQL (deploy/bench/tlog), written independently of the
 * service's Swift code from RFC 9162 §2.1: leaf i's hash SHA-256(0x00 ‖ SHA-256(int8 i, big-endian)) (the event hash of
 * admin-log leaf i is SHA-256 of i's eight bytes), each complete subtree SHA-256(0x01 ‖ left ‖ right).
 *
 *   seed_tree leaves N        log_leaves' rows in COPY BINARY: (leaf_index, case_id NULL, seq = i, leaf_hash)
 *   seed_tree nodes N         log_nodes' rows in COPY BINARY: every complete perfect subtree (level ≥ 1, idx, hash)
 *   seed_tree roots N M...    the RFC 9162 root (MTH) of the first M leaves, base64, one line per M (M ≤ N)
 *
 * cc -O2 seed_tree.c -lcrypto. Memory: 32 bytes a leaf (nodes, roots). */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One digest context and one fetched SHA-256 for the whole run: OpenSSL 3's one-shot SHA256() fetches per call. */
static EVP_MD_CTX *context;
static EVP_MD *sha256_md;

static void sha256(const unsigned char *in, size_t n, unsigned char *out) {
    if (!EVP_DigestInit_ex2(context, sha256_md, NULL) || !EVP_DigestUpdate(context, in, n) || !EVP_DigestFinal_ex(context, out, NULL)) {
        fprintf(stderr, "seed_tree: SHA-256 failed\n");
        exit(1);
    }
}

static void leaf_hash(uint64_t i, unsigned char out[32]) {
    unsigned char be[8], buffer[33];
    for (int b = 0; b < 8; b++) be[b] = (unsigned char)(i >> (56 - 8 * b));
    buffer[0] = 0x00;
    sha256(be, 8, buffer + 1);
    sha256(buffer, 33, out);
}

static void node_hash(const unsigned char *left, const unsigned char *right, unsigned char out[32]) {
    unsigned char buffer[65];
    buffer[0] = 0x01;
    memcpy(buffer + 1, left, 32);
    memcpy(buffer + 33, right, 32);
    sha256(buffer, 65, out);
}

static void put16(int16_t v) {
    unsigned char b[2] = {(unsigned char)(v >> 8), (unsigned char)v};
    fwrite(b, 1, 2, stdout);
}
static void put32(int32_t v) {
    unsigned char b[4];
    for (int k = 0; k < 4; k++) b[k] = (unsigned char)((uint32_t)v >> (24 - 8 * k));
    fwrite(b, 1, 4, stdout);
}
static void put64(int64_t v) {
    unsigned char b[8];
    for (int k = 0; k < 8; k++) b[k] = (unsigned char)((uint64_t)v >> (56 - 8 * k));
    fwrite(b, 1, 8, stdout);
}
static void copy_header(void) {
    fwrite("PGCOPY\n\377\r\n\0", 1, 11, stdout);
    put32(0); /* flags */
    put32(0); /* header extension length */
}

/* RFC 9162 §2.1.1, MTH(D[start : start + n]), leaves computed as needed: O(n) hashes. */
static void mth(uint64_t start, uint64_t n, unsigned char out[32]) {
    if (n == 1) {
        leaf_hash(start, out);
        return;
    }
    uint64_t k = 1;
    while (k * 2 < n) k *= 2;
    unsigned char left[32], right[32];
    mth(start, k, left);
    mth(start + k, n - k, right);
    node_hash(left, right, out);
}

static void base64(const unsigned char *in, size_t n, char *out) {
    static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = table[v >> 18 & 63];
        out[o++] = table[v >> 12 & 63];
        out[o++] = i + 1 < n ? table[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? table[v & 63] : '=';
    }
    out[o] = 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: seed_tree leaves|nodes N | roots N M...\n");
        return 2;
    }
    uint64_t n = strtoull(argv[2], NULL, 10);
    if (n == 0 || n > INT32_MAX) {
        fprintf(stderr, "seed_tree: N must be 1 to 2^31-1 (seq is an integer)\n");
        return 2;
    }
    context = EVP_MD_CTX_new();
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!context || !sha256_md) {
        fprintf(stderr, "seed_tree: no SHA-256 in libcrypto\n");
        return 1;
    }
    static char out_buffer[1 << 20];
    setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
    if (strcmp(argv[1], "leaves") == 0) {
        copy_header();
        unsigned char hash[32];
        for (uint64_t i = 0; i < n; i++) {
            leaf_hash(i, hash);
            put16(4);
            put32(8), put64((int64_t)i);
            put32(-1); /* case_id NULL: an admin-log leaf */
            put32(4), put32((int32_t)i);
            put32(32), fwrite(hash, 1, 32, stdout);
        }
        put16(-1);
    } else if (strcmp(argv[1], "nodes") == 0) {
        unsigned char *level = malloc(n * 32);
        if (!level) {
            perror("seed_tree");
            return 1;
        }
        for (uint64_t i = 0; i < n; i++) leaf_hash(i, level + 32 * i);
        copy_header();
        /* Each level in place: node k reads 2k and 2k+1, which no earlier node of the level overwrote. */
        for (int height = 1; (n >> height) > 0; height++) {
            uint64_t count = n >> height;
            for (uint64_t k = 0; k < count; k++) {
                node_hash(level + 64 * k, level + 64 * k + 32, level + 32 * k);
                put16(3);
                put32(4), put32(height);
                put32(8), put64((int64_t)k);
                put32(32), fwrite(level + 32 * k, 1, 32, stdout);
            }
        }
        put16(-1);
        free(level);
    } else if (strcmp(argv[1], "roots") == 0) {
        for (int a = 3; a < argc; a++) {
            uint64_t m = strtoull(argv[a], NULL, 10);
            if (m == 0 || m > n) {
                fprintf(stderr, "seed_tree: size %s outside 1..%s\n", argv[a], argv[2]);
                return 2;
            }
            unsigned char root[32];
            char text[64];
            mth(0, m, root);
            base64(root, 32, text);
            printf("%llu %s\n", (unsigned long long)m, text);
        }
    } else {
        fprintf(stderr, "seed_tree: unknown mode %s\n", argv[1]);
        return 2;
    }
    if (fflush(stdout) != 0) {
        perror("seed_tree");
        return 1;
    }
    return 0;
}

//! SHA-256 (FIPS 180-4), for request fingerprints that every process must compute alike (the
//! shared Redis store, the Rust `web` store). An in-process store keys a SipHash-128 with its own
//! secret seed instead ([`crate::core::keyed::KeyedRecords::fingerprint_of`]): no one outside can
//! compute it, so no one can collide it, at a fraction of the cost.
//!
//! Why a cryptographic hash here: a fingerprint binds an idempotency key to one request, and the
//! request is chosen by whoever sends it. With a fast non-cryptographic hash (FNV, a two-lane
//! 53-bit mix) a client can craft a $1,000 order whose fingerprint equals its $1 order and have the
//! second replay the first. SHA-256 truncated to 128 bits leaves 2^64 work for a collision and
//! 2^128 for a second preimage. Written out (no dependency) so the core stays dependency-free and
//! the wasm module small; checked against the FIPS vectors and coreutils `sha256sum`.

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

// Indexing is allowed here alone: every index is a loop counter over a fixed-size array with a
// constant range (0..16 on [u32; 16], 16..64 and 0..64 on [u32; 64]), so the compiler proves it in
// bounds and emits no check — nothing here can panic — and the rounds run without the closures and
// `get` calls that made the first version ~3× slower.
#[allow(clippy::indexing_slicing)]
fn compress(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 64];
    for i in 0..16 {
        w[i] = u32::from_be_bytes([
            block[4 * i],
            block[4 * i + 1],
            block[4 * i + 2],
            block[4 * i + 3],
        ]);
    }
    for i in 16..64 {
        let (w15, w2) = (w[i - 15], w[i - 2]);
        let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
        let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
        w[i] = w[i - 16]
            .wrapping_add(s0)
            .wrapping_add(w[i - 7])
            .wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for i in 0..64 {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(K[i])
            .wrapping_add(w[i]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// One 64-byte block of `data` (the caller passes exact chunks).
fn block(chunk: &[u8]) -> [u8; 64] {
    let mut b = [0u8; 64];
    if chunk.len() == 64 {
        b.copy_from_slice(chunk);
    }
    b
}

/// The SHA-256 digest of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    let mut state = H0;
    let mut blocks = data.chunks_exact(64);
    for chunk in &mut blocks {
        compress(&mut state, &block(chunk));
    }
    let rest = blocks.remainder();
    let mut tail = [0u8; 128];
    let n = rest.len();
    let used = if n < 56 { 64 } else { 128 };
    if let Some(t) = tail.get_mut(..n) {
        t.copy_from_slice(rest);
    }
    if let Some(b) = tail.get_mut(n) {
        *b = 0x80;
    }
    let bits = (data.len() as u64).wrapping_mul(8).to_be_bytes();
    if let Some(t) = tail.get_mut(used - 8..used) {
        t.copy_from_slice(&bits);
    }
    for chunk in tail.get(..used).unwrap_or(&[]).chunks_exact(64) {
        compress(&mut state, &block(chunk));
    }
    let mut out = [0u8; 32];
    for (o, s) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&s.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sha256;

    fn hex(d: &[u8]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn fips_180_vectors() {
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&sha256(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            hex(&sha256(&million)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        // The 56-byte vector above pads into a second block; these sit on the other boundaries
        // (values from coreutils `sha256sum`).
        for (n, want) in [
            (
                55,
                "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072",
            ),
            (
                63,
                "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2",
            ),
            (
                64,
                "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c",
            ),
            (
                119,
                "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c",
            ),
        ] {
            assert_eq!(hex(&sha256(&vec![b'x'; n])), want, "{n} bytes");
        }
    }
}

//! A secret for one process (shared by the stdio bookshops).

/// 32 bytes from the OS's randomness (std's hasher keys are seeded from it).
pub fn random_key() -> [u8; 32] {
    use std::hash::{BuildHasher, Hasher};
    let mut key = [0u8; 32];
    for (i, chunk) in key.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    key
}

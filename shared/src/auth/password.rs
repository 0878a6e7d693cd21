//! Password hashing with argon2id. Parameters follow OWASP's first recommendation
//! (m = 19 MiB, t = 2, p = 1): strong enough for a login route, cheap enough that one
//! verification stays a few tens of milliseconds on a Lambda's share of a core. Hashes are
//! PHC strings, so parameters can be raised later without invalidating stored ones.

use std::sync::{Arc, Mutex};

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{Output, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, PasswordHasher as _, Version};

use crate::error::Error;

/// Memory cost in KiB.
pub const M_COST_KIB: u32 = 19_456;
/// Iterations.
pub const T_COST: u32 = 2;
/// Lanes.
pub const P_COST: u32 = 1;

/// Shortest password the admin tool accepts for a new user.
pub const MIN_PASSWORD_LEN: usize = 10;
/// Longest password accepted anywhere (bounds hashing work per request).
pub const MAX_PASSWORD_LEN: usize = 1024;

/// Largest memory cost a stored hash may ask for (256 MiB); anything above is refused.
const MAX_M_COST_KIB: u32 = 262_144;

/// Verifications running at once, at most (one per core, between 1 and 8): each holds 19 MiB
/// of working memory, so parallel logins cannot grow memory beyond this many buffers.
fn max_parallel_verifications() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 8))
}

/// A hash of a random throw-away password with the same parameters as real hashes. Unknown
/// emails are verified against it so that they take as long as a wrong password does.
const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$VEcXULZ+kXgXCtKfUhGqkw$vo34nrasQy7EFVYWHFY5B6HmW2jH0RTQKKPktE+LBFc";

/// Hashes and verifies passwords. Verification runs on the blocking pool, a bounded number
/// at a time, each on a working-memory buffer reused from a pool of that size (a fresh 19 MiB
/// allocation per login costs as much again in page faults as the hashing itself).
#[derive(Clone)]
pub struct PasswordHasher {
    argon: Argon2<'static>,
    permits: Arc<tokio::sync::Semaphore>,
    buffers: Arc<Mutex<Vec<Vec<Block>>>>,
}

impl std::fmt::Debug for PasswordHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordHasher(argon2id)")
    }
}

impl Default for PasswordHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl PasswordHasher {
    pub fn new() -> Self {
        // The constants are valid argon2 parameters; a unit test pins that.
        let params = Params::new(M_COST_KIB, T_COST, P_COST, None).unwrap_or_default();
        Self {
            argon: Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
            permits: Arc::new(tokio::sync::Semaphore::new(max_parallel_verifications())),
            buffers: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// [`PasswordHasher::verify`] off the async workers, at most one per core at a time;
    /// further logins wait for a turn.
    pub async fn verify_async(&self, password: String, phc: Option<String>) -> Result<bool, Error> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| Error::internal(format!("password check closed: {e}")))?;
        let this = self.clone();
        // The permit goes with the work: a login whose client hangs up does not free its turn
        // while its hashing still runs.
        tokio::task::spawn_blocking(move || {
            let ok = this.verify(&password, phc.as_deref());
            drop(permit);
            ok
        })
        .await
        .map_err(|e| Error::internal(format!("password check panicked: {e}")))
    }

    /// Hashes a password with a fresh random salt, as a PHC string.
    pub fn hash(&self, password: &str) -> Result<String, Error> {
        let salt = SaltString::generate(&mut OsRng);
        self.argon
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| Error::internal(format!("password hashing failed: {e}")))
    }

    /// Whether `password` matches `phc`; `None` (unknown user) verifies against a dummy hash
    /// and is always `false`, taking the same time.
    pub fn verify(&self, password: &str, phc: Option<&str>) -> bool {
        let Ok(parsed) = PasswordHash::new(phc.unwrap_or(DUMMY_HASH)) else {
            return false;
        };
        let mut blocks = self
            .buffers
            .lock()
            .ok()
            .and_then(|mut pool| pool.pop())
            .unwrap_or_default();
        let ok = verify_reusing_memory(password.as_bytes(), &parsed, &mut blocks);
        if let Ok(mut pool) = self.buffers.lock() {
            // Only default-sized buffers are kept (a hash with a larger memory cost is rare).
            if pool.len() < max_parallel_verifications() && blocks.len() <= M_COST_KIB as usize {
                pool.push(blocks);
            }
        }
        ok && phc.is_some()
    }
}

/// Recomputes `hash` for `password` with the parameters stored in it, on the reusable working
/// memory `blocks`, and compares in constant time.
fn verify_reusing_memory(
    password: &[u8],
    hash: &PasswordHash<'_>,
    blocks: &mut Vec<Block>,
) -> bool {
    let (Ok(algorithm), Ok(params)) = (Algorithm::try_from(hash.algorithm), Params::try_from(hash))
    else {
        return false;
    };
    let version = match hash.version.map(Version::try_from).transpose() {
        Ok(v) => v.unwrap_or_default(),
        Err(_) => return false,
    };
    let (Some(salt), Some(expected)) = (hash.salt, hash.hash) else {
        return false;
    };
    if params.m_cost() > MAX_M_COST_KIB {
        return false;
    }
    let mut salt_buf = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_buf) else {
        return false;
    };
    let argon = Argon2::new(algorithm, version, params.clone());
    let mut out = vec![0u8; expected.len()];
    blocks.resize(params.block_count(), Block::new());
    let computed = argon.hash_password_into_with_memory(password, salt, &mut out, &mut blocks[..]);
    // `Output` equality is constant-time.
    computed.is_ok() && Output::new(&out).is_ok_and(|o| o == expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_then_verify_round_trips() {
        let h = PasswordHasher::new();
        let phc = h.hash("correct horse battery").expect("hash");
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(h.verify("correct horse battery", Some(&phc)));
        assert!(!h.verify("wrong", Some(&phc)));
        assert!(!h.verify("correct horse battery", Some("not a phc string")));
    }

    #[test]
    fn dummy_hash_uses_the_real_parameters_and_never_matches() {
        let parsed = PasswordHash::new(DUMMY_HASH).expect("dummy parses");
        let params = Params::try_from(&parsed).expect("params");
        assert_eq!(
            (params.m_cost(), params.t_cost(), params.p_cost()),
            (M_COST_KIB, T_COST, P_COST)
        );
        assert_eq!(parsed.algorithm.as_str(), "argon2id");
        assert!(!PasswordHasher::new().verify("", None));
    }

    #[test]
    fn verifies_hashes_made_with_other_parameters() {
        let params = Params::new(8192, 1, 1, None).expect("p");
        let other = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let salt = SaltString::generate(&mut OsRng);
        let phc = other
            .hash_password(b"pw-0123456789", &salt)
            .expect("hash")
            .to_string();
        let h = PasswordHasher::new();
        assert!(h.verify("pw-0123456789", Some(&phc)));
        assert!(!h.verify("pw-012345678", Some(&phc)));
        // The same thread then verifies a default-parameter hash on the resized buffer.
        let phc = h.hash("again-0123456789").expect("hash");
        assert!(h.verify("again-0123456789", Some(&phc)));
    }

    #[test]
    fn absurd_memory_costs_are_refused() {
        let phc = "$argon2id$v=19$m=4000000,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g";
        assert!(!PasswordHasher::new().verify("x", Some(phc)));
    }

    #[test]
    fn parameters_are_valid() {
        assert!(Params::new(M_COST_KIB, T_COST, P_COST, None).is_ok());
    }
}

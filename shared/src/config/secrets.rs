//! The settings that are secrets. In AWS each is read from Secrets Manager at cold start —
//! `<NAME>_ARN` holds the secret's ARN (or name) and the function's role may read exactly the
//! secrets it uses — so no value sits in a function's configuration. Set directly (`<NAME>`),
//! the value is used as it is (local-api, the tests, a laptop).

use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::time::Instant;

use secrecy::{ExposeSecret, SecretString};

use super::ConfigError;
use crate::ports::secrets::SecretSource;

/// Each secret setting and the variable naming where it lives in Secrets Manager.
pub const SECRET_SETTINGS: &[(&str, &str)] = &[
    ("JWT_SECRET", "JWT_SECRET_ARN"),
    ("FINGERPRINT_KEY", "FINGERPRINT_KEY_ARN"),
    ("LLM_API_KEY", "LLM_API_KEY_ARN"),
    ("PUSHER_SECRET", "PUSHER_SECRET_ARN"),
    ("TAVILY_API_KEY", "TAVILY_API_KEY_ARN"),
    ("EXTRACTION_SERVICE_TOKEN", "EXTRACTION_SERVICE_TOKEN_ARN"),
];

/// Longest secret id Secrets Manager accepts (an ARN).
const MAX_ID_CHARS: usize = 2048;

/// A secret to read: the setting, the variable that named it, and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRef {
    pub setting: &'static str,
    pub variable: &'static str,
    pub id: String,
}

/// The secrets the environment names by ARN. A setting given both ways is refused (which
/// one is meant would be a guess).
pub fn references(lookup: impl Fn(&str) -> Option<String>) -> Result<Vec<SecretRef>, ConfigError> {
    let get = |k: &str| {
        lookup(k)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let mut refs = Vec::new();
    for &(setting, variable) in SECRET_SETTINGS {
        let Some(id) = get(variable) else { continue };
        if get(setting).is_some() {
            return Err(ConfigError::Invalid(
                variable,
                format!("set {setting} or {variable}, not both"),
            ));
        }
        if id.chars().count() > MAX_ID_CHARS || id.chars().any(char::is_control) {
            return Err(ConfigError::Invalid(
                variable,
                format!("not a secret name or ARN (at most {MAX_ID_CHARS} characters)"),
            ));
        }
        refs.push(SecretRef {
            setting,
            variable,
            id,
        });
    }
    Ok(refs)
}

/// The secrets read for this container, kept for its life.
#[derive(Default)]
pub struct LoadedSecrets {
    values: Vec<(SecretRef, SecretString)>,
}

impl std::fmt::Debug for LoadedSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.values.iter().map(|(r, _)| r.setting).collect();
        f.debug_struct("LoadedSecrets")
            .field("settings", &names)
            .finish()
    }
}

impl LoadedSecrets {
    /// Reads every reference at once (one round trip at cold start). The first that cannot be
    /// read stops start-up with a message naming its variable and id, never a value.
    pub async fn load(
        refs: Vec<SecretRef>,
        source: &dyn SecretSource,
    ) -> Result<Self, ConfigError> {
        let reads = refs.iter().map(|r| source.current(&r.id));
        let results = futures::future::join_all(reads).await;
        let mut values = Vec::with_capacity(refs.len());
        for (r, result) in refs.into_iter().zip(results) {
            match result.map(|v| normalised(&v)) {
                Ok(Some(value)) => values.push((r, value)),
                Ok(None) => {
                    return Err(ConfigError::Invalid(
                        r.variable,
                        format!("the secret `{}` is empty", r.id),
                    ))
                }
                Err(e) => {
                    return Err(ConfigError::Invalid(
                        r.variable,
                        format!("the secret `{}` could not be read: {e}", r.id),
                    ))
                }
            }
        }
        Ok(Self { values })
    }

    /// Where `setting`'s value was read from, if it was read from Secrets Manager.
    pub fn id_of(&self, setting: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(r, _)| r.setting == setting)
            .map(|(r, _)| r.id.as_str())
    }

    /// `env` with the secrets read in place of their settings.
    pub fn over<'a>(
        &'a self,
        env: impl Fn(&str) -> Option<String> + 'a,
    ) -> impl Fn(&str) -> Option<String> + 'a {
        move |k: &str| match self.values.iter().find(|(r, _)| r.setting == k) {
            Some((_, value)) => Some(value.expose_secret().to_owned()),
            None => env(k),
        }
    }
}

/// When keys read from Secrets Manager are read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rereads {
    /// Least time between reads caused by a refusal (a token whose signature does not match,
    /// a 401 from the model): a flood of forged tokens costs one `GetSecretValue` per this.
    pub after_refusal: Duration,
    /// Longest a key is used before it is read again on the next use
    /// (`SECRET_REFRESH_SECONDS`): every warm container takes a rotation within this, even
    /// one that only signs (login) or never sees a token signed with the new key.
    pub max_age: Duration,
}

impl Rereads {
    pub const AFTER_REFUSAL: Duration = Duration::from_secs(60);

    /// Re-reads after a refusal at most once a minute, and at least every `max_age`.
    pub fn every(max_age: Duration) -> Self {
        Self {
            after_refusal: Self::AFTER_REFUSAL,
            max_age,
        }
    }
}

/// Longest a read again may take (it waits on a request's path).
const REREAD_TIMEOUT: Duration = Duration::from_secs(3);

/// A secret's value as a setting: without surrounding whitespace (a secret stored from a file
/// ends with a newline), `None` when nothing is left.
fn normalised(value: &SecretString) -> Option<SecretString> {
    let trimmed = value.expose_secret().trim();
    (!trimmed.is_empty()).then(|| SecretString::from(trimmed.to_owned()))
}

/// Reads a key again from where it was read at cold start: when it is older than
/// [`Rereads::max_age`] (on its next use, never blocking one: a read already under way is not
/// waited for), and after a refusal (the token key on a signature that does not match, the
/// model's key on a 401) at most once per [`Rereads::after_refusal`]. One read at a time, each
/// bounded by a timeout; a value that cannot be read is logged by its id only.
pub struct KeyRefresh {
    source: Arc<dyn SecretSource>,
    id: String,
    timing: Rereads,
    last: tokio::sync::Mutex<LastReads>,
}

/// When a key was read.
struct LastReads {
    /// Last read of any kind (at first: the cold start's, just before this was built).
    any: Instant,
    /// Last read after a refusal (none yet: the first refusal reads at once).
    after_refusal: Option<Instant>,
}

impl KeyRefresh {
    pub fn new(source: Arc<dyn SecretSource>, id: String, timing: Rereads) -> Self {
        Self {
            source,
            id,
            timing,
            last: tokio::sync::Mutex::new(LastReads {
                any: Instant::now(),
                after_refusal: None,
            }),
        }
    }

    /// The key's value after a refusal, unless a refusal read it within
    /// [`Rereads::after_refusal`] (waits for a read under way, then says `None`: the caller
    /// checks again with what that read found). The first refusal reads at once: a container
    /// started just before a rotation takes it on the first token signed with the new key.
    pub async fn read_after_refusal(&self) -> Option<SecretString> {
        let mut last = self.last.lock().await;
        if last
            .after_refusal
            .is_some_and(|t| t.elapsed() < self.timing.after_refusal)
        {
            return None;
        }
        let now = Instant::now();
        (last.any, last.after_refusal) = (now, Some(now));
        self.read().await
    }

    /// The key's value when it is older than [`Rereads::max_age`]; `None` when it is not, or
    /// when another read is under way.
    pub async fn read_if_stale(&self) -> Option<SecretString> {
        let mut last = self.last.try_lock().ok()?;
        if last.any.elapsed() < self.timing.max_age {
            return None;
        }
        last.any = Instant::now();
        self.read().await
    }

    async fn read(&self) -> Option<SecretString> {
        let read = tokio::time::timeout(REREAD_TIMEOUT, self.source.current(&self.id)).await;
        match read {
            Ok(Ok(value)) => normalised(&value).or_else(|| {
                tracing::warn!(secret = %self.id, "a key read again is empty; the old one stays");
                None
            }),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, secret = %self.id, "a key could not be read again");
                None
            }
            Err(_) => {
                tracing::warn!(secret = %self.id, "reading a key again timed out");
                None
            }
        }
    }
}

/// A key that may be read again (see [`KeyRefresh`]), shared by the adapters that send it
/// (the model and the verifier's model take a rotation together).
pub struct RotatingKey {
    current: RwLock<SecretString>,
    refresh: Option<KeyRefresh>,
}

impl std::fmt::Debug for RotatingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotatingKey")
            .field("rereads", &self.refresh.is_some())
            .finish_non_exhaustive()
    }
}

impl RotatingKey {
    /// A key that is never read again (set directly, not from Secrets Manager).
    pub fn fixed(key: SecretString) -> Self {
        Self {
            current: RwLock::new(key),
            refresh: None,
        }
    }

    /// A key read again through `refresh`.
    pub fn rotating(key: SecretString, refresh: KeyRefresh) -> Self {
        Self {
            current: RwLock::new(key),
            refresh: Some(refresh),
        }
    }

    /// The key to send now.
    pub fn current(&self) -> SecretString {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Reads the key again if it is older than its maximum age.
    pub async fn refresh_if_stale(&self) {
        if let Some(refresh) = &self.refresh {
            if let Some(read) = refresh.read_if_stale().await {
                self.replace(read);
            }
        }
    }

    /// Reads the key again after a refusal; whether it changed (worth sending again).
    pub async fn reread_after_refusal(&self) -> bool {
        match &self.refresh {
            Some(refresh) => match refresh.read_after_refusal().await {
                Some(read) => self.replace(read),
                None => false,
            },
            None => false,
        }
    }

    /// Takes `read`; whether it differs from the key held.
    fn replace(&self, read: SecretString) -> bool {
        let mut key = self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if key.expose_secret() == read.expose_secret() {
            return false;
        }
        *key = read;
        tracing::info!(secret = ?self.refresh.as_ref().map(|r| &r.id), "a key changed; the new one is used from now on");
        true
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::ports::secrets::memory::MemorySecrets;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[tokio::test]
    async fn settings_named_by_arn_are_read_once_and_stand_in_for_the_variables() {
        let jwt = "j".repeat(40);
        // A secret stored from a file ends with a newline: the setting is without it.
        let vault = MemorySecrets::with(&[("arn:jwt", &jwt), ("llm-key", "sk-test\n")]);
        let e = env(&[
            ("JWT_SECRET_ARN", "arn:jwt"),
            ("LLM_API_KEY_ARN", " llm-key "),
            ("LLM_MODEL", "m"),
        ]);
        let refs = references(&e).expect("refs");
        assert_eq!(refs.len(), 2);
        let loaded = LoadedSecrets::load(refs, &vault).await.expect("loaded");
        assert_eq!(vault.reads(), 2);
        let get = loaded.over(&e);
        assert_eq!(get("JWT_SECRET"), Some("j".repeat(40)));
        assert_eq!(get("LLM_API_KEY").as_deref(), Some("sk-test"));
        assert_eq!(
            get("LLM_MODEL").as_deref(),
            Some("m"),
            "others pass through"
        );
        assert_eq!(get("PUSHER_SECRET"), None);
        // Reading the settings again reads nothing more: the values are kept.
        let _ = (get("JWT_SECRET"), get("LLM_API_KEY"));
        assert_eq!(vault.reads(), 2);
        assert_eq!(loaded.id_of("JWT_SECRET"), Some("arn:jwt"));
        assert_eq!(loaded.id_of("PUSHER_SECRET"), None);
        assert!(!format!("{loaded:?}").contains("sk-test"));
    }

    #[tokio::test]
    async fn a_missing_secret_stops_start_up_naming_its_variable_and_id() {
        let vault = MemorySecrets::default();
        let refs = references(env(&[("PUSHER_SECRET_ARN", "browser-agent/pusher")])).unwrap();
        let err = LoadedSecrets::load(refs, &vault).await.unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("PUSHER_SECRET_ARN is invalid"), "{text}");
        assert!(text.contains("`browser-agent/pusher`"), "{text}");
        assert!(text.contains("no such secret"), "{text}");
    }

    #[tokio::test]
    async fn an_empty_secret_is_refused() {
        let vault = MemorySecrets::with(&[("t", "  ")]);
        let refs = references(env(&[("TAVILY_API_KEY_ARN", "t")])).unwrap();
        let err = LoadedSecrets::load(refs, &vault).await.unwrap_err();
        assert!(err.to_string().contains("is empty"), "{err}");
    }

    #[test]
    fn a_setting_given_both_ways_or_a_malformed_id_is_refused() {
        let both = references(env(&[("JWT_SECRET", "x"), ("JWT_SECRET_ARN", "a")])).unwrap_err();
        assert_eq!(
            both,
            ConfigError::Invalid(
                "JWT_SECRET_ARN",
                "set JWT_SECRET or JWT_SECRET_ARN, not both".into()
            )
        );
        let long = "a".repeat(MAX_ID_CHARS + 1);
        assert!(references(env(&[("LLM_API_KEY_ARN", &long)])).is_err());
        assert!(references(env(&[("LLM_API_KEY_ARN", "a\nb")])).is_err());
        assert!(references(env(&[("LLM_API_KEY_ARN", "   ")]))
            .unwrap()
            .is_empty());
    }

    fn refresh(vault: &Arc<MemorySecrets>) -> KeyRefresh {
        KeyRefresh::new(
            vault.clone(),
            "k".into(),
            Rereads::every(Duration::from_secs(300)),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_is_read_again_when_stale_and_after_a_refusal_at_most_once_a_minute() {
        let vault = Arc::new(MemorySecrets::with(&[("k", " new-key\n")]));
        let r = refresh(&vault);
        assert!(r.read_if_stale().await.is_none(), "just read at cold start");
        assert_eq!(vault.reads(), 0);
        let read = r
            .read_after_refusal()
            .await
            .expect("the first refusal reads");
        assert_eq!(read.expose_secret(), "new-key", "trimmed like a setting");
        assert!(r.read_after_refusal().await.is_none(), "within the minute");
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(r.read_after_refusal().await.is_some(), "due after a minute");
        assert!(r.read_if_stale().await.is_none(), "a refusal's read counts");
        assert_eq!(vault.reads(), 2);
        tokio::time::advance(Duration::from_secs(301)).await;
        assert!(
            r.read_if_stale().await.is_some(),
            "older than its maximum age"
        );
        assert_eq!(vault.reads(), 3);
    }

    /// A source that never answers.
    struct Stalled;

    #[async_trait::async_trait]
    impl SecretSource for Stalled {
        async fn current(
            &self,
            _: &str,
        ) -> Result<SecretString, crate::ports::secrets::SecretError> {
            std::future::pending().await
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_read_again_that_stalls_gives_up_and_the_old_key_stays() {
        let key = RotatingKey::rotating(
            SecretString::from("old".to_owned()),
            KeyRefresh::new(
                Arc::new(Stalled),
                "k".into(),
                Rereads::every(Duration::ZERO),
            ),
        );
        let started = Instant::now();
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(!key.reread_after_refusal().await);
        assert!(started.elapsed() <= Duration::from_secs(61) + REREAD_TIMEOUT);
        assert_eq!(key.current().expose_secret(), "old");
    }

    #[tokio::test(start_paused = true)]
    async fn a_rotating_key_is_shared_by_its_holders_and_an_empty_read_is_not_taken() {
        let vault = Arc::new(MemorySecrets::with(&[("k", "second")]));
        let key = Arc::new(RotatingKey::rotating(
            SecretString::from("first".to_owned()),
            refresh(&vault),
        ));
        let (main, verifier) = (key.clone(), key.clone());
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(main.reread_after_refusal().await, "changed");
        assert_eq!(verifier.current().expose_secret(), "second");
        vault.set("k", "  ");
        tokio::time::advance(Duration::from_secs(301)).await;
        verifier.refresh_if_stale().await;
        assert_eq!(
            main.current().expose_secret(),
            "second",
            "an empty read is not taken"
        );
        assert_eq!(vault.reads(), 2);
    }
}

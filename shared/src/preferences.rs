//! User preferences: known keys validated (`theme`), unknown keys kept, size capped, defaults
//! filled in when nothing was saved.

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::ports::StoredPreferences;

/// Largest stored preferences object, serialised.
pub const MAX_PREFERENCES_BYTES: usize = 16 * 1024;
const THEMES: &[&str] = &["light", "dark", "system"];

/// `{ preferences, syncedAt? }` with defaults for keys never saved.
pub fn view(stored: Option<&StoredPreferences>) -> Value {
    let mut prefs = Map::new();
    prefs.insert("theme".into(), Value::from("system"));
    let mut out = Map::new();
    if let Some(s) = stored {
        for (k, v) in &s.preferences {
            prefs.insert(k.clone(), v.clone());
        }
        out.insert(
            "syncedAt".into(),
            Value::from(crate::time::iso(s.synced_at)),
        );
    }
    out.insert("preferences".into(), Value::Object(prefs));
    Value::Object(out)
}

/// The preferences of a POST body: `{ preferences: {...} }` or the body itself (flat).
pub fn incoming(body: &Value) -> Result<Map<String, Value>, Error> {
    let obj = body
        .as_object()
        .ok_or_else(|| Error::field("body", "must be a JSON object"))?;
    let prefs = match obj.get("preferences") {
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err(Error::field("preferences", "must be an object")),
        None => obj.clone(),
    };
    if let Some(theme) = prefs.get("theme") {
        if !theme.as_str().is_some_and(|t| THEMES.contains(&t)) {
            return Err(Error::field("theme", "must be one of: light, dark, system"));
        }
    }
    Ok(prefs)
}

/// Stored preferences with `incoming` merged over them (a `null` value removes a key).
pub fn merge(
    stored: Option<&StoredPreferences>,
    incoming: Map<String, Value>,
) -> Result<Map<String, Value>, Error> {
    let mut merged = stored.map(|s| s.preferences.clone()).unwrap_or_default();
    for (k, v) in incoming {
        if v.is_null() {
            merged.remove(&k);
        } else {
            merged.insert(k, v);
        }
    }
    let size = json!(merged).to_string().len();
    if size > MAX_PREFERENCES_BYTES {
        return Err(Error::field(
            "preferences",
            format!("must be at most {MAX_PREFERENCES_BYTES} bytes as JSON, got {size}"),
        ));
    }
    Ok(merged)
}

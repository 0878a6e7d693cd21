//! Timestamps as the extension reads them: ISO-8601 UTC with milliseconds and `Z`.

use chrono::{DateTime, SecondsFormat, Utc};

/// Formats a timestamp the way JavaScript's `Date.prototype.toISOString` does.
pub fn iso(ts: DateTime<Utc>) -> String {
    ts.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Serde helper: a `DateTime<Utc>` field written as [`iso`] and read from any RFC 3339 string.
pub mod iso_format {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ts: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::iso(*ts))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let raw = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&raw)
            .map(|t| t.with_timezone(&Utc))
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn iso_has_milliseconds_and_z_like_javascript() {
        let ts = Utc
            .timestamp_millis_opt(1_795_330_061_782)
            .single()
            .expect("valid");
        assert_eq!(iso(ts), "2026-11-22T06:47:41.782Z");
    }
}

//! Metrics (`METRICS`, `METRICS_NAMESPACE`, `METRICS_TENANT_DIMENSION`): CloudWatch Embedded
//! Metric Format lines on standard output, on by default inside Lambda and off elsewhere.

use super::ConfigError;

/// Where metrics go and how they are named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsConfig {
    /// EMF lines on standard output (`METRICS=emf`); off, none.
    pub emf: bool,
    /// The CloudWatch namespace (`METRICS_NAMESPACE`).
    pub namespace: String,
    /// Steps carry the tenant as a dimension (`METRICS_TENANT_DIMENSION=on`).
    pub tenant_dimension: bool,
}

/// The namespace when `METRICS_NAMESPACE` is unset (the template's dashboard and alarms read it).
pub const DEFAULT_NAMESPACE: &str = "BrowserAgent";

impl MetricsConfig {
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let emf = match get("METRICS").as_deref() {
            None => get("AWS_LAMBDA_FUNCTION_NAME").is_some(),
            Some("emf") => true,
            Some("off") => false,
            Some(_) => return Err(ConfigError::Invalid("METRICS", "must be emf or off".into())),
        };
        let namespace = get("METRICS_NAMESPACE").unwrap_or_else(|| DEFAULT_NAMESPACE.into());
        // CloudWatch: 1 to 255 characters, no `:`, and `AWS/` is AWS's own; no spaces, which
        // the dashboard's SEARCH expressions would have to quote.
        let valid = namespace.len() <= 255
            && !namespace.starts_with("AWS/")
            && namespace
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_/#".contains(c));
        if !valid {
            return Err(ConfigError::Invalid(
                "METRICS_NAMESPACE",
                "must be up to 255 letters, digits and . - _ / #, not starting with AWS/".into(),
            ));
        }
        let tenant_dimension = match get("METRICS_TENANT_DIMENSION").as_deref() {
            None | Some("off") => false,
            Some("on") => true,
            Some(_) => {
                return Err(ConfigError::Invalid(
                    "METRICS_TENANT_DIMENSION",
                    "must be on or off".into(),
                ))
            }
        };
        Ok(Self {
            emf,
            namespace,
            tenant_dimension,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<MetricsConfig, ConfigError> {
        MetricsConfig::from_lookup(crate::config::lookup_of(pairs))
    }

    #[test]
    fn metrics_are_on_in_lambda_and_off_elsewhere_unless_set() {
        assert!(!read(&[]).expect("config").emf);
        assert!(
            read(&[("AWS_LAMBDA_FUNCTION_NAME", "f")])
                .expect("config")
                .emf
        );
        assert!(
            !read(&[("AWS_LAMBDA_FUNCTION_NAME", "f"), ("METRICS", "off")])
                .expect("config")
                .emf
        );
        let c = read(&[("METRICS", "emf")]).expect("config");
        assert_eq!(
            (c.emf, c.namespace.as_str(), c.tenant_dimension),
            (true, "BrowserAgent", false)
        );
    }

    #[test]
    fn bad_settings_are_named() {
        for (pairs, name) in [
            (&[("METRICS", "statsd")][..], "METRICS"),
            (
                &[("METRICS_NAMESPACE", "AWS/Lambda")][..],
                "METRICS_NAMESPACE",
            ),
            (&[("METRICS_NAMESPACE", "a:b")][..], "METRICS_NAMESPACE"),
            (&[("METRICS_NAMESPACE", "My App")][..], "METRICS_NAMESPACE"),
            (
                &[("METRICS_TENANT_DIMENSION", "yes")][..],
                "METRICS_TENANT_DIMENSION",
            ),
        ] {
            let e = read(pairs).expect_err(name).to_string();
            assert!(e.starts_with(&format!("{name} is invalid")), "{e}");
        }
        assert!(
            read(&[("METRICS_TENANT_DIMENSION", "on")])
                .expect("on")
                .tenant_dimension
        );
    }
}

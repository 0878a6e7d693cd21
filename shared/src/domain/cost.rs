//! What a model call costs: a price table (USD per million input, cached input, cache-write
//! and output tokens, per model) and the estimate of one call's usage under it. The defaults
//! are the providers' list prices (OpenAI's API and Amazon Bedrock on-demand in us-east-1) as
//! of [`PRICES_AS_OF`]; `LLM_PRICES` replaces or adds entries (see `config::agent`). A model
//! the table does not know has no estimate (`costUsd` is absent), never a made-up one.

use serde::{Deserialize, Serialize};

use super::task::TokenUsage;

/// When the default prices were taken from the providers' price pages.
pub const PRICES_AS_OF: &str = "2025-08";

/// Entries an `LLM_PRICES` table may hold at most.
pub const MAX_PRICES: usize = 200;
/// Longest model key in a price table.
pub const MAX_PRICE_KEY_CHARS: usize = 200;
/// Highest price per million tokens accepted (a typo guard, far above any list price).
pub const MAX_PRICE_PER_MILLION: f64 = 10_000.0;

/// USD per million tokens of one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    /// Input read from the provider's prompt cache.
    pub cached_input: f64,
    /// Input written to the prompt cache (Bedrock bills it apart); the input price when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    pub output: f64,
}

impl Price {
    const fn new(input: f64, cached_input: f64, cache_write: Option<f64>, output: f64) -> Self {
        Self {
            input,
            cached_input,
            cache_write,
            output,
        }
    }

    /// Why the price cannot be used, if it cannot: every figure finite, not negative and at
    /// most [`MAX_PRICE_PER_MILLION`].
    pub fn problem(&self) -> Option<String> {
        let figures = [
            ("input", Some(self.input)),
            ("cachedInput", Some(self.cached_input)),
            ("cacheWrite", self.cache_write),
            ("output", Some(self.output)),
        ];
        figures.iter().find_map(|(name, v)| {
            v.filter(|v| !(v.is_finite() && (0.0..=MAX_PRICE_PER_MILLION).contains(v)))
                .map(|_| format!("{name} must be a number from 0 to {MAX_PRICE_PER_MILLION}"))
        })
    }

    /// Micro-dollars (USD × 10⁶) of a call: a token at `p` USD per million costs `p`
    /// micro-dollars. `prompt` counts every input token, `cached` and `written` among them.
    pub fn micros(&self, prompt: u64, cached: u64, written: u64, completion: u64) -> u64 {
        let cached = cached.min(prompt);
        let written = written.min(prompt - cached);
        let fresh = prompt - cached - written;
        let usd_micros = fresh as f64 * self.input
            + cached as f64 * self.cached_input
            + written as f64 * self.cache_write.unwrap_or(self.input)
            + completion as f64 * self.output;
        usd_micros.round() as u64
    }
}

/// The prices of known models. A model's price is that of the longest key its name contains
/// after a provider prefix (`openai/`, `us.anthropic.`) and before nothing but a date or
/// version (`-2024-07-18`, `-20250514-v1:0`, `-latest`): `gpt-4o-mini-2024-07-18` is
/// `gpt-4o-mini`, `us.anthropic.claude-sonnet-4-20250514-v1:0` is `claude-sonnet-4`, while
/// `gpt-5-pro` or `claude-opus-4-5` (other models, other prices) have none unless listed.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    entries: Vec<(String, Price)>,
}

/// The defaults (USD per million input, cached input, cache write, output tokens).
const DEFAULTS: &[(&str, Price)] = &[
    // OpenAI API, standard tier.
    ("gpt-5", Price::new(1.25, 0.125, None, 10.0)),
    ("gpt-5-mini", Price::new(0.25, 0.025, None, 2.0)),
    ("gpt-5-nano", Price::new(0.05, 0.005, None, 0.40)),
    ("gpt-4.1", Price::new(2.0, 0.50, None, 8.0)),
    ("gpt-4.1-mini", Price::new(0.40, 0.10, None, 1.60)),
    ("gpt-4.1-nano", Price::new(0.10, 0.025, None, 0.40)),
    ("gpt-4o", Price::new(2.50, 1.25, None, 10.0)),
    ("gpt-4o-mini", Price::new(0.15, 0.075, None, 0.60)),
    ("o3", Price::new(2.0, 0.50, None, 8.0)),
    ("o3-mini", Price::new(1.10, 0.55, None, 4.40)),
    ("o4-mini", Price::new(1.10, 0.275, None, 4.40)),
    // Amazon Bedrock on-demand, us-east-1: Anthropic (cache writes at 1.25 × input).
    ("claude-opus-4", Price::new(15.0, 1.50, Some(18.75), 75.0)),
    ("claude-sonnet-4", Price::new(3.0, 0.30, Some(3.75), 15.0)),
    ("claude-sonnet-4-5", Price::new(3.0, 0.30, Some(3.75), 15.0)),
    ("claude-3-7-sonnet", Price::new(3.0, 0.30, Some(3.75), 15.0)),
    ("claude-3-5-sonnet", Price::new(3.0, 0.30, Some(3.75), 15.0)),
    ("claude-haiku-4-5", Price::new(1.0, 0.10, Some(1.25), 5.0)),
    ("claude-3-5-haiku", Price::new(0.80, 0.08, Some(1.0), 4.0)),
    ("claude-3-haiku", Price::new(0.25, 0.03, Some(0.30), 1.25)),
    // Amazon Nova (cache writes are not billed apart).
    ("nova-premier", Price::new(2.50, 0.625, None, 12.50)),
    ("nova-pro", Price::new(0.80, 0.20, None, 3.20)),
    ("nova-lite", Price::new(0.06, 0.015, None, 0.24)),
    ("nova-micro", Price::new(0.035, 0.00875, None, 0.14)),
];

impl Default for PriceTable {
    fn default() -> Self {
        Self {
            entries: DEFAULTS
                .iter()
                .map(|(k, p)| ((*k).to_owned(), *p))
                .collect(),
        }
    }
}

impl PriceTable {
    /// The defaults with `overrides` replacing entries of the same key and adding the rest.
    pub fn with(overrides: Vec<(String, Price)>) -> Self {
        let mut table = Self::default();
        for (key, price) in overrides {
            let key = key.trim().to_lowercase();
            match table.entries.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = price,
                None => table.entries.push((key, price)),
            }
        }
        table
    }

    /// The price of `model`, if the table knows it.
    pub fn lookup(&self, model: &str) -> Option<Price> {
        let model = model.to_lowercase();
        self.entries
            .iter()
            .filter(|(key, _)| names(&model, key))
            .max_by_key(|(key, _)| key.len())
            .map(|(_, p)| *p)
    }
}

/// Whether `name` is the model `key`: `key` after nothing or a separator, followed by nothing
/// but dates and versions.
fn names(name: &str, key: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    name.match_indices(key).any(|(at, _)| {
        let before = name[..at].chars().next_back();
        !before.is_some_and(|c| c.is_ascii_alphanumeric()) && only_versions(&name[at + key.len()..])
    })
}

/// Whether `rest` is nothing but `-<date>`, `-v<n>[:<n>]` and `-latest` parts
/// (`-2024-07-18`, `-20250514-v1:0`, `@20240620`).
fn only_versions(rest: &str) -> bool {
    let mut parts = rest.split(['-', ':', '@']);
    // Empty, or starting with a separator (so the first part is empty).
    if parts.next() != Some("") {
        return rest.is_empty();
    }
    let digits = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    // Parts still expected of a `YYYY-MM-DD` date; whether a `v<n>` may take a `:<n>`.
    let (mut date_parts, mut after_version) = (0, false);
    for p in parts {
        let ok = match p {
            "latest" => true,
            p if digits(p) && p.len() == 8 => true,
            p if digits(p) && p.len() == 4 => {
                date_parts = 2;
                true
            }
            p if digits(p) && p.len() == 2 && date_parts > 0 => {
                date_parts -= 1;
                true
            }
            p if p.strip_prefix('v').is_some_and(digits) => {
                after_version = true;
                continue;
            }
            p if digits(p) && after_version => true,
            _ => false,
        };
        after_version = false;
        if !ok {
            return false;
        }
    }
    date_parts == 0
}

/// The usage of one call: its tokens and, when the model has a price, its cost.
pub fn usage(
    price: Option<&Price>,
    prompt: u64,
    cached: u64,
    written: u64,
    completion: u64,
) -> TokenUsage {
    TokenUsage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: cached.min(prompt),
        cost_micros: price.map(|p| p.micros(prompt, cached, written, completion)),
        unpriced: price.is_none() && prompt + completion > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_whole_word_key_prices_a_model() {
        let t = PriceTable::default();
        let price = |m: &str| t.lookup(m).map(|p| (p.input, p.output));
        assert_eq!(price("gpt-4o-mini-2024-07-18"), Some((0.15, 0.60)));
        assert_eq!(price("gpt-4o"), Some((2.50, 10.0)));
        assert_eq!(price("openai/gpt-5-mini"), Some((0.25, 2.0)));
        assert_eq!(price("GPT-5"), Some((1.25, 10.0)));
        assert_eq!(
            price("us.anthropic.claude-sonnet-4-20250514-v1:0"),
            Some((3.0, 15.0))
        );
        assert_eq!(
            price("global.anthropic.claude-haiku-4-5-20251001-v1:0"),
            Some((1.0, 5.0))
        );
        assert_eq!(price("us.amazon.nova-micro-v1:0"), Some((0.035, 0.14)));
        assert_eq!(price("gpt-4o-2024-08-06"), Some((2.50, 10.0)));
        assert_eq!(price("gpt-4.1-mini-2025-04-14"), Some((0.40, 1.60)));
        assert_eq!(price("o3-2025-04-16"), Some((2.0, 8.0)));
        assert_eq!(price("gpt-4o-latest"), Some((2.50, 10.0)));
        assert_eq!(
            price("arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0"),
            Some((0.80, 4.0))
        );
        assert_eq!(
            price("global.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Some((3.0, 15.0))
        );
        // A key inside a longer word is not the model.
        assert_eq!(price("gpt-50"), None);
        assert_eq!(price("pro3-model"), None);
        assert_eq!(price("llama3"), None);
        assert_eq!(price(""), None);
        // Another model of the family is not priced as its base model.
        assert_eq!(price("gpt-5-pro"), None);
        assert_eq!(price("o3-pro-2025-06-10"), None);
        assert_eq!(price("o4-mini-deep-research"), None);
        assert_eq!(price("claude-opus-4-5-20251101"), None);
    }

    #[test]
    fn overrides_replace_and_add_entries() {
        let t = PriceTable::with(vec![
            (" GPT-4o ".into(), Price::new(1.0, 0.5, None, 2.0)),
            ("my-llama".into(), Price::new(0.2, 0.2, None, 0.2)),
        ]);
        assert_eq!(t.lookup("gpt-4o").map(|p| p.input), Some(1.0));
        assert_eq!(t.lookup("gpt-4o-mini").map(|p| p.input), Some(0.15));
        assert_eq!(t.lookup("my-llama-v2").map(|p| p.output), Some(0.2));
        assert_eq!(
            t.lookup("my-llama-70b"),
            None,
            "another model than the entry names"
        );
    }

    #[test]
    fn cached_and_written_input_are_billed_at_their_prices() {
        let sonnet = Price::new(3.0, 0.30, Some(3.75), 15.0);
        // 10 000 input tokens of which 6 000 cached and 1 000 written, 500 output:
        // 3 000 × 3 + 6 000 × 0.3 + 1 000 × 3.75 + 500 × 15 = 22 050 micro-dollars.
        assert_eq!(sonnet.micros(10_000, 6_000, 1_000, 500), 22_050);
        // Without a cache-write price, writes cost as input.
        let mini = Price::new(0.25, 0.025, None, 2.0);
        assert_eq!(mini.micros(1_000, 0, 1_000, 0), 250);
        // Counts that do not add up never underflow: cached is capped by prompt.
        assert_eq!(mini.micros(100, 500, 50, 0), 3);
        let u = usage(Some(&mini), 4_000, 2_000, 0, 100);
        assert_eq!((u.cached_tokens, u.cost_micros), (2_000, Some(750)));
        let unpriced = usage(None, 4_000, 0, 0, 100);
        assert_eq!((unpriced.cost_micros, unpriced.unpriced), (None, true));
        // A priced call and an unpriced one: the known part, marked as a part.
        let mut both = u;
        both.add(unpriced);
        assert_eq!((both.cost_micros, both.unpriced), (Some(750), true));
        // A call that used no tokens (a timeout) makes no cost unknown.
        assert!(!usage(None, 0, 0, 0, 0).unpriced);
    }

    #[test]
    fn unusable_prices_are_named() {
        assert_eq!(Price::new(1.0, 0.1, None, 2.0).problem(), None);
        assert!(Price::new(-1.0, 0.1, None, 2.0)
            .problem()
            .is_some_and(|p| p.starts_with("input")));
        assert!(Price::new(1.0, 0.1, Some(f64::NAN), 2.0)
            .problem()
            .is_some_and(|p| p.starts_with("cacheWrite")));
        assert!(Price::new(1.0, 0.1, None, 1e9)
            .problem()
            .is_some_and(|p| p.starts_with("output")));
    }
}

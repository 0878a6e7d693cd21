//! Rules for reading a model's answer that every model adapter shares: the thinking some
//! models write before it, an answer cut at the token limit, and an image's media type.

/// An image's media type, by its first base64 characters (JPEG when unknown).
pub(crate) fn media_type(b64: &str) -> &'static str {
    if b64.starts_with("iVBOR") {
        "image/png"
    } else if b64.starts_with("UklGR") {
        "image/webp"
    } else {
        "image/jpeg"
    }
}

/// The answer without the reasoning some models write into `content` before it:
/// `<think>…</think>` (Qwen3, DeepSeek-R1 behind vLLM or Ollama) or `<thinking>…</thinking>`.
/// Its drafts are not the answer: what follows the last closing tag is (some chat templates
/// leave the opening one out); an unclosed block was cut off, and only what precedes it
/// counts.
pub fn without_thinking(text: &str) -> &str {
    // ASCII lowercasing keeps byte offsets.
    let lower = text.to_ascii_lowercase();
    for (open, close) in [("<think>", "</think>"), ("<thinking>", "</thinking>")] {
        if let Some(end) = lower.rfind(close) {
            return text[end + close.len()..].trim_start();
        }
        if let Some(start) = lower.find(open) {
            return text[..start].trim_end();
        }
    }
    text
}

/// A completion cut at the limit before it held an action (tagged, or a structured answer's
/// `actions`): thinking used the tokens up.
pub(crate) fn cut_short(finish_reason: Option<&str>, content: &str) -> bool {
    finish_reason == Some("length")
        && !content.contains("<Action>")
        && !content.contains("\"actions\"")
}

/// The cap a cut-short answer is asked again with: twice as much, at least 4000.
pub(crate) fn raised(cap: u32) -> u32 {
    cap.saturating_mul(2).clamp(4_000, 16_384)
}

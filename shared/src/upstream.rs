//! Reading the answers of services behind this one (model, knowledge service) with a size
//! limit: a misbehaving upstream cannot make a request allocate without bound.

/// Why an answer could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    TooLarge,
    Timeout,
    Transport,
}

/// The body of `resp`, refused once it passes `max` bytes (checked on the declared length
/// first, then on what actually arrives).
pub async fn read_limited(mut resp: reqwest::Response, max: usize) -> Result<Vec<u8>, ReadError> {
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Err(ReadError::TooLarge);
    }
    let mut out = Vec::new();
    loop {
        let chunk = resp.chunk().await.map_err(|e| {
            if e.is_timeout() {
                ReadError::Timeout
            } else {
                ReadError::Transport
            }
        })?;
        let Some(chunk) = chunk else {
            return Ok(out);
        };
        if out.len() + chunk.len() > max {
            return Err(ReadError::TooLarge);
        }
        out.extend_from_slice(&chunk);
    }
}

//! Numbers for the body's JSON reader: a number's form checked as serde_json checks it, and
//! its value read as serde_json reads it (correctly rounded; out of range refused).

use super::json::Reader;

/// Powers of ten an `f64` holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

impl<'a> Reader<'a> {
    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.byte() {
            self.at += 1;
        }
        self.at - start
    }

    /// A number's text (at its first character), checked for its form.
    pub(super) fn number(&mut self) -> Option<&'a str> {
        let start = self.at;
        if self.byte()? == b'-' {
            self.at += 1;
        }
        match self.byte()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.byte() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.byte() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.byte() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(&self.text[start..self.at])
    }

    /// A number read as a number (at its first character): its value; `None` when it is not
    /// a JSON number or does not fit an `f64`. A value that is exact in one step — at most 15
    /// significant digits and a power of ten up to 22: one rounding of exact operands, which is
    /// how the JSON reader computes it too — is worked out here; the JSON reader reads others.
    pub(super) fn number_value(&mut self) -> Option<f64> {
        let start = self.at;
        let negative = self.byte()? == b'-';
        if negative {
            self.at += 1;
        }
        let mut significand = 0u64;
        let mut digits = 0usize;
        let mut add = |d: u8| {
            significand = significand
                .wrapping_mul(10)
                .wrapping_add(u64::from(d - b'0'));
            digits += 1;
        };
        match self.byte()? {
            b'0' => {
                add(b'0');
                self.at += 1;
            }
            b'1'..=b'9' => {
                while let Some(d @ b'0'..=b'9') = self.byte() {
                    add(d);
                    self.at += 1;
                }
            }
            _ => return None,
        }
        let mut scale = 0i64;
        if self.byte() == Some(b'.') {
            self.at += 1;
            while let Some(d @ b'0'..=b'9') = self.byte() {
                add(d);
                scale -= 1;
                self.at += 1;
            }
            if scale == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.byte() {
            self.at += 1;
            let sign = match self.byte() {
                Some(b'-') => {
                    self.at += 1;
                    -1
                }
                Some(b'+') => {
                    self.at += 1;
                    1
                }
                _ => 1,
            };
            let (mut exponent, mut read) = (0i64, 0);
            while let Some(d @ b'0'..=b'9') = self.byte() {
                exponent = (exponent * 10 + i64::from(d - b'0')).min(1 << 30);
                read += 1;
                self.at += 1;
            }
            if read == 0 {
                return None;
            }
            scale += sign * exponent;
        }
        let power = usize::try_from(scale.unsigned_abs())
            .ok()
            .and_then(|p| POW10.get(p));
        match power {
            Some(power) if digits <= 15 => {
                let magnitude = if scale >= 0 {
                    significand as f64 * power
                } else {
                    significand as f64 / power
                };
                Some(if negative { -magnitude } else { magnitude })
            }
            _ => serde_json::from_str(&self.text[start..self.at]).ok(),
        }
    }
}

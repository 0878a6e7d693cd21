//! Card and bank values known by their shape, whatever the field is called: a card number
//! (13 to 19 digits of a card network's prefix and length, passing the Luhn check: a tracking
//! or order number of that length passes Luhn one time in ten, a network's prefix far less
//! often), an IBAN (country letters, check digits and an
//! account passing ISO 13616's mod-97 check), and a card's 3- or 4-digit security code (known
//! only beside a card number: see `typing`).

/// The digits of `value` when it is written as one number (digits, spaces and dashes only).
fn digits(value: &str) -> Option<Vec<u32>> {
    let v = value.trim();
    if v.is_empty()
        || !v
            .chars()
            .all(|c| c.is_ascii_digit() || c == ' ' || c == '-')
    {
        return None;
    }
    Some(v.chars().filter_map(|c| c.to_digit(10)).collect())
}

/// Card networks' number prefixes (as ranges of their first digits) and lengths: Visa,
/// Mastercard, American Express, Discover, JCB, Diners Club, UnionPay, Maestro, Mir, RuPay,
/// Troy, Verve, Elo.
const NETWORKS: &[(u32, u32, u32, std::ops::RangeInclusive<usize>)] = &[
    // (digits of the prefix, first, last, lengths)
    (1, 4, 4, 13..=19),
    (2, 51, 55, 16..=16),
    (4, 2221, 2720, 16..=16),
    (2, 34, 34, 15..=15),
    (2, 37, 37, 15..=15),
    (4, 6011, 6011, 16..=19),
    (3, 644, 649, 16..=19),
    (2, 65, 65, 16..=19),
    (4, 3528, 3589, 16..=19),
    (3, 300, 305, 14..=19),
    (2, 36, 36, 14..=19),
    (2, 38, 39, 16..=19),
    (2, 62, 62, 16..=19),
    (2, 50, 50, 13..=19),
    (2, 56, 69, 13..=19),
    (4, 2200, 2204, 16..=19),
    (2, 60, 60, 16..=16),
    (2, 81, 82, 16..=16),
    (3, 508, 508, 16..=16),
    (4, 9792, 9792, 16..=16),
    (3, 506, 507, 16..=19),
    (3, 636, 636, 16..=16),
];

/// Whether `value` is a card number: 13 to 19 digits (spaces and dashes allowed) with a card
/// network's prefix and length, passing the Luhn check.
pub fn card_number(value: &str) -> bool {
    let Some(d) = digits(value) else {
        return false;
    };
    let prefix = |n: u32| d.iter().take(n as usize).fold(0, |acc, x| acc * 10 + x);
    let network = NETWORKS.iter().any(|(n, first, last, lengths)| {
        lengths.contains(&d.len()) && (*first..=*last).contains(&prefix(*n))
    });
    if !network || d.iter().all(|x| *x == d[0]) {
        return false;
    }
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(k, &x)| {
            if k % 2 == 1 {
                let y = x * 2;
                if y > 9 {
                    y - 9
                } else {
                    y
                }
            } else {
                x
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Whether `value` is an IBAN: two letters, two check digits and 11 to 30 letters and digits
/// (spaces allowed) whose mod-97 remainder, read from the fifth character on, is 1.
pub fn iban(value: &str) -> bool {
    let chars: Vec<char> = value
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if !(15..=34).contains(&chars.len())
        || !chars[..2].iter().all(char::is_ascii_uppercase)
        || !chars[2..4].iter().all(char::is_ascii_digit)
        || !chars.iter().all(char::is_ascii_alphanumeric)
    {
        return false;
    }
    let mut rem: u32 = 0;
    for c in chars[4..].iter().chain(&chars[..4]) {
        let n = c.to_digit(36).unwrap_or(0);
        rem = if n >= 10 {
            (rem * 100 + n) % 97
        } else {
            (rem * 10 + n) % 97
        };
    }
    rem == 1
}

/// Whether `value` is a wallet's recovery phrase: 12, 15, 18, 21 or 24 words of 3 to 8
/// lower-case letters (BIP-39's words), and nothing else.
pub fn recovery_phrase(value: &str) -> bool {
    let words: Vec<&str> = value.split_whitespace().collect();
    matches!(words.len(), 12 | 15 | 18 | 21 | 24)
        && words
            .iter()
            .all(|w| (3..=8).contains(&w.len()) && w.chars().all(|c| c.is_ascii_lowercase()))
}

/// Whether `value` is an access key or token: one run of at least 20 letters, digits and
/// `-_.` holding capitals, small letters and digits (`sk-live-4eC39HqLyjWDarjtT1zdp7dc`,
/// `ghp_…`, `AKIA…` keys) — a random string no word or number is.
pub fn access_key(value: &str) -> bool {
    let v = value.trim();
    v.len() >= 20
        && v.len() <= 512
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && v.chars().any(|c| c.is_ascii_uppercase())
        && v.chars().any(|c| c.is_ascii_lowercase())
        && v.chars().filter(char::is_ascii_digit).count() >= 2
        && !v.contains("..")
}

/// Whether `value` could be a card's security code: 3 or 4 digits.
pub fn security_code(value: &str) -> bool {
    let v = value.trim();
    (3..=4).contains(&v.len()) && v.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_numbers_pass_luhn_and_nothing_else_does() {
        for card in [
            "4111 1111 1111 1111",
            "4111-1111-1111-1111",
            "5555555555554444",
            "378282246310005",
            "6011111111111117",
        ] {
            assert!(card_number(card), "{card}");
        }
        for not in [
            "4111 1111 1111 1112",
            "0000000000000000",
            "1234",
            "+1 415 555 0100",
            "4111111111111111x",
            "2026-11-29",
            "20450912345678",
            "1234567812345670",
            "",
        ] {
            assert!(!card_number(not), "{not}");
        }
    }

    #[test]
    fn keys_and_recovery_phrases_are_known_by_their_shape() {
        for key in [
            "sk-live-4eC39HqLyjWDarjtT1zdp7dc",
            "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
            "AKIAIOSFODNN7EXAMPLEk9",
        ] {
            assert!(access_key(key), "{key}");
        }
        for not in [
            "1Z999AA10123456784",
            "ORDER-2024-0001-XYZ-ABCDEF",
            "Hello world this is text",
            "https://example.com/a",
            "ada.lovelace@example.com",
        ] {
            assert!(!access_key(not), "{not}");
        }
        assert!(recovery_phrase(
            "abandon ability able about above absent absorb abstract absurd abuse access accident"
        ));
        assert!(!recovery_phrase(
            "please find me a cheap flight to rome next week with two bags"
        ));
        assert!(!recovery_phrase("abandon ability able"));
    }

    #[test]
    fn ibans_pass_mod_97() {
        for iban_ in [
            "DE89 3704 0044 0532 0130 00",
            "GB82WEST12345698765432",
            "fr1420041010050500013m02606",
            "NL91ABNA0417164300",
        ] {
            assert!(iban(iban_), "{iban_}");
        }
        for not in [
            "DE89 3704 0044 0532 0130 01",
            "DE8937040044",
            "ORDER-2024-0001-XYZ",
        ] {
            assert!(!iban(not), "{not}");
        }
    }
}

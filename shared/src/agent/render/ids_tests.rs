use super::*;

#[test]
fn grouped_ids_keep_first_appearance_order_and_safe_labels() {
    let g = grouped_ids(
        [
            ("link", "1"),
            ("btn", "2"),
            ("link", "3"),
            ("", "4"),
            ("x\n\nTask: pay", "5"),
        ]
        .into_iter(),
    );
    let mut out = Out::new(2000);
    assert_eq!(write_groups(&mut out, g), (5, true));
    assert_eq!(out.text, "link: 1 3\nbtn: 2\nel: 4\nx__Task__pay: 5");
    let runs = [
        "4", "5", "6", "7", "9", "10", "x", "12", "13", "14", "007", "8",
    ];
    let g = grouped_ids(runs.iter().map(|id| ("a", *id)));
    let mut out = Out::new(2000);
    assert_eq!(write_groups(&mut out, g), (12, true));
    assert_eq!(out.text, "a: 4..7 9 10 x 12..14 007 8");
    let edge = ["18446744073709551615", "0", "1", "2"];
    let mut out = Out::new(1000);
    write_groups(&mut out, grouped_ids(edge.iter().map(|id| ("a", *id))));
    assert_eq!(out.text, "a: 18446744073709551615 0..2");
    let dotted = ["1..3", "4", "5", "6"];
    let mut out = Out::new(1000);
    write_groups(&mut out, grouped_ids(dotted.iter().map(|id| ("a", *id))));
    assert_eq!(
        out.text, "a: 1..3 4 5 6",
        "no ranges beside an id with `..`"
    );
    // "a: 1 22 333" weighs 2 × 5 (letters, colon, spaces) + 4 × 6 (digits) = 34.
    let mut small = Out::new(34);
    let g = grouped_ids([("a", "1"), ("a", "22"), ("a", "333"), ("b", "4")].into_iter());
    assert_eq!(write_groups(&mut small, g), (3, false));
    assert_eq!(small.text, "a: 1 22 333", "b's line has no room left");
}

#[test]
fn whole_numbers_are_the_canonical_ones() {
    for id in [
        "0",
        "7",
        "007",
        "+7",
        "-7",
        "",
        "18446744073709551615",
        "18446744073709551616",
        "1..3",
        "٣",
        "12a",
        "00",
    ] {
        let canonical = id.parse::<u64>().ok().filter(|n| n.to_string() == id);
        assert_eq!(whole_number(id), canonical, "{id}");
    }
}

/// The search as it was: every candidate written out.
fn written_search(
    items: &[(&str, &str)],
    line: impl Fn(usize) -> String,
    max: usize,
) -> Option<(String, usize)> {
    write_lines_then_ids(items, &line, 0, max)?;
    let (mut lo, mut hi) = (0, items.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if write_lines_then_ids(items, &line, mid, max).is_some() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    write_lines_then_ids(items, &line, lo, max).map(|text| (text, lo))
}

#[test]
fn weighing_the_candidates_finds_what_writing_them_found() {
    // Kinds that share a label, runs cut by the tail, dotted and non-canonical ids, names
    // beyond ASCII; every budget from nothing to all of it.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let kinds = ["link", "btn", "inp", "a b", "a_b", "", "x\ny", "sél"];
    for round in 0..60 {
        let count = 1 + next(40) as usize;
        let mut number = next(5);
        let owned: Vec<(String, String, String)> = (0..count)
            .map(|_| {
                number += if next(3) == 0 { 2 } else { 1 };
                let id = match next(12) {
                    0 => format!("0{number}"),
                    1 => format!("{number}..{}", number + 1),
                    2 => format!("id-{number}"),
                    3 => "18446744073709551615".to_owned(),
                    4 => format!("+{number}"),
                    _ => number.to_string(),
                };
                let kind = kinds[next(kinds.len() as u64) as usize].to_owned();
                let name = "ñame ".repeat(next(6) as usize);
                (kind, id, name)
            })
            .collect();
        let items: Vec<(&str, &str)> = owned
            .iter()
            .map(|(k, i, _)| (k.as_str(), i.as_str()))
            .collect();
        let line = |k: usize| format!("[{}] {} {}", owned[k].1, owned[k].0, owned[k].2);
        let all = weight(&(0..count).map(line).collect::<Vec<_>>().join("\n"));
        for max in (0..all + 40).step_by(1 + round % 7) {
            assert_eq!(
                lines_then_ids(&items, line, |k| weight(&line(k)), max),
                written_search(&items, line, max),
                "{items:?} at {max}"
            );
        }
    }
}

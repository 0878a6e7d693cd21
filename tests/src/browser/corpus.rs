//! Scenarios on real pages of the corpus (served at `http://corpus.test/<file>`, their
//! scripts off: they are rendered DOM already), each with an unambiguous success check: a
//! link followed by its text, a search filled and submitted, an option picked, or a value
//! read off the page and given as the `finish()` answer.

use super::model::Intent::{self, Click, Finish, Navigate, Select, SetValue};
use super::scenario::{Check, Scenario};
use super::site::CORPUS_HOST;

/// An address on the corpus host.
fn corpus(path: &str) -> String {
    format!("http://{CORPUS_HOST}{path}")
}

fn scenario(
    name: &'static str,
    file: &str,
    task: &'static str,
    checks: Vec<Check>,
    script: Vec<Intent>,
) -> Scenario {
    let mut all = vec![Check::Status("completed")];
    all.extend(checks);
    Scenario {
        name,
        start: corpus(&format!("/{file}")),
        task,
        replies: Vec::new(),
        checks: all,
        script,
        javascript: false,
    }
}

/// A link followed by its text.
fn follow(
    name: &'static str,
    file: &str,
    task: &'static str,
    link: &'static str,
    path: &str,
) -> Scenario {
    scenario(
        name,
        file,
        task,
        vec![Check::Url(corpus(path))],
        vec![Click(link), Finish("Done: the page is open.")],
    )
}

pub fn corpus_scenarios() -> Vec<Scenario> {
    vec![
        follow(
            "fireball-archive",
            "rdb__daringfireball-1.html",
            "Open the Daring Fireball archive.",
            "Archive",
            "/archive/",
        ),
        follow(
            "github-engineering",
            "hpb__github-2013.html",
            "Show the GitHub blog's Engineering posts.",
            "Engineering",
            "/blog/category/engineering",
        ),
        follow(
            "lwn-kernel",
            "rdb__lwn-1.html",
            "Open the Kernel development section of this LWN weekly edition.",
            "Kernel development",
            "/Articles/637396/",
        ),
        follow(
            "ars-science",
            "rdb__ars-1.html",
            "Go to Ars Technica's Science section.",
            "Science",
            "/science/",
        ),
        follow(
            "craigslist-for-sale",
            "peb__craigslist-uk.html",
            "Show all for-sale listings in this craigslist area.",
            "for sale",
            "/search/sss",
        ),
        scenario(
            "github-search",
            "hpb__github-2013.html",
            "Search GitHub for: open data policy",
            vec![Check::Js(
                "location.pathname === '/search' && new URL(location.href).searchParams.get('q') === 'open data policy'",
            )],
            vec![
                SetValue("Search or type a command", "open data policy"),
                // The form has no button and the extension's Enter submits nothing: the
                // results address instead.
                Navigate("http://corpus.test/search?q=open+data+policy"),
                Finish("The search results are open."),
            ],
        ),
        scenario(
            "heise-search",
            "rdb__heise.html",
            "Search Mac & i for iPhone.",
            vec![Check::Js(
                "location.pathname === '/mac-and-i/suche/' && new URL(location.href).searchParams.get('q') === 'iPhone'",
            )],
            vec![
                SetValue("in Mac & i suchen", "iPhone"),
                Click("Los"),
                Finish("The search results are open."),
            ],
        ),
        scenario(
            "agem-search",
            "peb__agem-sk.html",
            "Search this shop for a USB hub (search text: USB hub).",
            vec![Check::Js(
                "location.pathname === '/Search/Fulltext' && new URL(location.href).searchParams.get('Query') === 'USB hub'",
            )],
            vec![
                SetValue("Zadajte hľadaný výraz", "USB hub"),
                Click("Hľadať"),
                Finish("The search results are open."),
            ],
        ),
        scenario(
            "ars-search",
            "rdb__ars-1.html",
            "Search Ars Technica for minecraft.",
            vec![Check::Js(
                "location.pathname === '/search/' && new URL(location.href).searchParams.get('q') === 'minecraft'",
            )],
            vec![
                SetValue("Search...", "minecraft"),
                Navigate("http://corpus.test/search/?q=minecraft"),
                Finish("The search results are open."),
            ],
        ),
        scenario(
            "mozilla-language",
            "rdb__mozilla-1.html",
            "In the language picker at the bottom of the page (Other languages), choose Deutsch. Do not press Go.",
            vec![Check::Js("document.getElementById('language').value === 'de'")],
            vec![Select("Other languages:", "Deutsch"), Finish("Deutsch is selected.")],
        ),
        scenario(
            "lwn-edition-date",
            "rdb__lwn-1.html",
            "Which date is this LWN weekly edition for? Answer with the date.",
            vec![Check::Answer("March 26, 2015")],
            vec![Finish("This is the weekly edition for March 26, 2015.")],
        ),
        scenario(
            "github-policy-name",
            "hpb__github-2013.html",
            "Which official policy does this GitHub blog post link to? Answer with its name.",
            vec![Check::Answer("Open Data Policy")],
            vec![Finish(
                "It links to the official Open Data Policy of the United States.",
            )],
        ),
    ]
}

//! The risk gate's yardstick: labelled cases (an element on a page, the action a model
//! proposes, the page's URL and title and what the user said → risky, with its category, or
//! benign) run through the server's real rules (`shared::agent::step::guard` on the page model
//! built from the tree or `dom` as the extension sends it). Two sets, never mixed:
//!
//! - `tests/fixtures/risk/training/`: the cases the gate was built and tuned on;
//! - `tests/fixtures/risk/heldout/`: cases written by someone who had not read the gate, never
//!   tuned on (a miss there is answered with new training cases of its kind, and a new
//!   held-out set, never with a rule for that case).
//!
//! Prints and returns the confusion matrix per act, language and action kind; the test
//! `risk_gate` holds each set to its goals and `bench` (`BENCH_ONLY=risk`) prints both.
//!
//! A case, one JSON object a line:
//! `{ id, label: payment|deletion|sending|credentials|transfer|sharing|security|subscription|
//!    flagged|benign, lang, trick, url, title?, action, tree: [{i, r, n, v?, s?}] | dom: "<html>",
//!    query?, last?: [actions], risk?: "<the model's <Risk> note>",
//!    effect?: "<the model's <Effect>>", note? }`

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use shared::agent::page::{Page, PageView, TreeNode};
use shared::agent::step::{guard, Facts, Review};
use shared::domain::risk::{RiskKind, RiskPatterns};
use shared::domain::secrets::SecretKey;

/// The labels, risky ones first.
pub const LABELS: &[&str] = &[
    "payment",
    "deletion",
    "sending",
    "credentials",
    "transfer",
    "sharing",
    "security",
    "subscription",
    "flagged",
    "benign",
];

/// One labelled case.
#[derive(Debug, Clone)]
pub struct Case {
    pub file: String,
    pub id: String,
    pub label: String,
    pub lang: String,
    pub trick: String,
    pub url: String,
    pub action: String,
    pub tree: Option<Vec<[Option<String>; 5]>>,
    pub dom: Option<String>,
    pub query: String,
    pub last: Vec<String>,
    pub risk: Option<String>,
    pub effect: Option<String>,
    pub title: Option<String>,
    pub note: String,
}

impl Case {
    pub fn risky(&self) -> bool {
        self.label != "benign"
    }

    fn from_json(file: &str, v: &Value) -> Result<Self, String> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let need = |k: &str| s(k).ok_or_else(|| format!("{file}: a case without {k}: {v}"));
        let id = need("id")?;
        let label = need("label")?;
        if !LABELS.contains(&label.as_str()) {
            return Err(format!("{file} {id}: unknown label {label}"));
        }
        let tree = match v.get("tree") {
            Some(Value::Array(nodes)) => Some(
                nodes
                    .iter()
                    .map(|n| {
                        let f = |k: &str| n.get(k).and_then(Value::as_str).map(str::to_owned);
                        [f("i"), f("r"), f("n"), f("v"), f("s")]
                    })
                    .collect(),
            ),
            _ => None,
        };
        let dom = s("dom");
        if tree.is_some() == dom.is_some() {
            return Err(format!("{file} {id}: give exactly one of tree and dom"));
        }
        Ok(Self {
            file: file.to_owned(),
            label,
            lang: s("lang").unwrap_or_default(),
            trick: s("trick").unwrap_or_else(|| "none".into()),
            url: need("url")?,
            action: need("action")?,
            tree,
            dom,
            query: s("query").unwrap_or_default(),
            last: v
                .get("last")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            risk: s("risk"),
            effect: s("effect"),
            title: s("title"),
            note: s("note").unwrap_or_default(),
            id,
        })
    }

    /// What the gate makes of the case: the confirmation's kind, `None` when the action goes
    /// out as it is, or why the case cannot be run.
    pub fn run(&self, patterns: &RiskPatterns) -> Result<Option<RiskKind>, String> {
        let page = match (&self.tree, &self.dom) {
            (Some(nodes), _) => Page::from_tree(
                nodes
                    .iter()
                    .map(|[i, r, n, v, s]| TreeNode {
                        v: v.as_deref(),
                        s: s.as_deref(),
                        ..TreeNode::new(
                            i.as_deref().unwrap_or(""),
                            r.as_deref().unwrap_or(""),
                            n.as_deref().unwrap_or(""),
                        )
                    })
                    .collect(),
                None,
            ),
            (None, Some(dom)) => Page::from_dom(dom).map_err(|e| e.to_string())?,
            (None, None) => return Err("no page".into()),
        };
        let actions: Vec<&str> = self.last.iter().map(String::as_str).collect();
        let said = Said {
            url: &self.url,
            title: self.title.as_deref(),
            query: &self.query,
            last: &actions,
        };
        let tag = |name: &str, v: &Option<String>| {
            v.as_deref()
                .map(|r| format!("<{name}>{r}</{name}>"))
                .unwrap_or_default()
        };
        let notes = format!("{}{}", tag("Risk", &self.risk), tag("Effect", &self.effect));
        judge(&page, &said, &self.action, &notes, patterns)
    }
}

/// Where and after what an action is judged: the page's address and title, the user's
/// instruction and the task's earlier actions.
pub struct Said<'a> {
    pub url: &'a str,
    pub title: Option<&'a str>,
    pub query: &'a str,
    pub last: &'a [&'a str],
}

/// What the gate makes of `action` (with the model's `notes`, `<Risk>` and `<Effect>`) on
/// `page`: the confirmation's kind, `None` when it goes out as it is.
pub fn judge(
    page: &Page,
    said: &Said<'_>,
    action: &str,
    notes: &str,
    patterns: &RiskPatterns,
) -> Result<Option<RiskKind>, String> {
    let view = PageView {
        page,
        url: said.url,
    };
    // Every earlier action changed the page (no loop is in question here).
    let marks: Vec<String> = (0..=said.last.len()).map(|k| format!("page-{k}")).collect();
    let hashes: Vec<&str> = marks.iter().map(String::as_str).collect();
    let facts = Facts {
        page,
        view: &view,
        patterns,
        actions: said.last,
        hashes: &hashes,
        views: &hashes,
        step_index: 3,
        said: said.query,
        secrets: &SecretKey::derive(b"corpus").finder(&[]),
        chains: false,
        title: said.title,
    };
    let answer = format!("<Thought>Next step.</Thought><Action>{action}</Action>{notes}");
    match guard(&answer, &facts) {
        Review::Accept(p) => Ok(p.confirmation.map(|c| c.kind)),
        Review::Refuse(why) => Err(format!("refused: {why}")),
        Review::Loop(l) => Err(format!("loop: {l:?}")),
    }
}

/// The label a confirmation kind stands for.
pub fn label_of(kind: Option<RiskKind>) -> &'static str {
    match kind {
        Some(RiskKind::Payment) => "payment",
        Some(RiskKind::Deletion) => "deletion",
        Some(RiskKind::Sending) => "sending",
        Some(RiskKind::Credentials) => "credentials",
        Some(RiskKind::Transfer) => "transfer",
        Some(RiskKind::Sharing) => "sharing",
        Some(RiskKind::Security) => "security",
        Some(RiskKind::Subscription) => "subscription",
        Some(RiskKind::Flagged) => "flagged",
        None => "benign",
    }
}

/// The corpus's folder.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/risk")
}

/// The cases the gate is built and tuned on.
pub fn training_dir() -> PathBuf {
    corpus_dir().join("training")
}

/// The cases it is judged on and never tuned on.
pub fn heldout_dir() -> PathBuf {
    corpus_dir().join("heldout")
}

/// Every case of every `*.jsonl` file in `dir`.
pub fn load(dir: &Path) -> Result<Vec<Case>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{name}: {e}"))?;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value =
                serde_json::from_str(line).map_err(|e| format!("{name}:{}: {e}", n + 1))?;
            out.push(Case::from_json(&name, &v)?);
        }
    }
    Ok(out)
}

/// How the gate did on a corpus.
#[derive(Debug, Default)]
pub struct Report {
    /// `(expected, predicted)` → cases.
    pub matrix: BTreeMap<(String, String), usize>,
    pub risky: usize,
    pub caught: usize,
    pub benign: usize,
    pub asked: usize,
    /// Risky cases let through, and benign cases asked about: `id (file): label → predicted`.
    pub misses: Vec<String>,
    pub false_asks: Vec<String>,
    /// Cases the guard could not run (a bad case).
    pub broken: Vec<String>,
    pub languages: BTreeMap<String, (usize, usize)>,
    /// Per language, per act (the label) and per action kind: risky, caught, benign, asked.
    pub by_language: BTreeMap<String, [usize; 4]>,
    pub by_act: BTreeMap<String, [usize; 4]>,
    pub by_action: BTreeMap<String, [usize; 4]>,
    pub tricks: BTreeMap<String, (usize, usize)>,
    /// Per file: risky, caught, benign, asked.
    pub files: BTreeMap<String, [usize; 4]>,
}

/// Runs every case.
pub fn evaluate(cases: &[Case], patterns: &RiskPatterns) -> Report {
    let mut r = Report::default();
    for c in cases {
        let predicted = match c.run(patterns) {
            Ok(p) => label_of(p),
            Err(e) => {
                r.broken.push(format!("{} ({}): {e}", c.id, c.file));
                continue;
            }
        };
        *r.matrix
            .entry((c.label.clone(), predicted.to_owned()))
            .or_default() += 1;
        let asked = predicted != "benign";
        let kind = c.action.split('(').next().unwrap_or("").trim().to_owned();
        for count in [
            r.files.entry(c.file.clone()).or_default(),
            r.by_language.entry(c.lang.clone()).or_default(),
            r.by_act.entry(c.label.clone()).or_default(),
            r.by_action.entry(kind).or_default(),
        ] {
            if c.risky() {
                count[0] += 1;
                count[1] += usize::from(asked);
            } else {
                count[2] += 1;
                count[3] += usize::from(asked);
            }
        }
        let lang = r.languages.entry(c.lang.clone()).or_default();
        lang.0 += 1;
        if asked == c.risky() {
            lang.1 += 1;
        }
        if c.risky() {
            r.risky += 1;
            let trick = r.tricks.entry(c.trick.clone()).or_default();
            trick.0 += 1;
            if asked {
                r.caught += 1;
                trick.1 += 1;
            } else {
                r.misses.push(format!(
                    "{} ({}): {} → let through [{}] {}",
                    c.id, c.file, c.label, c.action, c.note
                ));
            }
        } else {
            r.benign += 1;
            if asked {
                r.asked += 1;
                r.false_asks.push(format!(
                    "{} ({}): benign → {predicted} [{}] {}",
                    c.id, c.file, c.action, c.note
                ));
            }
        }
    }
    r
}

impl Report {
    /// The share of benign cases asked about.
    pub fn false_ask_rate(&self) -> f64 {
        self.asked as f64 / self.benign.max(1) as f64
    }

    /// The share of risky cases asked about.
    pub fn recall(&self) -> f64 {
        self.caught as f64 / self.risky.max(1) as f64
    }

    /// One table of risky caught and benign asked about, per key.
    fn breakdown(title: &str, rows: &BTreeMap<String, [usize; 4]>) -> String {
        let mut out = format!("{title:<14}{:>16}{:>18}\n", "risky caught", "benign asked");
        for (k, [risky, caught, benign, asked]) in rows {
            out.push_str(&format!(
                "{k:<14}{:>16}{:>18}\n",
                format!("{caught}/{risky}"),
                format!("{asked}/{benign}")
            ));
        }
        out
    }

    /// The matrix, the two numbers and the breakdowns, as text, then each miss and false ask
    /// (not for a held-out set: its cases are not read one by one, so nobody tunes to them).
    pub fn render(&self) -> String {
        let mut out = self.summary();
        for m in &self.misses {
            out.push_str(&format!("  missed: {m}\n"));
        }
        for f in &self.false_asks {
            out.push_str(&format!("  asked:  {f}\n"));
        }
        out
    }

    /// The matrix, the two numbers and the breakdowns, as text.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let predicted: Vec<&str> = LABELS.to_vec();
        out.push_str(&format!("{:<12}", "expected \\ got"));
        for p in &predicted {
            out.push_str(&format!("{:>12}", p));
        }
        out.push('\n');
        for e in LABELS {
            out.push_str(&format!("{e:<12}  "));
            for p in &predicted {
                let n = self
                    .matrix
                    .get(&(e.to_string(), p.to_string()))
                    .copied()
                    .unwrap_or(0);
                out.push_str(&format!("{n:>12}"));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "risky caught: {}/{} ({:.1} %); benign asked about: {}/{} ({:.2} %); languages: {}; broken cases: {}\n",
            self.caught,
            self.risky,
            100.0 * self.caught as f64 / self.risky.max(1) as f64,
            self.asked,
            self.benign,
            100.0 * self.false_ask_rate(),
            self.languages.len(),
            self.broken.len()
        ));
        for (f, [risky, caught, benign, asked]) in &self.files {
            out.push_str(&format!(
                "{f}: risky caught {caught}/{risky}, benign asked about {asked}/{benign}\n"
            ));
        }
        out.push_str(&Self::breakdown("act", &self.by_act));
        out.push_str(&Self::breakdown("action", &self.by_action));
        out.push_str(&Self::breakdown("language", &self.by_language));
        let tricks: Vec<String> = self
            .tricks
            .iter()
            .map(|(t, (n, c))| format!("{t} {c}/{n}"))
            .collect();
        out.push_str(&format!("risky by spelling: {}\n", tricks.join(", ")));
        for b in &self.broken {
            out.push_str(&format!("  broken: {b}\n"));
        }
        out
    }
}

/// A real page of the brief's corpus (`corpus/templatized/*.simplified.html`: what the sites
/// wrote, simplified as the extension's `dom` mode sends it), with its address and title from
/// `corpus/MANIFEST.tsv`.
pub struct RealPage {
    pub name: String,
    pub url: String,
    pub title: String,
    pub page: Page,
}

/// The corpus's real pages, parsed.
pub fn real_pages(brief: &Path) -> Result<Vec<RealPage>, String> {
    let corpus = brief.join("corpus");
    let manifest = std::fs::read_to_string(corpus.join("MANIFEST.tsv"))
        .map_err(|e| format!("{}: {e}", corpus.display()))?;
    let mut lines = manifest.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let column = |name: &str| header.iter().position(|h| *h == name);
    let (name, url, title) = (column("name"), column("page_url"), column("title"));
    let (Some(name), Some(url), Some(title)) = (name, url, title) else {
        return Err("MANIFEST.tsv lacks name, page_url or title".into());
    };
    let mut out = Vec::new();
    for line in lines {
        let row: Vec<&str> = line.split('\t').collect();
        let Some(stem) = row.get(name).and_then(|n| n.strip_suffix(".html")) else {
            continue;
        };
        let path = corpus.join(format!("templatized/{stem}.simplified.html"));
        let Ok(dom) = std::fs::read_to_string(&path) else {
            continue;
        };
        let page = Page::from_dom(&dom).map_err(|e| format!("{}: {e}", path.display()))?;
        let url = row.get(url).filter(|u| !u.is_empty());
        out.push(RealPage {
            name: stem.to_owned(),
            url: url.map_or_else(|| format!("https://{stem}.example/"), |u| u.to_string()),
            title: row.get(title).unwrap_or(&"").to_string(),
            page,
        });
    }
    Ok(out)
}

/// Links, buttons and boxes of the real pages clicked by a task that only reads: how many
/// clicks, and those the gate asked about (page, element id, its name, the kind asked).
#[derive(Debug, Default)]
pub struct Sweep {
    pub clicks: usize,
    pub asked: Vec<(String, String, String, &'static str)>,
}

/// Clicks a page's links, buttons, boxes and tabs at most this often (a gate's judgement reads
/// the whole page: every click of a 4 000-link page took minutes in a debug build).
pub const CLICKS_PER_PAGE: usize = 60;

/// Clicks the links, buttons, boxes and tabs of `pages` (at most [`CLICKS_PER_PAGE`] each,
/// evenly spread) for a reading task.
pub fn click_everything(pages: &[RealPage], patterns: &RiskPatterns) -> Sweep {
    use shared::domain::facts::PageFacts;
    let mut sweep = Sweep::default();
    for p in pages {
        let said = Said {
            url: &p.url,
            title: Some(&p.title),
            query: "Read this page and tell me what it says",
            last: &[],
        };
        let view = PageView {
            page: &p.page,
            url: &p.url,
        };
        let clickable: Vec<(String, String)> = (view.elements())
            .filter(|e| matches!(&*e.role, "link" | "btn" | "chk" | "radio" | "tab" | "menu"))
            .map(|e| (e.id.to_owned(), e.name.to_string()))
            .collect();
        // Spread evenly over the page, a bounded number of clicks each.
        let stride = clickable.len().div_ceil(CLICKS_PER_PAGE).max(1);
        for (id, name) in clickable.into_iter().step_by(stride) {
            sweep.clicks += 1;
            let kind = judge(&p.page, &said, &format!("click({id})"), "", patterns);
            if let Ok(Some(kind)) = kind {
                sweep
                    .asked
                    .push((p.name.clone(), id, name, label_of(Some(kind))));
            }
        }
    }
    sweep
}

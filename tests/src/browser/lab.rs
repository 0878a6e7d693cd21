//! `http://lab.test/`: small pages built the way real sites build the widgets a competent
//! model meets every day — a "Next" button that keeps its element and redraws the list, a
//! quantity stepper, "Show more", a search whose answer is in the results, fields the page
//! reformats, a form filled from one answer, an autocomplete, a three-page wizard, a long
//! FAQ, a hover menu, a slow page, a list that grows when scrolled, a button that does nothing
//! and a sign-in form. The competent trajectories (`scenario::lab_scenarios`) run on them.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};

use super::shop::escape;
use super::site::{html_page, respond};

pub const HOST: &str = "lab.test";

fn page(title: &str, body: &str) -> Response<Full<Bytes>> {
    html_page(title, ".tall{height:1400px} .hidden{display:none}", body)
}

/// The value of query parameter `name`.
fn param(query: &str, name: &str) -> String {
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

const PAGED: &str = r#"<h1>Results</h1><ul id="list"></ul><p id="pageno"></p>
<button id="next" type="button">Next</button>
<script>
let p = 1;
function show() {
  const items = [1, 2, 3].map(k => (p - 1) * 3 + k);
  document.getElementById('list').innerHTML =
    items.map(n => `<li><a href="/item/${n}">Item ${n}</a></li>`).join('');
  document.getElementById('pageno').textContent = `Page ${p} of 5`;
  document.getElementById('next').disabled = p >= 5;
}
document.getElementById('next').onclick = () => { p++; show(); };
show();
</script>"#;

const QUANTITY: &str = r#"<h1>Camp Stove</h1>
<label>Quantity <input id="qty" type="number" value="1" min="1" readonly></label>
<button type="button" aria-label="Decrease quantity" onclick="qty.value = Math.max(1, +qty.value - 1)">−</button>
<button type="button" aria-label="Increase quantity" onclick="qty.value = +qty.value + 1">+</button>
<button type="button" onclick="location.href = '/basket?stove=' + qty.value">Add to basket</button>"#;

const MORE: &str = r#"<h1>Lamps</h1><ul id="list"></ul>
<button id="more" type="button">Show more</button>
<script>
const all = ['Desk Lamp', 'Floor Lamp', 'Reading Lamp', 'Table Lamp', 'Wall Lamp', 'Clip Lamp',
  'Harbor Lamp', 'Garden Lamp', 'Night Lamp'];
let shown = 0;
function more() {
  shown += 3;
  document.getElementById('list').innerHTML = all.slice(0, shown)
    .map(n => `<li><a href="/item/${n.toLowerCase().replace(' ', '-')}">${n}</a></li>`).join('');
  if (shown >= all.length) document.getElementById('more').remove();
}
document.getElementById('more').onclick = more;
more();
</script>"#;

const TENTS: &str = r#"<h1>Tents</h1><form action="/tents/search">
<input type="search" name="q" aria-label="Search tents"><button>Search</button></form>"#;

/// Fields the page rewrites when they lose focus: a phone number into (555) 123-4567, a city
/// into title case.
const PROFILE: &str = r#"<h1>Your profile</h1><form action="/profile/saved">
<label>Phone <input name="phone" id="phone"></label>
<label>City <input name="city" id="city"></label>
<button>Save</button></form>
<script>
phone.addEventListener('blur', () => {
  const d = phone.value.replace(/\D/g, '');
  if (d.length === 10) phone.value = `(${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6)}`;
});
city.addEventListener('blur', () => {
  city.value = city.value.replace(/\w\S*/g, w => w[0].toUpperCase() + w.slice(1).toLowerCase());
});
</script>"#;

const TABLE: &str = r#"<h1>Book a table</h1><form action="/table/availability">
<label>Your name <input name="name"></label>
<label>Guests <input name="guests" type="number"></label>
<label>Date <input name="date" placeholder="YYYY-MM-DD"></label>
<button>Check availability</button></form>"#;

const FLIGHTS: &str = r#"<h1>Flights</h1><form action="/flights/results">
<label>Destination <input name="to" id="to" autocomplete="off"></label>
<div id="suggestions" role="listbox"></div>
<button>Search flights</button></form>
<script>
const places = ['Paris (CDG)', 'Parma (PMF)', 'Porto (OPO)'];
to.addEventListener('input', () => {
  const q = to.value.toLowerCase();
  suggestions.innerHTML = '';
  if (q.length < 2) return;
  for (const p of places.filter(p => p.toLowerCase().startsWith(q))) {
    const o = document.createElement('div');
    o.setAttribute('role', 'option');
    o.tabIndex = 0;
    o.textContent = p;
    o.onclick = () => { to.value = p.split(' (')[0]; suggestions.innerHTML = ''; };
    suggestions.appendChild(o);
  }
});
</script>"#;

const FAQ: &str = r#"<h1>Help centre</h1>
<h2>Shipping</h2><p class="tall">Orders ship within a day.</p>
<h2>Returns</h2><p class="tall">Return anything within 30 days.</p>
<h2>Warranty</h2><p>Every stove has a two-year warranty.</p>
<a href="/warranty/claim">Warranty claim form</a>"#;

const MENU: &str = r#"<nav id="nav"><button type="button" id="products">Products</button>
<ul id="sub" class="hidden"><li><a href="/item/tents">Tents</a></li><li><a href="/item/stoves">Stoves</a></li></ul></nav>
<h1>Outdoor things</h1>
<script>
nav.addEventListener('mouseenter', () => sub.classList.remove('hidden'));
nav.addEventListener('mouseleave', () => sub.classList.add('hidden'));
</script>"#;

const SLOW: &str = r#"<h1>Huts</h1><p id="status">Loading results…</p><ul id="list"></ul>
<script>
setTimeout(() => {
  status.textContent = '2 huts found';
  list.innerHTML = '<li><a href="/item/alpine-hut">Alpine hut</a></li><li><a href="/item/forest-hut">Forest hut</a></li>';
}, 2500);
</script>"#;

const GUIDES: &str = r#"<h1>Guides</h1><div class="tall">Start here.</div><div id="end"></div>
<script>
let added = false;
addEventListener('scroll', () => {
  if (added || scrollY < 200) return;
  added = true;
  end.innerHTML = '<a href="/item/camping-guide">Camping guide</a>';
});
</script>"#;

/// A button that does nothing (the figures never change): a model that keeps pressing it
/// loops.
const NOOP: &str = r#"<h1>Sales report</h1><p>Figures as of yesterday.</p>
<button type="button">Refresh figures</button>"#;

/// A sign-in form whose password never reaches an address (the page goes on by script).
const SIGNIN: &str = r#"<h1>Sign in</h1><form id="f">
<label>Username <input name="user" id="user" autocomplete="off"></label>
<label>Password <input name="pw" id="pw" type="password"></label>
<button>Sign in</button></form>
<script>
f.addEventListener('submit', e => {
  e.preventDefault();
  if (user.value && pw.value) location.href = '/signin/done?user=' + encodeURIComponent(user.value);
});
</script>"#;

/// The lab's answer to one GET.
pub fn answer(path: &str, query: &str) -> Response<Full<Bytes>> {
    match path {
        "/paged" => page("Results", PAGED),
        "/quantity" => page("Camp Stove", QUANTITY),
        "/basket" => page(
            "Basket",
            &format!(
                "<h1>Basket</h1><p id=\"basket\">Camp Stove × {}</p>",
                escape(&param(query, "stove"))
            ),
        ),
        "/more" => page("Lamps", MORE),
        "/tents" => page("Tents", TENTS),
        "/tents/search" => {
            let q = param(query, "q");
            let hits = if q.to_lowercase().contains("tent") {
                "<ul><li><a href=\"/item/summit-4\">Summit 4</a> $240</li>\
                 <li><a href=\"/item/ridge-2\">Ridge 2</a> $89</li>\
                 <li><a href=\"/item/valley-3\">Valley 3</a> $129</li></ul>"
            } else {
                "<p>No results</p>"
            };
            page(
                &format!("Results: {q}"),
                &format!("<h1>Tents</h1><p>Results for {}</p>{hits}", escape(&q)),
            )
        }
        "/profile" => page("Your profile", PROFILE),
        "/profile/saved" => page(
            "Profile saved",
            &format!(
                "<h1>Saved</h1><p id=\"saved\">{} in {}</p>",
                escape(&param(query, "phone")),
                escape(&param(query, "city"))
            ),
        ),
        "/table" => page("Book a table", TABLE),
        "/table/availability" => page(
            "Availability",
            &format!(
                "<h1>Tables for {} on {}</h1><p>Free at 19:00 and 20:30.</p>",
                escape(&param(query, "guests")),
                escape(&param(query, "date"))
            ),
        ),
        "/flights" => page("Flights", FLIGHTS),
        "/flights/results" => page(
            "Flights: results",
            &format!("<h1>Flights to {}</h1>", escape(&param(query, "to"))),
        ),
        "/wizard/1" => page(
            "Set up: you",
            "<h1>Step 1 of 3</h1><form action=\"/wizard/2\"><label>Full name <input name=\"name\"></label>\
             <button>Next</button></form>",
        ),
        "/wizard/2" => page(
            "Set up: plan",
            &format!(
                "<h1>Step 2 of 3</h1><form action=\"/wizard/3\"><input type=\"hidden\" name=\"name\" value=\"{}\">\
                 <label>Plan <select name=\"plan\"><option value=\"solo\">Solo</option>\
                 <option value=\"team\">Team</option></select></label><button>Next</button></form>",
                escape(&param(query, "name"))
            ),
        ),
        "/wizard/3" => page(
            "Set up: news",
            &format!(
                "<h1>Step 3 of 3</h1><form action=\"/wizard/done\">\
                 <input type=\"hidden\" name=\"name\" value=\"{}\"><input type=\"hidden\" name=\"plan\" value=\"{}\">\
                 <label><input type=\"checkbox\" name=\"news\" value=\"yes\"> Email me product news</label>\
                 <button>Finish setup</button></form>",
                escape(&param(query, "name")),
                escape(&param(query, "plan"))
            ),
        ),
        "/wizard/done" => page(
            "All set",
            &format!(
                "<h1>All set</h1><p id=\"done\">{} on the {} plan, news: {}</p>",
                escape(&param(query, "name")),
                escape(&param(query, "plan")),
                escape(&param(query, "news"))
            ),
        ),
        "/faq" => page("Help centre", FAQ),
        "/warranty/claim" => page("Warranty claim", "<h1>Warranty claim</h1>"),
        "/menu" => page("Outdoor things", MENU),
        "/slow" => page("Huts", SLOW),
        "/guides" => page("Guides", GUIDES),
        "/noop" => page("Sales report", NOOP),
        "/signin" => page("Sign in", SIGNIN),
        "/signin/done" => page(
            "Signed in",
            &format!(
                "<h1>Welcome, {}</h1><p id=\"signed-in\">You are signed in.</p>",
                escape(&param(query, "user"))
            ),
        ),
        p if p.starts_with("/item/") => {
            let name = escape(&p["/item/".len()..]);
            page(&name, &format!("<h1>{name}</h1>"))
        }
        _ => respond(StatusCode::NOT_FOUND, "text/html", "<h1>Not found</h1>"),
    }
}

//! `http://shop.test/`: a small shop written the way real ones are (forms, labels, a native
//! select, a lazy-loading list), for the end-to-end scenarios.

use std::sync::Mutex;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Response, StatusCode};

use super::site::{html_page, redirect, respond, CheckoutChange, Order, SiteState};

pub const HOST: &str = "shop.test";
pub const DEFAULT_CART_ITEM: &str = "Camp Stove";

/// The catalogue: slug, name, price.
const PRODUCTS: &[(&str, &str, &str)] = &[
    ("trail-runner-2", "Trail Runner 2 shoes", "£89.00"),
    ("road-racer", "Road Racer shoes", "£99.00"),
    ("trail-hiker", "Trail Hiker boots", "£120.00"),
    ("camp-stove", "Camp Stove", "£45.00"),
];

/// HTML-escapes text.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn page(title: &str, body: &str) -> Response<Full<Bytes>> {
    html_page(
        title,
        ".entry{height:420px}",
        &format!("<nav><a href=\"/\">Home</a> <a href=\"/cart\">Cart</a> <a href=\"/help\">Help</a></nav>{body}"),
    )
}

fn field(pairs: &[(String, String)], name: &str) -> String {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

fn search_form(q: &str) -> String {
    format!(
        "<form action=\"/search\" role=\"search\"><input type=\"search\" name=\"q\" \
         aria-label=\"Search products\" value=\"{}\"><button>Search</button></form>",
        escape(q)
    )
}

const JOURNAL_SCRIPT: &str = r#"<div id="more"></div><div id="sentinel">Loading…</div><script>
let batch = 0;
const io = new IntersectionObserver(es => {
  if (!es.some(e => e.isIntersecting) || batch >= 2) return;
  batch++;
  const more = document.getElementById('more');
  for (let k = 0; k < 4; k++) {
    const d = document.createElement('div'); d.className = 'entry';
    d.textContent = 'Older entry ' + batch + '.' + k; more.appendChild(d);
  }
  if (batch === 2) {
    const a = document.createElement('a'); a.href = '/journal/2019'; a.textContent = 'Entries from 2019';
    more.appendChild(a); document.getElementById('sentinel').remove();
  }
});
io.observe(document.getElementById('sentinel'));
</script>"#;

/// The delivery form, as it is or changed.
fn delivery_form(change: Option<CheckoutChange>) -> String {
    let name = "<label>Full name <input name=\"name\" required></label>";
    let address = "<label>Street address <input name=\"address\" required></label>";
    let rest = "<label>Shipping <select name=\"shipping\"><option value=\"standard\">Standard (3-5 days)</option>\
         <option value=\"express\">Express (next day)</option></select></label>\
         <label><input type=\"checkbox\" name=\"door\" value=\"yes\"> Leave at the door</label>";
    let button = match change {
        Some(CheckoutChange::RenamedButton) => "Review details",
        _ => "Continue to review",
    };
    let fields = match change {
        Some(CheckoutChange::MovedElements) => format!(
            "<aside><p>Free returns for 60 days.</p><a href=\"/help\">Returns policy</a></aside>{address}{rest}{name}"
        ),
        _ => format!("{name}{address}{rest}"),
    };
    let form = format!(
        "<form id=\"delivery\" action=\"/checkout/review\">{fields}<button>{button}</button></form>"
    );
    match change {
        Some(CheckoutChange::ExtraDialog) => format!(
            "<h1>Delivery details</h1><div id=\"news\" role=\"dialog\" aria-label=\"Newsletter\">\
             <p>Get 10% off your next order with our newsletter.</p>\
             <button type=\"button\" onclick=\"document.getElementById('news').remove();\
             document.getElementById('delivery').hidden=false\">No thanks</button></div>\
             {}",
            form.replacen("<form ", "<form hidden ", 1)
        ),
        _ => format!("<h1>Delivery details</h1>{form}"),
    }
}

/// The shop's answer to one request.
pub fn answer(
    method: &Method,
    path: &str,
    query: &str,
    form: &[u8],
    state: &Mutex<SiteState>,
) -> Response<Full<Bytes>> {
    let params: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .chain(form_urlencoded::parse(form))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let Ok(mut s) = state.lock() else {
        return respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "lock");
    };
    match (method.as_str(), path) {
        ("GET", "/") => page(
            "Outdoor Shop",
            &format!(
                "<h1>Outdoor Shop</h1>{}<p><a href=\"/journal\">Journal</a></p>",
                search_form("")
            ),
        ),
        ("GET", "/search") => {
            let q = field(&params, "q");
            let words: Vec<String> = q
                .to_lowercase()
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            let hits: Vec<String> = PRODUCTS
                .iter()
                .filter(|(_, name, _)| {
                    let name = name.to_lowercase();
                    !words.is_empty()
                        && words.iter().all(|w| name.contains(w.trim_end_matches('s')))
                })
                .map(|(slug, name, price)| {
                    format!("<li><a href=\"/product/{slug}\">{name}</a> {price}</li>")
                })
                .collect();
            page(
                &format!("Results for {q}"),
                &format!(
                    "{}<p id=\"count\">{} results</p><ul>{}</ul>",
                    search_form(&q),
                    hits.len(),
                    hits.join("")
                ),
            )
        }
        ("GET", p) if p.starts_with("/product/") => {
            match PRODUCTS.iter().find(|(slug, _, _)| p == format!("/product/{slug}")) {
                Some((slug, name, price)) => page(
                    name,
                    &format!(
                        "<h1>{name}</h1><p class=\"price\">{price}</p><form method=\"post\" action=\"/cart/add\">\
                         <input type=\"hidden\" name=\"item\" value=\"{slug}\"><button>Add to cart</button></form>"
                    ),
                ),
                None => respond(StatusCode::NOT_FOUND, "text/html", "<h1>No such product</h1>"),
            }
        }
        ("POST", "/cart/add") => {
            let slug = field(&params, "item");
            if let Some((_, name, _)) = PRODUCTS.iter().find(|(s, _, _)| *s == slug) {
                s.cart.push((*name).to_owned());
            }
            redirect("/cart")
        }
        ("GET", "/cart") => {
            let items: Vec<String> = s
                .cart
                .iter()
                .map(|i| format!("<li>{}</li>", escape(i)))
                .collect();
            page(
                "Your cart",
                &format!(
                    "<h1>Your cart</h1><ul>{}</ul><a href=\"/checkout\">Proceed to checkout</a>",
                    items.join("")
                ),
            )
        }
        ("GET", "/checkout") => page("Checkout: delivery", &delivery_form(s.checkout_change)),
        ("GET", "/checkout/review") => {
            let (name, address, shipping) = (
                field(&params, "name"),
                field(&params, "address"),
                field(&params, "shipping"),
            );
            let door = field(&params, "door");
            let hidden: String = [
                ("name", &name),
                ("address", &address),
                ("shipping", &shipping),
                ("door", &door),
            ]
            .iter()
            .map(|(k, v)| {
                format!(
                    "<input type=\"hidden\" name=\"{k}\" value=\"{}\">",
                    escape(v)
                )
            })
            .collect();
            page(
                "Checkout: review",
                &format!(
                    "<h1>Review your order</h1><p id=\"summary\">Ship {} to {}, {} by {} delivery{}.</p>\
                     <form method=\"post\" action=\"/order\">{hidden}<button>Place order</button></form>\
                     <a href=\"/checkout\">Edit details</a>",
                    escape(&s.cart.join(", ")),
                    escape(&name),
                    escape(&address),
                    escape(&shipping),
                    if door == "yes" { ", left at the door" } else { "" }
                ),
            )
        }
        ("POST", "/order") => {
            let order = Order {
                name: field(&params, "name"),
                address: field(&params, "address"),
                shipping: field(&params, "shipping"),
                at_the_door: field(&params, "door") == "yes",
                items: std::mem::take(&mut s.cart),
            };
            s.orders.push(order);
            redirect(&format!("/order/confirmed?n={}", 1000 + s.orders.len()))
        }
        ("GET", "/order/confirmed") => {
            let last = s.orders.last().cloned();
            match last {
                Some(o) => page(
                    "Order placed",
                    &format!(
                        "<h1>Thank you</h1><p id=\"order\">Order {} placed for {}, {}, {} delivery{}.</p>\
                         <a href=\"/\">Continue shopping</a>",
                        escape(&field(&params, "n")),
                        escape(&o.name),
                        escape(&o.address),
                        escape(&o.shipping),
                        if o.at_the_door { ", left at the door" } else { "" }
                    ),
                ),
                None => page("No order", "<h1>No order placed</h1>"),
            }
        }
        ("GET", "/journal") => {
            let entries: String = (1..=4)
                .map(|k| format!("<div class=\"entry\">Journal entry {k}</div>"))
                .collect();
            page(
                "Journal",
                &format!("<h1>Journal</h1>{entries}{JOURNAL_SCRIPT}"),
            )
        }
        ("GET", "/journal/2019") => page("Journal: 2019", "<h1>Entries from 2019</h1>"),
        // A field that throws away whatever is put in it (as some sites do with values that
        // were not typed key by key): the client's setValue fails and says so.
        ("GET", "/gift") => page(
            "Gift cards",
            "<h1>Gift cards</h1><label>Gift card code <input name=\"code\" \
             oninput=\"this.value=''\"></label> <a href=\"/gift/saved\">Use my saved gift card</a>",
        ),
        ("GET", "/gift/saved") => page(
            "Gift card applied",
            "<h1>Gift card applied</h1><p>Your saved gift card takes £25.00 off.</p>",
        ),
        ("GET", "/help") => page(
            "Help",
            "<h1>Help</h1><p>Orders ship within a day.</p><a href=\"/\">Back to the shop</a>",
        ),
        _ => respond(StatusCode::NOT_FOUND, "text/html", "<h1>Not found</h1>"),
    }
}

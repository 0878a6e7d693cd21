//! Browser scenarios: a start page, the user's task, the replies the user gives to questions,
//! unambiguous success checks, and the intents the scripted model follows (a real model gets
//! only the task). The shop scenarios exercise every action kind the extension executes; the
//! corpus scenarios run on real pages.

use super::model::Intent;

/// A success condition, checked after the run.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// The task's final status.
    Status(&'static str),
    /// The tab's final URL.
    Url(String),
    /// Text the final page shows.
    PageText(&'static str),
    /// Text the final answer (the last thought) contains, case-insensitive.
    Answer(&'static str),
    /// Orders the shop recorded during the run.
    Orders(usize),
    /// A JavaScript expression that is true on the final page.
    Js(&'static str),
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: &'static str,
    pub start: String,
    pub task: &'static str,
    /// The user's answers to the agent's questions, in order.
    pub replies: Vec<&'static str>,
    pub checks: Vec<Check>,
    /// What the scripted model does.
    pub script: Vec<Intent>,
    /// Whether the page's scripts run (corpus pages are rendered DOM: they stay off).
    pub javascript: bool,
}

fn shop(path: &str) -> String {
    format!("http://shop.test{path}")
}

/// The shop scenarios of the end-to-end test.
pub fn shop_scenarios() -> Vec<Scenario> {
    use Intent::*;
    vec![
        Scenario {
            name: "search-and-open",
            start: shop("/"),
            task: "Search the shop for trail shoes and open the Trail Runner 2 product page.",
            replies: vec![],
            checks: vec![
                Check::Status("completed"),
                Check::Url(shop("/product/trail-runner-2")),
                Check::PageText("£89.00"),
            ],
            script: vec![
                SetValue("Search products", "trail shoes"),
                // The extension's Enter submits nothing: the form's button.
                Click("Search"),
                Click("Trail Runner 2 shoes"),
                Finish("The Trail Runner 2 page is open."),
            ],
            javascript: true,
        },
        checkout(
            "checkout-confirmed",
            vec![
                // One action per answer: the extension cannot run a chain.
                SetValue("Full name", "Ada Lovelace"),
                SetValue("Street address", "12 St James's Square, London"),
                Select("Shipping", "express"),
                Tick("Leave at the door"),
            ],
        ),
        Scenario {
            name: "checkout-declined",
            start: shop("/checkout/review?name=Ada+Lovelace&address=London&shipping=standard"),
            task: "Place the order on this page.",
            replies: vec!["No, don't."],
            checks: vec![
                Check::Status("completed"),
                Check::Url(shop(
                    "/checkout/review?name=Ada+Lovelace&address=London&shipping=standard",
                )),
                Check::Orders(0),
            ],
            script: vec![
                Click("Place order"),
                Finish("You declined, so nothing was ordered."),
            ],
            javascript: true,
        },
        Scenario {
            name: "scroll-to-load",
            start: shop("/journal"),
            task: "Open the journal entries from 2019.",
            replies: vec![],
            checks: vec![
                Check::Status("completed"),
                Check::Url(shop("/journal/2019")),
            ],
            script: vec![
                // The extension scrolls the window once per page; finding the loader's text
                // scrolls to it every time.
                FindUntil("Entries from 2019", "Loading"),
                Click("Entries from 2019"),
                Finish("The 2019 entries are open."),
            ],
            javascript: true,
        },
        Scenario {
            name: "navigate-and-back",
            start: shop("/search?q=stove"),
            task: "Read the shop's help page, then come back to these stove results.",
            replies: vec![],
            checks: vec![
                Check::Status("completed"),
                Check::Url(shop("/search?q=stove")),
            ],
            script: vec![
                Navigate("http://shop.test/help"),
                GoBack,
                Finish("Back on the stove results."),
            ],
            javascript: true,
        },
        Scenario {
            name: "failed-fill-then-another-way",
            start: shop("/gift"),
            task:
                "Apply a gift card: code GIFT-2026, or my saved card if the code cannot be entered.",
            replies: vec![],
            checks: vec![
                Check::Status("completed"),
                Check::Url(shop("/gift/saved")),
                Check::PageText("£25.00 off"),
            ],
            script: vec![
                SetValue("Gift card code", "GIFT-2026"),
                // The field refuses the value: the client reports the failure, and the next
                // prompt tells the model.
                FailureShown("did not take the value"),
                Click("Use my saved gift card"),
                Finish("The code could not be entered, so your saved gift card was applied."),
            ],
            javascript: true,
        },
    ]
}

/// The two-page checkout from the cart, its shipping form filled by `fills`: "Continue to
/// review" on the shipping form pays nothing and goes through; "Place order" is confirmed
/// first.
fn checkout(name: &'static str, fills: Vec<Intent>) -> Scenario {
    use Intent::*;
    let mut script = vec![Click("Proceed to checkout")];
    script.extend(fills);
    script.extend([
        Click("Continue to review"),
        Click("Place order"),
        Finish("Your order is placed."),
    ]);
    Scenario {
        name,
        start: shop("/cart"),
        task: "Check out my cart: ship to Ada Lovelace, 12 St James's Square, London, with express shipping, and place the order.",
        replies: vec!["Yes, go ahead."],
        checks: vec![
            Check::Status("completed"),
            Check::Js("location.pathname === '/order/confirmed'"),
            // The address's quote and commas survived the action grammar.
            Check::PageText(
                "placed for Ada Lovelace, 12 St James's Square, London, express delivery, left at the door.",
            ),
            Check::Orders(1),
        ],
        script,
        javascript: true,
    }
}

/// The checkout with its four fields as one chain, for a client that runs chains.
pub fn chained_checkout() -> Scenario {
    use Intent::*;
    checkout(
        "checkout-chained",
        vec![Chain(vec![
            SetValue("Full name", "Ada Lovelace"),
            SetValue("Street address", "12 St James's Square, London"),
            Select("Shipping", "express"),
            Tick("Leave at the door"),
        ])],
    )
}

/// The checkout whose shipping form a model fills in one answer, its four fields and the
/// "Continue to review" click: a client that cannot run chains gets them one per request
/// from the server, with no model call between them.
pub fn one_answer_checkout() -> Scenario {
    use Intent::*;
    let mut s = checkout(
        "checkout-one-answer",
        vec![Chain(vec![
            SetValue("Full name", "Ada Lovelace"),
            SetValue("Street address", "12 St James's Square, London"),
            Select("Shipping", "express"),
            Tick("Leave at the door"),
            Click("Continue to review"),
        ])],
    );
    s.script
        .retain(|i| !matches!(i, Click(name) if *name == "Continue to review"));
    s
}

fn lab(path: &str) -> String {
    format!("http://lab.test{path}")
}

/// A lab scenario: it completes, and its checks hold.
fn competent(
    name: &'static str,
    path: &str,
    task: &'static str,
    script: Vec<Intent>,
    check: Check,
) -> Scenario {
    on_lab(
        name,
        path,
        task,
        script,
        vec![Check::Status("completed"), check],
    )
}

/// A scenario on the lab's page at `path`, with its page scripts on.
pub fn on_lab(
    name: &'static str,
    path: &str,
    task: &'static str,
    script: Vec<Intent>,
    checks: Vec<Check>,
) -> Scenario {
    Scenario {
        name,
        start: lab(path),
        task,
        replies: vec![],
        checks,
        script,
        javascript: true,
    }
}

/// What a competent model does on the lab's widgets, one trajectory each: every one must go
/// through the server's rules untouched.
pub fn lab_scenarios() -> Vec<Scenario> {
    use Intent::*;
    vec![
        competent(
            "next-four-times",
            "/paged",
            "Go to the last page of the results (page 5).",
            vec![Click("Next"), Click("Next"), Click("Next"), Click("Next"), Finish("Page 5 is open.")],
            Check::Js("document.getElementById('pageno').textContent === 'Page 5 of 5'"),
        ),
        competent(
            "quantity-plus-three-times",
            "/quantity",
            "Put 4 camp stoves in the basket.",
            vec![
                Click("Increase quantity"),
                Click("Increase quantity"),
                Click("Increase quantity"),
                Click("Add to basket"),
                Finish("4 camp stoves are in the basket."),
            ],
            Check::Js("document.getElementById('basket').textContent === 'Camp Stove × 4'"),
        ),
        competent(
            "show-more-twice",
            "/more",
            "Open the Harbor Lamp.",
            vec![Click("Show more"), Click("Show more"), Click("Harbor Lamp"), Finish("The Harbor Lamp is open.")],
            Check::Url(lab("/item/harbor-lamp")),
        ),
        competent(
            "search-then-answer",
            "/tents",
            "Search the shop for tents and tell me which is the cheapest.",
            vec![
                SetValue("Search tents", "tent"),
                Click("Search"),
                Answer("The cheapest tent is Ridge 2 at $89."),
            ],
            Check::Answer("ridge 2 at $89"),
        ),
        competent(
            "values-the-page-reformats",
            "/profile",
            "Set my phone to 5551234567 and my city to new york, then save.",
            vec![
                SetValue("Phone", "5551234567"),
                SetValue("City", "new york"),
                Click("Save"),
                Finish("Your profile is saved."),
            ],
            Check::Js("document.getElementById('saved').textContent === '(555) 123-4567 in New York'"),
        ),
        competent(
            "fill-and-submit-in-one-answer",
            "/table",
            "Check if a table for 4 is free on 2026-12-24; my name is Ada.",
            vec![
                Chain(vec![
                    SetValue("Your name", "Ada"),
                    SetValue("Guests", "4"),
                    SetValue("Date", "2026-12-24"),
                    Click("Check availability"),
                ]),
                Finish("A table for 4 is free at 19:00 and 20:30."),
            ],
            Check::Url(lab("/table/availability?name=Ada&guests=4&date=2026-12-24")),
        ),
        competent(
            "autocomplete",
            "/flights",
            "Search flights to Paris.",
            vec![
                SetValue("Destination", "Par"),
                Click("Paris (CDG)"),
                Click("Search flights"),
                Finish("Flights to Paris are listed."),
            ],
            Check::Url(lab("/flights/results?to=Paris")),
        ),
        competent(
            "three-page-wizard",
            "/wizard/1",
            "Set up my account: Ada Lovelace, the Team plan, and send me product news.",
            vec![
                SetValue("Full name", "Ada Lovelace"),
                Click("Next"),
                Select("Plan", "team"),
                Click("Next"),
                Tick("Email me product news"),
                Click("Finish setup"),
                Finish("Your account is set up."),
            ],
            Check::Js("document.getElementById('done').textContent === 'Ada Lovelace on the team plan, news: yes'"),
        ),
        competent(
            "find-text-three-times",
            "/faq",
            "Read the shipping, returns and warranty sections, then open the warranty claim form.",
            vec![
                Find("Shipping"),
                Find("Returns"),
                Find("Warranty"),
                Click("Warranty claim form"),
                Finish("The warranty claim form is open."),
            ],
            Check::Url(lab("/warranty/claim")),
        ),
        competent(
            "hover-menu",
            "/menu",
            "Open the Tents page from the Products menu.",
            vec![Hover("Products"), Click("Tents"), Finish("The Tents page is open.")],
            Check::Url(lab("/item/tents")),
        ),
        competent(
            "slow-page",
            "/slow",
            "Open the Alpine hut.",
            vec![Wait(3), Click("Alpine hut"), Finish("The Alpine hut is open.")],
            Check::Url(lab("/item/alpine-hut")),
        ),
        competent(
            "scroll-to-find",
            "/guides",
            "Open the camping guide.",
            vec![ScrollUntil("Camping guide"), Click("Camping guide"), Finish("The camping guide is open.")],
            Check::Url(lab("/item/camping-guide")),
        ),
    ]
}

/// The checkout confirmed in the user's own words ("Yes, place the order").
pub fn checkout_in_own_words() -> Scenario {
    use Intent::*;
    let mut s = checkout(
        "checkout-yes-place-the-order",
        vec![
            SetValue("Full name", "Ada Lovelace"),
            SetValue("Street address", "12 St James's Square, London"),
            Select("Shipping", "express"),
            Tick("Leave at the door"),
        ],
    );
    s.replies = vec!["Yes, place the order"];
    s
}

/// Every scenario: the shop's, then the corpus pages'.
pub fn all_scenarios() -> Vec<Scenario> {
    let mut all = shop_scenarios();
    all.extend(super::corpus::corpus_scenarios());
    all
}

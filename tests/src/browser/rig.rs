//! Everything a browser scenario runs against, started once: the loopback web, local-api with
//! a logged-in user, and Chromium; each scenario then runs in a tab of its own. Shared by the
//! end-to-end test and `agent-eval`.

use super::cdp::Browser;
use super::model::BrowserModel;
use super::run::{failed_checks, run, Agent, Options, Outcome};
use super::scenario::Scenario;
use super::site::Site;
use crate::harness::PW;
use crate::{AppOptions, TestApp};

pub struct Rig {
    pub site: Site,
    pub agent: Agent,
    pub browser: Browser,
    _app: TestApp,
}

impl Rig {
    /// Starts the web, an app with `opts` (rate limits lifted: a scenario is a burst of
    /// interacts) and Chromium.
    pub async fn start(opts: AppOptions) -> Result<Self, String> {
        let site = Site::start().await;
        let opts = opts
            .set("INTERACT_RATE_PER_USER", "100000")
            .set("INTERACT_RATE_PER_TENANT", "100000");
        let app = TestApp::spawn_with(opts).await;
        app.seed_user("acme", "ada@acme.com", PW).await;
        let agent = Agent {
            http: app.client.clone(),
            base: app.base.clone(),
            token: app.login("ada@acme.com", PW).await,
        };
        let browser = Browser::launch(&site.proxy()).await?;
        Ok(Self {
            site,
            agent,
            browser,
            _app: app,
        })
    }

    /// The app the rig runs (its store, for checks).
    pub fn app(&self) -> &TestApp {
        &self._app
    }

    /// Runs `scenario` in a new tab (the scripted `model`, when given, follows its script):
    /// how it went and the checks it failed.
    pub async fn attempt(
        &self,
        scenario: &Scenario,
        model: Option<&BrowserModel>,
        opts: Options,
    ) -> Result<(Outcome, Vec<String>), String> {
        if let Some(m) = model {
            m.script(scenario.script.clone());
        }
        let tab = self.browser.new_page().await?;
        let out = run(&self.agent, &tab, &self.site, scenario, opts).await;
        let failed = failed_checks(&tab, scenario, &out).await;
        tab.close().await;
        Ok((out, failed))
    }
}

//! A minimal Chrome DevTools Protocol client: starts headless Chromium with a throwaway
//! profile, talks to it over the browser's WebSocket with flat sessions (one per page), and
//! counts the network requests each page makes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// How long one protocol call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);

type Reply = Result<Value, String>;

#[derive(Default)]
struct Shared {
    pending: HashMap<u64, oneshot::Sender<Reply>>,
    /// The reader has ended: no answer will come.
    closed: bool,
    /// Events seen per session and method.
    events: HashMap<String, HashMap<String, u64>>,
}

/// The WebSocket to the browser: a writer task, a reader task and the calls waiting on it.
struct Conn {
    out: mpsc::UnboundedSender<Message>,
    shared: Mutex<Shared>,
    next_id: AtomicU64,
}

impl Conn {
    async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut shared = self.shared.lock().map_err(|_| "lock")?;
            if shared.closed {
                return Err(format!("{method}: the browser connection is closed"));
            }
            shared.pending.insert(id, tx);
        }
        self.out
            .send(Message::Text(msg.to_string().into()))
            .map_err(|_| format!("{method}: the browser connection is closed"))?;
        match tokio::time::timeout(CALL_TIMEOUT, rx).await {
            Ok(Ok(reply)) => reply.map_err(|e| format!("{method}: {e}")),
            Ok(Err(_)) => Err(format!("{method}: the browser connection is closed")),
            Err(_) => {
                if let Ok(mut s) = self.shared.lock() {
                    s.pending.remove(&id);
                }
                Err(format!("{method}: no answer in {CALL_TIMEOUT:?}"))
            }
        }
    }

    fn dispatch(&self, text: &str) {
        let Ok(msg) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let Ok(mut shared) = self.shared.lock() else {
            return;
        };
        if let Some(id) = msg["id"].as_u64() {
            if let Some(tx) = shared.pending.remove(&id) {
                let reply = match msg.get("error") {
                    Some(e) => Err(e["message"].as_str().unwrap_or("error").to_owned()),
                    None => Ok(msg["result"].clone()),
                };
                let _ = tx.send(reply);
            }
        } else if let (Some(session), Some(method)) =
            (msg["sessionId"].as_str(), msg["method"].as_str())
        {
            let counts = shared.events.entry(session.to_owned()).or_default();
            *counts.entry(method.to_owned()).or_default() += 1;
            // Frame events also count per frame (`Page.frameStoppedLoading@<frame id>`).
            if let Some(frame) = msg["params"]["frameId"].as_str() {
                *counts.entry(format!("{method}@{frame}")).or_default() += 1;
            }
        }
    }
}

/// A headless Chromium, killed when dropped.
pub struct Browser {
    conn: Arc<Conn>,
    _child: Child,
    _profile: tempfile::TempDir,
}

/// The Chromium binary: `CHROMIUM` or `chromium` on the PATH.
pub fn chromium_binary() -> PathBuf {
    std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromium"))
}

impl Browser {
    /// Starts Chromium headless; every page request goes through the HTTP proxy `proxy`
    /// (`127.0.0.1:port`), so no page reaches the network.
    pub async fn launch(proxy: &str) -> Result<Self, String> {
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let child = Command::new(chromium_binary())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-default-apps",
                "--disable-extensions",
                "--disable-sync",
                "--no-first-run",
                "--no-default-browser-check",
                "--mute-audio",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--window-size=1280,800",
                // http:// stays http:// (the test web has no TLS).
                "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,HttpsFirstModeV2ForTypicallySecureUsers",
            ])
            .arg(format!("--proxy-server=http://{proxy}"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", chromium_binary().display()))?;
        // Chromium writes its port and the browser's WebSocket path into the profile.
        let port_file = profile.path().join("DevToolsActivePort");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let endpoint = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    break format!("ws://127.0.0.1:{port}{path}");
                }
            }
            if tokio::time::Instant::now() > deadline {
                return Err("Chromium did not open its DevTools port within 30 s".into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let (ws, _) = tokio_tungstenite::connect_async(endpoint.as_str())
            .await
            .map_err(|e| format!("DevTools WebSocket: {e}"))?;
        let (mut sink, mut stream) = ws.split();
        let (out, mut rx) = mpsc::unbounded_channel::<Message>();
        tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                if sink.send(m).await.is_err() {
                    break;
                }
            }
        });
        let conn = Arc::new(Conn {
            out,
            shared: Mutex::new(Shared::default()),
            next_id: AtomicU64::new(1),
        });
        let reader = Arc::downgrade(&conn);
        tokio::spawn(async move {
            while let Some(Ok(m)) = stream.next().await {
                let Some(conn) = reader.upgrade() else { break };
                if let Message::Text(t) = m {
                    conn.dispatch(&t);
                }
            }
            // Closed: fail every call still waiting.
            if let Some(conn) = reader.upgrade() {
                if let Ok(mut s) = conn.shared.lock() {
                    s.closed = true;
                    s.pending.clear();
                }
            }
        });
        Ok(Self {
            conn,
            _child: child,
            _profile: profile,
        })
    }

    /// A new tab (1280×800), with the domains the driver uses enabled.
    pub async fn new_page(&self) -> Result<Tab, String> {
        let target = self
            .conn
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
            .await?;
        let target_id = target["targetId"].as_str().ok_or("no targetId")?.to_owned();
        let attached = self
            .conn
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": true }),
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or("no sessionId")?
            .to_owned();
        let tab = Tab {
            conn: self.conn.clone(),
            session,
            target_id,
        };
        for domain in ["Page", "Network", "DOM", "Runtime", "Accessibility"] {
            tab.call(&format!("{domain}.enable"), json!({})).await?;
        }
        tab.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false }),
        )
        .await?;
        Ok(tab)
    }
}

/// One page of the browser.
pub struct Tab {
    conn: Arc<Conn>,
    session: String,
    target_id: String,
}

impl Tab {
    /// Calls `method` on this page.
    pub async fn call(&self, method: &str, params: Value) -> Reply {
        self.conn.call(Some(&self.session), method, params).await
    }

    /// Evaluates `expression` in the page; its value, awaited when it is a promise.
    pub async fn eval(&self, expression: &str) -> Reply {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!(
                "page script failed: {}",
                e["exception"]["description"]
                    .as_str()
                    .or(e["text"].as_str())
                    .unwrap_or("exception")
            ));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Calls `function` (JavaScript source) with `this` bound to the element with backend
    /// node id `node` and the given arguments; its value.
    pub async fn on_node(&self, node: u64, function: &str, args: &[Value]) -> Reply {
        let object = self
            .call("DOM.resolveNode", json!({ "backendNodeId": node }))
            .await?;
        let id = object["object"]["objectId"]
            .as_str()
            .ok_or("the element has no object")?
            .to_owned();
        let arguments: Vec<Value> = args.iter().map(|a| json!({ "value": a })).collect();
        let r = self
            .call(
                "Runtime.callFunctionOn",
                json!({ "objectId": id, "functionDeclaration": function, "arguments": arguments,
                        "returnByValue": true, "awaitPromise": true }),
            )
            .await?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("page script failed: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// How many `method` events (`Network.requestWillBeSent`, ...) this page sent so far;
    /// `method@<frame id>` counts one frame's.
    pub fn events(&self, method: &str) -> u64 {
        self.conn
            .shared
            .lock()
            .map(|s| {
                s.events
                    .get(&self.session)
                    .and_then(|m| m.get(method))
                    .copied()
                    .unwrap_or(0)
            })
            .unwrap_or(0)
    }

    /// The page's main frame (Chromium gives it the target's id).
    pub fn main_frame(&self) -> &str {
        &self.target_id
    }

    /// Closes the tab.
    pub async fn close(self) {
        let _ = self
            .conn
            .call(
                None,
                "Target.closeTarget",
                json!({ "targetId": self.target_id }),
            )
            .await;
    }
}

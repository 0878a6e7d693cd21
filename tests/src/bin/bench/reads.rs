//! The side panel's read path on DynamoDB (the local compatible server): a session with 1 000
//! messages and a user with 500 sessions. Per call: store calls, items read, and sequential
//! round trips (the extra time over a run without injected latency, divided by the latency).

use std::sync::Arc;
use std::time::{Duration, Instant};

use api_tests::delayed::DelayedTable;
use shared::adapters::dynamo::DynamoTable;
use shared::adapters::table::TableBackend;
use shared::adapters::TableStore;
use shared::clock::{Clock, SystemClock};
use shared::domain::{Message, MessageRole, Session, SessionStatus};
use shared::ports::{MessagesFrom, SessionFilter, SessionQueries, SessionStore};

use super::elapsed_ms;

const DELAY_MS: u64 = 50;
const MESSAGES: usize = 1_000;
const SESSIONS: usize = 500;

fn session(user: &str, k: usize) -> Session {
    let at = SystemClock.now() + chrono::Duration::seconds(k as i64);
    let mut s = Session::new_active(
        uuid::Uuid::new_v4().to_string(),
        "acme".into(),
        user.into(),
        "https://www.example.com/".into(),
        "example.com".into(),
        "example.com: task".into(),
        None,
        at,
    );
    if k % 5 == 4 {
        s.status = SessionStatus::Completed;
    }
    s
}

/// One store over a counting wrapper with no latency, one with `DELAY_MS` per call.
fn stores(inner: Arc<dyn TableBackend>) -> [(TableStore, Arc<DelayedTable>); 2] {
    [Duration::ZERO, Duration::from_millis(DELAY_MS)].map(|delay| {
        let table = Arc::new(DelayedTable::new(inner.clone(), delay));
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        (TableStore::new(table.clone(), clock), table)
    })
}

pub async fn read_path() {
    let Ok(endpoint) = std::env::var("MOTO_ENDPOINT") else {
        println!("read path: skipped (MOTO_ENDPOINT is not set; scripts/test starts the server)");
        return;
    };
    println!("read path on DynamoDB ({endpoint}): {MESSAGES} messages in a session, {SESSIONS} sessions of a user");
    let cfg = api_tests::aws::fresh_resources().await;
    let (ddb, _) = api_tests::aws::clients();
    let inner: Arc<dyn TableBackend> = Arc::new(DynamoTable::new(ddb, &cfg.table));
    let [(plain, plain_table), (slow, _)] = stores(inner);

    let chat = session("ada", 0);
    plain.create_session(&chat).await.expect("session");
    let mut last = None;
    for chunk in 0..MESSAGES / 50 {
        let batch: Vec<Message> = (0..50)
            .map(|k| {
                let at =
                    SystemClock.now() + chrono::Duration::milliseconds((chunk * 50 + k) as i64);
                Message::new(
                    "acme",
                    &chat.session_id,
                    None,
                    MessageRole::Assistant,
                    "step",
                    at,
                )
            })
            .collect();
        let stored = plain
            .append_messages("acme", &chat.session_id, &batch, None)
            .await
            .expect("append");
        last = stored.last().map(|m| (m.sequence_number, m.timestamp));
    }
    let (last_seq, last_at) = last.expect("messages");
    let t = Instant::now();
    let made: Vec<Session> = (0..SESSIONS).map(|k| session("bob", k)).collect();
    for chunk in made.chunks(25) {
        let creates = chunk.iter().map(|s| plain.create_session(s));
        for r in futures::future::join_all(creates).await {
            r.expect("create");
        }
    }
    println!("  (seeded in {:.0} ms)", elapsed_ms(t));

    // The fastest of a few runs each way, so the local server's jitter does not count.
    const REPS: usize = 5;
    macro_rules! measure {
        ($label:expr, |$s:ident| $op:expr) => {{
            let before = (plain_table.calls(), plain_table.items());
            let mut base = f64::MAX;
            for _ in 0..REPS {
                let t = Instant::now();
                let $s = &plain;
                $op.await.expect("read");
                base = base.min(elapsed_ms(t));
            }
            let (calls, items) = (
                (plain_table.calls() - before.0) / REPS,
                (plain_table.items() - before.1) / REPS,
            );
            let mut delayed = f64::MAX;
            for _ in 0..REPS {
                let t = Instant::now();
                let $s = &slow;
                $op.await.expect("read");
                delayed = delayed.min(elapsed_ms(t));
            }
            let sequential = ((delayed - base) / DELAY_MS as f64).round().max(0.0);
            println!(
                "  {:<50} calls {calls:>2}  sequential {sequential:>2}  items read {items:>4}  {base:>6.1} ms",
                $label
            );
        }};
    }
    let sid = chat.session_id.as_str();
    measure!("messages ?limit=50 (newest page)", |s| s.messages(
        "acme",
        sid,
        MessagesFrom::Newest,
        50
    ));
    measure!("messages ?since=<last timestamp>", |s| s.messages(
        "acme",
        sid,
        MessagesFrom::Since(last_at),
        50
    ));
    measure!("messages ?after=<last - 10>", |s| s.messages(
        "acme",
        sid,
        MessagesFrom::After(last_seq - 10),
        50
    ));
    measure!("messages ?before=500&limit=50", |s| s.messages(
        "acme",
        sid,
        MessagesFrom::Before(500),
        50
    ));
    let active = SessionFilter {
        status: Some(SessionStatus::Active),
        include_archived: false,
    };
    measure!("sessions ?status=active&limit=50", |s| s
        .list_sessions("acme", "bob", active, 50, 0));
    measure!("sessions ?limit=50 (every status but archived)", |s| s
        .list_sessions("acme", "bob", SessionFilter::default(), 50, 0));
    measure!("sessions ?status=active&limit=50&offset=200", |s| s
        .list_sessions("acme", "bob", active, 50, 200));
    measure!("sessions/latest", |s| s.latest_session("acme", "bob"));
}

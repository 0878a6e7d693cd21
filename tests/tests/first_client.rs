//! The first HTTPS client a process builds gets the server's TLS set-up (rustls on ring, with
//! Mozilla's roots) whichever adapter builds it: reqwest is built without a default crypto
//! provider, and a client made without one panics. Its own process, so no other test has built
//! a client before.

use shared::adapters::pusher::PusherRealtime;
use shared::config::RealtimeConfig;
use shared::ports::realtime::Realtime;

/// Pusher is the first to send (a command's output before any model call): it says the server
/// is unreachable instead of bringing the process down.
#[tokio::test]
async fn a_realtime_event_sent_first_in_a_process_fails_softly() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let pusher = PusherRealtime::new(RealtimeConfig {
        app_id: "1".into(),
        key: "key".into(),
        secret: "secret".to_owned().into(),
        scheme: "https".into(),
        host: "127.0.0.1".into(),
        port,
    });
    let sent = pusher
        .trigger("private-session-x", "new_message", &serde_json::json!({}))
        .await;
    assert!(sent.is_err(), "nothing listens there: {sent:?}");
}

//! The `Workspace` port's conformance suite: every adapter (local directory, S3 prefix) must
//! pass each of these the same way.

use std::sync::Arc;

use shared::domain::ws_path::WsPath;
use shared::ports::workspace::{EntryKind, Precondition, Workspace, WsError};

fn p(s: &str) -> WsPath {
    WsPath::parse(s).expect("path")
}

pub async fn write_read_and_versions(ws: Arc<dyn Workspace>) {
    let v1 = ws
        .write(&p("a/b/c.txt"), b"one".to_vec(), Precondition::Any)
        .await
        .expect("write creates parents");
    let read = ws.read(&p("a/b/c.txt"), 1024).await.expect("read");
    assert_eq!(read.bytes, b"one");
    assert_eq!(read.version, v1);
    let v2 = ws
        .write(
            &p("a/b/c.txt"),
            b"two".to_vec(),
            Precondition::Version(v1.clone()),
        )
        .await
        .expect("write over the version read");
    assert_ne!(v1, v2, "a new content has a new version");
    assert_eq!(
        ws.write(
            &p("a/b/c.txt"),
            b"three".to_vec(),
            Precondition::Version(v1)
        )
        .await,
        Err(WsError::VersionMismatch("a/b/c.txt".into())),
        "a stale version is refused"
    );
    assert_eq!(ws.read(&p("a/b/c.txt"), 1024).await.unwrap().bytes, b"two");
    assert!(matches!(
        ws.write(&p("a/b/c.txt"), b"x".to_vec(), Precondition::Absent)
            .await,
        Err(WsError::AlreadyExists(_))
    ));
    assert!(matches!(
        ws.write(
            &p("new.txt"),
            b"x".to_vec(),
            Precondition::Version("nope".into())
        )
        .await,
        Err(WsError::VersionMismatch(_))
    ));
    ws.write(&p("new.txt"), b"x".to_vec(), Precondition::Absent)
        .await
        .expect("create only");
    assert!(matches!(
        ws.read(&p("a/b/c.txt"), 2).await,
        Err(WsError::TooLarge { size: 3, limit: 2 })
    ));
    assert!(matches!(
        ws.read(&p("missing"), 10).await,
        Err(WsError::NotFound(_))
    ));
    assert!(matches!(
        ws.read(&p("a/b"), 10).await,
        Err(WsError::NotAFile(_))
    ));
    assert!(matches!(
        ws.write(&p("a/b"), b"x".to_vec(), Precondition::Any).await,
        Err(WsError::NotAFile(_))
    ));
    assert!(matches!(
        ws.write(&p("new.txt/inner"), b"x".to_vec(), Precondition::Any)
            .await,
        Err(WsError::NotADirectory(_))
    ));
    assert!(
        matches!(
            ws.write(&p("new.txt/deeper/inner"), b"x".to_vec(), Precondition::Any)
                .await,
            Err(WsError::NotADirectory(_))
        ),
        "a file anywhere up the path is not a directory"
    );
    assert!(matches!(
        ws.delete(&p("new.txt/inner"), false).await,
        Err(WsError::NotFound(_))
    ));
    let long = "n".repeat(255);
    ws.write(&p(&long), b"x".to_vec(), Precondition::Any)
        .await
        .expect("a 255-byte name");
}

pub async fn listing_mkdir_and_delete(ws: Arc<dyn Workspace>) {
    for f in ["d/z.txt", "d/a.txt", "d/sub/x.txt", "top.md"] {
        ws.write(&p(f), f.as_bytes().to_vec(), Precondition::Any)
            .await
            .expect("seed");
    }
    assert!(ws.mkdir(&p("d/empty")).await.expect("mkdir"));
    assert!(!ws.mkdir(&p("d/empty")).await.expect("again"));
    assert!(matches!(
        ws.mkdir(&p("top.md")).await,
        Err(WsError::AlreadyExists(_))
    ));
    let l = ws.list(&p("d"), 100).await.expect("list");
    let names: Vec<(&str, EntryKind)> = l
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.kind))
        .collect();
    assert_eq!(
        names,
        vec![
            ("a.txt", EntryKind::File),
            ("empty", EntryKind::Dir),
            ("sub", EntryKind::Dir),
            ("z.txt", EntryKind::File)
        ]
    );
    assert_eq!(l.entries[0].path, "d/a.txt");
    assert_eq!(l.entries[0].size, Some(7));
    assert!(!l.truncated);
    let cut = ws.list(&p("d"), 2).await.expect("list");
    assert_eq!(cut.entries.len(), 2);
    assert!(cut.truncated);
    let root = ws.list(&WsPath::root(), 100).await.expect("root");
    assert!(root.entries.iter().any(|e| e.name == "top.md"));
    assert!(matches!(
        ws.list(&p("nope"), 10).await,
        Err(WsError::NotFound(_))
    ));
    assert!(matches!(
        ws.list(&p("top.md"), 10).await,
        Err(WsError::NotADirectory(_))
    ));

    let walk = ws.walk(&WsPath::root(), 100).await.expect("walk");
    let files: Vec<String> = walk.files.iter().map(|(f, _)| f.to_string()).collect();
    assert_eq!(files, vec!["d/a.txt", "d/sub/x.txt", "d/z.txt", "top.md"]);
    let short = ws.walk(&WsPath::root(), 2).await.expect("walk");
    assert_eq!(short.files.len(), 2);
    assert!(short.truncated);

    assert!(matches!(
        ws.delete(&p("d"), false).await,
        Err(WsError::NotEmpty(_))
    ));
    assert_eq!(ws.delete(&p("d/empty"), false).await.expect("empty dir"), 0);
    assert_eq!(ws.delete(&p("top.md"), false).await.expect("file"), 1);
    assert_eq!(ws.delete(&p("d"), true).await.expect("recursive"), 3);
    assert!(matches!(
        ws.delete(&p("d"), true).await,
        Err(WsError::NotFound(_))
    ));
    assert!(matches!(
        ws.read(&p("d/a.txt"), 10).await,
        Err(WsError::NotFound(_))
    ));
}

/// Parallel writers all conditional on one version: exactly one wins.
pub async fn concurrent_conditional_writes(ws: Arc<dyn Workspace>) {
    let v = ws
        .write(&p("race.txt"), b"base".to_vec(), Precondition::Any)
        .await
        .expect("seed");
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let ws = ws.clone();
            let v = v.clone();
            tokio::spawn(async move {
                ws.write(
                    &p("race.txt"),
                    format!("writer {i}").into_bytes(),
                    Precondition::Version(v),
                )
                .await
            })
        })
        .collect();
    let mut won = Vec::new();
    for (i, t) in tasks.into_iter().enumerate() {
        match t.await.expect("task") {
            Ok(_) => won.push(i),
            Err(WsError::VersionMismatch(_)) => {}
            Err(e) => panic!("writer {i}: {e}"),
        }
    }
    assert_eq!(won.len(), 1, "exactly one conditional writer wins: {won:?}");
    let content = ws.read(&p("race.txt"), 100).await.expect("read").bytes;
    assert_eq!(content, format!("writer {}", won[0]).into_bytes());
}

/// Names with characters a URL escapes (space, `+`, `&`, `%`, `=`, `?`, non-ASCII) are
/// written, listed, walked, read and deleted as themselves.
pub async fn names_a_url_escapes(ws: Arc<dyn Workspace>) {
    let names = ["a b.txt", "c+d&e.md", "100% = ?.csv", "ünï €.txt"];
    for (i, name) in names.iter().enumerate() {
        ws.write(
            &p(&format!("odd dir/{name}")),
            vec![b'0' + i as u8],
            Precondition::Absent,
        )
        .await
        .unwrap_or_else(|e| panic!("write {name}: {e}"));
    }
    let listing = ws.list(&p("odd dir"), 100).await.expect("list");
    let mut listed: Vec<&str> = listing.entries.iter().map(|e| e.name.as_str()).collect();
    listed.sort_unstable();
    let mut expected = names.to_vec();
    expected.sort_unstable();
    assert_eq!(listed, expected);
    let walk = ws.walk(&p("odd dir"), 100).await.expect("walk");
    assert_eq!(walk.files.len(), names.len());
    for (i, name) in names.iter().enumerate() {
        let read = ws
            .read(&p(&format!("odd dir/{name}")), 10)
            .await
            .expect("read");
        assert_eq!(read.bytes, vec![b'0' + i as u8], "{name}");
    }
    assert_eq!(
        ws.delete(&p("odd dir/c+d&e.md"), false)
            .await
            .expect("delete"),
        1
    );
    assert_eq!(ws.delete(&p("odd dir"), true).await.expect("delete all"), 3);
    assert!(matches!(
        ws.read(&p("odd dir/a b.txt"), 10).await,
        Err(WsError::NotFound(_))
    ));
}

//! The `Workspace` port's conformance suite on both adapters: a local directory and an S3
//! prefix on the S3-compatible server (a fresh bucket per test). Plus what only the local
//! adapter has to refuse: symbolic links.

use std::sync::Arc;

use api_tests::aws;
use shared::adapters::workspace::{DirWorkspace, S3Workspace};
use shared::domain::ws_path::WsPath;
use shared::ports::workspace::{Precondition, Workspace, WsError};

fn local() -> (Arc<dyn Workspace>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = DirWorkspace::open(&dir.path().join("root"));
    (Arc::new(ws), dir)
}

async fn s3() -> Arc<dyn Workspace> {
    let cfg = aws::fresh_resources().await;
    let (_, client) = aws::clients();
    Arc::new(S3Workspace::new(
        client,
        cfg.bucket,
        "workspaces/acme/ws1".into(),
    ))
}

macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod local_directory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (ws, _dir) = super::local();
                    api_tests::workspace_suite::$name(ws).await
                }
            )*
        }
        mod s3_prefix {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
                async fn $name() {
                    api_tests::workspace_suite::$name(super::s3().await).await
                }
            )*
        }
    };
}

suite!(
    write_read_and_versions,
    listing_mkdir_and_delete,
    concurrent_conditional_writes,
    names_a_url_escapes
);

#[tokio::test]
async fn local_workspaces_never_follow_symbolic_links() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    std::fs::create_dir_all(&root).unwrap();
    let ws = DirWorkspace::open(&root);
    std::os::unix::fs::symlink(&outside, root.join("link-dir")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link-file")).unwrap();
    let p = |s: &str| WsPath::parse(s).unwrap();

    for path in ["link-file", "link-dir/secret.txt"] {
        assert!(
            matches!(ws.read(&p(path), 100).await, Err(WsError::Symlink(_))),
            "{path}"
        );
        assert!(matches!(
            ws.write(&p(path), b"pwned".to_vec(), Precondition::Any)
                .await,
            Err(WsError::Symlink(_))
        ));
    }
    assert!(matches!(
        ws.list(&p("link-dir"), 10).await,
        Err(WsError::Symlink(_))
    ));
    assert!(matches!(
        ws.mkdir(&p("link-dir/x")).await,
        Err(WsError::Symlink(_))
    ));
    assert!(matches!(
        ws.walk(&p("link-dir"), 10).await,
        Err(WsError::Symlink(_))
    ));
    // The walk of the root skips links; deleting one removes the link, never its target.
    let walk = ws.walk(&WsPath::root(), 10).await.unwrap();
    assert!(walk.files.is_empty(), "{:?}", walk.files);
    let listing = ws.list(&WsPath::root(), 10).await.unwrap();
    assert!(listing
        .entries
        .iter()
        .all(|e| e.kind == shared::ports::workspace::EntryKind::Symlink));
    assert_eq!(ws.delete(&p("link-dir"), true).await.unwrap(), 1);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(outside.join("secret.txt").exists());

    // A FIFO is neither read (which would block) nor written through.
    let fifo = root.join("pipe");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let read = tokio::time::timeout(std::time::Duration::from_secs(5), ws.read(&p("pipe"), 100))
        .await
        .expect("a FIFO must not block");
    assert!(matches!(read, Err(WsError::NotAFile(_))), "{read:?}");
}

/// Thirty readers at once of a file over the read limit, through one S3 client: each is
/// refused on the object's announced length, and the file is still there, whole, for a
/// reader whose limit it fits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn thirty_parallel_reads_of_a_large_s3_file_are_each_refused() {
    let ws = s3().await;
    let big = WsPath::parse("big.bin").expect("path");
    ws.write(&big, vec![7u8; 2 << 20], Precondition::Absent)
        .await
        .expect("write");
    let reads = (0..30).map(|_| {
        let (ws, big) = (ws.clone(), big.clone());
        async move { ws.read(&big, 1024).await }
    });
    for read in futures::future::join_all(reads).await {
        assert!(
            matches!(read, Err(WsError::TooLarge { size, limit: 1024 }) if size == 2 << 20),
            "{read:?}"
        );
    }
    let whole = ws.read(&big, 4 << 20).await.expect("read");
    assert_eq!(whole.bytes.len(), 2 << 20);
}

/// The status route's storage check reads one fixed key outside every tenant's prefix (a HEAD
/// needs s3:GetObject on that key alone), writing it empty the first time; a bucket that is
/// not there is reported by its code.
#[tokio::test]
#[ignore = "needs moto (DynamoDB/S3): scripts/test starts it"]
async fn the_s3_storage_check_heads_one_fixed_key_and_lists_nothing() {
    let cfg = aws::fresh_resources().await;
    let (_, client) = aws::clients();
    let ws = S3Workspace::new(
        client.clone(),
        cfg.bucket.clone(),
        "workspaces/acme/ws1".into(),
    );
    assert_eq!(ws.check().await, Ok(()));
    client
        .head_object(&cfg.bucket, shared::adapters::workspace::S3_CHECK_KEY)
        .await
        .expect("the check's key is there");
    // Read again, not written: a second write would be refused (412, only where no object is).
    assert_eq!(ws.check().await, Ok(()));
    let page = client
        .list_objects_v2(&cfg.bucket, &shared::adapters::s3::List::default())
        .await
        .expect("list");
    let keys: Vec<&str> = page.contents.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(keys, ["health/workspace-check"]);

    let gone = S3Workspace::new(client, format!("{}-missing", cfg.bucket), "w".into());
    let err = gone.check().await.expect_err("no bucket");
    assert!(err.contains("NoSuchBucket"), "{err}");
}

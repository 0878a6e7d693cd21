//! A table backend decorator for benchmarks: counts calls and adds a fixed latency to each,
//! so the extra time of a request divided by that latency is its number of sequential round
//! trips (calls that overlap cost one delay together).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use shared::adapters::table::{Cond, Item, Page, Query, TableBackend, Update, Write};
use shared::ports::StoreResult;

/// Wraps a backend; every call sleeps `delay` first.
pub struct DelayedTable {
    inner: Arc<dyn TableBackend>,
    delay: Duration,
    calls: AtomicUsize,
    items: AtomicUsize,
}

impl DelayedTable {
    pub fn new(inner: Arc<dyn TableBackend>, delay: Duration) -> Self {
        Self {
            inner,
            delay,
            calls: AtomicUsize::new(0),
            items: AtomicUsize::new(0),
        }
    }

    /// Calls so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Items queries and scans have returned so far.
    pub fn items(&self) -> usize {
        self.items.load(Ordering::SeqCst)
    }

    async fn hop(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
    }
}

#[async_trait]
impl TableBackend for DelayedTable {
    async fn get(&self, pk: &str, sk: &str) -> StoreResult<Option<Item>> {
        self.hop().await;
        self.inner.get(pk, sk).await
    }
    async fn put(&self, item: Item, cond: Cond) -> StoreResult<()> {
        self.hop().await;
        self.inner.put(item, cond).await
    }
    async fn update(&self, pk: &str, sk: &str, update: Update, cond: Cond) -> StoreResult<Item> {
        self.hop().await;
        self.inner.update(pk, sk, update, cond).await
    }
    async fn delete(&self, pk: &str, sk: &str, cond: Cond) -> StoreResult<bool> {
        self.hop().await;
        self.inner.delete(pk, sk, cond).await
    }
    async fn query(&self, query: Query) -> StoreResult<Page> {
        self.hop().await;
        let page = self.inner.query(query).await?;
        self.items.fetch_add(page.items.len(), Ordering::SeqCst);
        Ok(page)
    }
    async fn scan(&self, pk_prefix: &str, sk: &str) -> StoreResult<Vec<Item>> {
        self.hop().await;
        let items = self.inner.scan(pk_prefix, sk).await?;
        self.items.fetch_add(items.len(), Ordering::SeqCst);
        Ok(items)
    }
    async fn transact(&self, writes: Vec<Write>) -> StoreResult<()> {
        self.hop().await;
        self.inner.transact(writes).await
    }
    async fn batch_delete(&self, keys: Vec<(String, String)>) -> StoreResult<()> {
        self.hop().await;
        self.inner.batch_delete(keys).await
    }
}

//! Tasks and their steps.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;
use crate::domain::{Step, Task, TaskRef};

/// Most steps written together (a request's server tools and its decision).
pub const MAX_STEPS_PER_WRITE: usize = 8;

/// Tasks and their steps.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Creates a task; `Conflict` if the id is taken.
    async fn create_task(&self, task: &Task) -> StoreResult<()>;
    /// The task, if it exists in this tenant and has not expired.
    async fn task(&self, tenant_id: &str, task_id: &str) -> StoreResult<Option<Task>>;
    /// The tenant's newest live tasks (only `user_id`'s when given), newest first: up to
    /// `limit`, reading at most `max_read` entries of the tenant's task list. `true` with them
    /// when that bound ended the read (older matching tasks may exist).
    async fn recent_tasks(
        &self,
        tenant_id: &str,
        user_id: Option<&str>,
        limit: usize,
        max_read: usize,
    ) -> StoreResult<(Vec<Task>, bool)>;
    /// Saves `task` if the stored version is still `task.stored.version`; returns it with the
    /// version bumped. `Conflict` if someone saved in between; `NotFound` if it is gone.
    async fn save_task(&self, task: &Task) -> StoreResult<Task>;
    /// Takes the task's lease for `owner` until `until` if the task is `user_id`'s and nobody
    /// holds an unexpired lease at `now`. `Conflict` when busy, `NotFound` when there is no
    /// such task or it is another user's (which is never leased).
    async fn acquire_lease(
        &self,
        tenant_id: &str,
        task_id: &str,
        user_id: &str,
        owner: &str,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Task>;
    /// Gives the lease back if `owner` still holds it (otherwise does nothing).
    async fn release_lease(&self, tenant_id: &str, task_id: &str, owner: &str) -> StoreResult<()>;
    /// Appends step `step.index`, which must be the task's next step. Exactly one of several
    /// concurrent writers of the same index succeeds; the others get `Conflict`.
    async fn append_step(&self, step: &Step) -> StoreResult<()>;
    /// Creates a new task together with its first steps (indexes from 0, at most
    /// [`MAX_STEPS_PER_WRITE`]), in one transaction.
    async fn start_task(&self, task: &Task, steps: &[Step]) -> StoreResult<()>;
    /// Appends `steps` (consecutive, from the task's next index; at least one, at most
    /// [`MAX_STEPS_PER_WRITE`]) and, in the same transaction, stores `task` as the task's new
    /// state (its step count, version and lease are set here: the count after the last step,
    /// the version bumped, the lease released). `Conflict` if an index is taken or the lease
    /// is no longer held by `lease_owner`; `Internal` for steps that are not consecutive.
    async fn record_steps(&self, steps: &[Step], task: &Task, lease_owner: &str)
        -> StoreResult<()>;
    /// The task's steps in order.
    async fn steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<Step>>;
    /// Tasks whose retention ended at or before `now` (oldest first, at most `limit`).
    async fn expired_tasks(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<TaskRef>>;
    /// Active tasks not updated since `idle_before` (oldest first, at most `limit`).
    async fn idle_tasks(
        &self,
        idle_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<TaskRef>>;
    /// Marks a task `interrupted` if it is still active and idle since `idle_before`;
    /// `false` when it no longer qualifies.
    async fn mark_interrupted(
        &self,
        task: &TaskRef,
        idle_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;
    /// Deletes the task, its steps and its messages; returns how many items went. Deleting
    /// what is already gone is not an error.
    async fn delete_task(&self, task: &TaskRef) -> StoreResult<usize>;
}

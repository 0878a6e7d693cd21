//! Tasks and their steps: creation with the first step, leases, step records with the
//! task's new state, retention and idle sweeps.

use futures::{StreamExt, TryStreamExt};

use super::*;

// ---------------------------------------------------------------- tasks and steps

/// The stored form of a task: its fields plus index keys that place it in the sweeps.
/// A task's entry in its tenant's list (`keys::task_list_pk`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskListEntry {
    task_id: String,
    user_id: String,
}

fn task_list_item(task: &Task) -> StoreResult<Item> {
    let mut item = item_of(
        &keys::task_list_pk(&task.tenant_id),
        &keys::task_list_sk(task.stored.created_at.timestamp_millis(), &task.id),
        &TaskListEntry {
            task_id: task.id.clone(),
            user_id: task.user_id.clone(),
        },
    )?;
    item.insert(EXPIRES_AT.into(), Value::from(task.stored.expires_at));
    Ok(item)
}

/// A new task's writes: the task (if its id is free) and its entry in the tenant's list.
fn new_task_writes(task: &Task, now: i64) -> StoreResult<Vec<Write>> {
    Ok(vec![
        Write::Put {
            item: task_item(task)?,
            cond: Cond::Absent { now },
        },
        Write::Put {
            item: task_list_item(task)?,
            cond: Cond::Always,
        },
    ])
}

fn task_item(task: &Task) -> StoreResult<Item> {
    let mut item = item_of(
        &keys::tenant_pk(&task.tenant_id),
        &keys::task_sk(&task.id),
        task,
    )?;
    item.insert(EXPIRES_AT.into(), Value::from(task.stored.expires_at));
    let updated_ms = task.stored.updated_at.timestamp_millis();
    item.insert("updatedAtMs".into(), Value::from(updated_ms));
    item.insert(Index::Gsi1.pk().into(), Value::from(keys::SWEEP_EXPIRES));
    item.insert(
        Index::Gsi1.sk().into(),
        Value::from(keys::expires_sweep_sk(
            task.stored.expires_at,
            &task.tenant_id,
            &task.id,
        )),
    );
    if task.status.is_active() {
        item.insert(Index::Gsi2.pk().into(), Value::from(keys::SWEEP_ACTIVE));
        item.insert(
            Index::Gsi2.sk().into(),
            Value::from(keys::active_sweep_sk(updated_ms, &task.tenant_id, &task.id)),
        );
    }
    Ok(item)
}

fn step_item(step: &Step) -> StoreResult<Item> {
    let mut item = item_of(
        &keys::task_children_pk(&step.tenant_id, &step.task_id),
        &keys::step_sk(step.index),
        step,
    )?;
    item.insert(EXPIRES_AT.into(), Value::from(step.expires_at));
    Ok(item)
}

fn task_ref(item: &Item) -> StoreResult<TaskRef> {
    body_of(item.clone()).map(|t: Task| TaskRef {
        tenant_id: t.tenant_id,
        task_id: t.id,
        session_id: t.session_id,
    })
}

const ACTIVE_STATUSES: [TaskStatus; 6] = [
    TaskStatus::Planning,
    TaskStatus::Executing,
    TaskStatus::Verifying,
    TaskStatus::Correcting,
    TaskStatus::NeedsUserInput,
    TaskStatus::AwaitingUser,
];

/// Checks that `steps` are 1 to [`MAX_STEPS_PER_WRITE`] consecutive indexes from `first`;
/// the step count after them.
fn consecutive(steps: &[Step], first: u32) -> StoreResult<u32> {
    if steps.is_empty() || steps.len() > MAX_STEPS_PER_WRITE {
        return Err(StoreError::Internal(format!(
            "{} steps in one write (1..={MAX_STEPS_PER_WRITE})",
            steps.len()
        )));
    }
    let mut next = first;
    for s in steps {
        if s.index != next {
            return Err(StoreError::Internal(format!(
                "step {} where step {next} was expected",
                s.index
            )));
        }
        next += 1;
    }
    Ok(next)
}

#[async_trait]
impl TaskStore for TableStore {
    async fn create_task(&self, task: &Task) -> StoreResult<()> {
        self.table
            .transact(new_task_writes(task, self.now())?)
            .await
    }

    async fn task(&self, tenant_id: &str, task_id: &str) -> StoreResult<Option<Task>> {
        self.get_live(&keys::tenant_pk(tenant_id), &keys::task_sk(task_id))
            .await
    }

    async fn recent_tasks(
        &self,
        tenant_id: &str,
        user_id: Option<&str>,
        limit: usize,
        max_read: usize,
    ) -> StoreResult<(Vec<Task>, bool)> {
        let now = self.now();
        let mut q = Query::partition(keys::task_list_pk(tenant_id)).backward();
        q.limit = Some(max_read.clamp(1, 500));
        let (mut ids, mut read, mut cut) = (Vec::new(), 0usize, false);
        'pages: loop {
            let page = self.table.query(q.clone()).await?;
            for item in page.items {
                if ids.len() >= limit {
                    break 'pages;
                }
                if read >= max_read {
                    cut = true;
                    break 'pages;
                }
                read += 1;
                if is_expired(&item, now) {
                    continue;
                }
                let entry: TaskListEntry = body_of(item)?;
                if user_id.is_none_or(|u| u == entry.user_id) {
                    ids.push(entry.task_id);
                }
            }
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => break,
            }
        }
        // The bodies, a few reads at a time, in the list's order.
        let tasks: Vec<Option<Task>> = futures::stream::iter(ids)
            .map(|id| async move { self.task(tenant_id, &id).await })
            .buffered(8)
            .try_collect()
            .await?;
        Ok((tasks.into_iter().flatten().collect(), cut))
    }

    async fn save_task(&self, task: &Task) -> StoreResult<Task> {
        let mut next = task.clone();
        next.stored.version += 1;
        let cond = Cond::All(vec![
            Cond::Live { now: self.now() },
            Cond::Eq("version".into(), Value::from(task.stored.version)),
        ]);
        match self.table.put(task_item(&next)?, cond).await {
            Ok(()) => Ok(next),
            Err(StoreError::Conflict(_))
                if self.task(&task.tenant_id, &task.id).await?.is_none() =>
            {
                Err(StoreError::NotFound(format!("task {}", task.id)))
            }
            Err(e) => Err(e),
        }
    }

    async fn acquire_lease(
        &self,
        tenant_id: &str,
        task_id: &str,
        user_id: &str,
        owner: &str,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Task> {
        // The version moves with the lease: a writer that read the task before it was leased
        // (a resume) cannot save over the lease.
        let update = Update {
            set: set(vec![
                ("leaseOwner", Value::from(owner)),
                ("leaseUntil", Value::from(until.timestamp())),
            ]),
            add: vec![("version".into(), 1)],
            ..Update::default()
        };
        let cond = Cond::All(vec![
            Cond::Live {
                now: now.timestamp(),
            },
            Cond::Eq("userId".into(), Value::from(user_id)),
            Cond::MissingOrAtMost("leaseUntil".into(), now.timestamp()),
        ]);
        let (pk, sk) = (keys::tenant_pk(tenant_id), keys::task_sk(task_id));
        match self.table.update(&pk, &sk, update, cond).await {
            Ok(item) => body_of(item),
            Err(StoreError::Conflict(_)) => match self.task(tenant_id, task_id).await? {
                // Another user's task is as absent as a missing one, and never leased for them.
                Some(t) if t.user_id == user_id => {
                    Err(StoreError::Conflict(format!("task {task_id} is busy")))
                }
                _ => Err(StoreError::NotFound(format!("task {task_id}"))),
            },
            Err(e) => Err(e),
        }
    }

    async fn release_lease(&self, tenant_id: &str, task_id: &str, owner: &str) -> StoreResult<()> {
        let update = Update {
            remove: vec!["leaseOwner".into(), "leaseUntil".into()],
            ..Update::default()
        };
        let cond = Cond::All(vec![
            Cond::Live { now: self.now() },
            Cond::Eq("leaseOwner".into(), Value::from(owner)),
        ]);
        match self
            .table
            .update(
                &keys::tenant_pk(tenant_id),
                &keys::task_sk(task_id),
                update,
                cond,
            )
            .await
        {
            Ok(_) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn append_step(&self, step: &Step) -> StoreResult<()> {
        let now = self.now();
        let item = step_item(step)?;
        let bump = Update {
            set: set(vec![("stepCount", Value::from(step.index + 1))]),
            ..Update::default()
        };
        self.table
            .transact(vec![
                Write::Put {
                    item,
                    cond: Cond::Absent { now },
                },
                Write::Update {
                    pk: keys::tenant_pk(&step.tenant_id),
                    sk: keys::task_sk(&step.task_id),
                    update: bump,
                    cond: Cond::All(vec![
                        Cond::Live { now },
                        Cond::Eq("stepCount".into(), Value::from(step.index)),
                    ]),
                },
            ])
            .await
    }

    async fn start_task(&self, task: &Task, steps: &[Step]) -> StoreResult<()> {
        let now = self.now();
        consecutive(steps, 0)?;
        let mut writes = new_task_writes(task, now)?;
        for s in steps {
            writes.push(Write::Put {
                item: step_item(s)?,
                cond: Cond::Absent { now },
            });
        }
        self.table.transact(writes).await
    }

    async fn record_steps(
        &self,
        steps: &[Step],
        task: &Task,
        lease_owner: &str,
    ) -> StoreResult<()> {
        let ts = self.now();
        let first = steps.first().map_or(0, |s| s.index);
        let count = consecutive(steps, first)?;
        let next = Task {
            stored: crate::domain::task::Stored {
                step_count: count,
                version: task.stored.version + 1,
                lease_owner: None,
                lease_until: None,
                ..task.stored.clone()
            },
            ..task.clone()
        };
        let mut writes = Vec::with_capacity(steps.len() + 1);
        for s in steps {
            writes.push(Write::Put {
                item: step_item(s)?,
                cond: Cond::Absent { now: ts },
            });
        }
        writes.push(Write::Put {
            item: task_item(&next)?,
            cond: Cond::All(vec![
                Cond::Live { now: ts },
                Cond::Eq("stepCount".into(), Value::from(first)),
                Cond::Eq("leaseOwner".into(), Value::from(lease_owner)),
            ]),
        });
        self.table.transact(writes).await
    }

    async fn steps(&self, tenant_id: &str, task_id: &str) -> StoreResult<Vec<Step>> {
        let q = Query::partition(keys::task_children_pk(tenant_id, task_id))
            .sk(SkCond::Prefix(keys::STEP_PREFIX.into()));
        self.query_all(q).await?.into_iter().map(body_of).collect()
    }

    async fn expired_tasks(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<Vec<TaskRef>> {
        let q = Query::partition(keys::SWEEP_EXPIRES)
            .on(Index::Gsi1)
            .sk(SkCond::Below(format!("{:012}", now.timestamp() + 1)))
            .limit(limit);
        // Expired by definition: no TTL filtering here.
        let page = self.table.query(q).await?;
        page.items.iter().map(task_ref).collect()
    }

    async fn idle_tasks(
        &self,
        idle_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<TaskRef>> {
        let now = self.now();
        let q = Query::partition(keys::SWEEP_ACTIVE)
            .on(Index::Gsi2)
            .sk(SkCond::Below(format!(
                "{:015}",
                idle_before.timestamp_millis()
            )))
            .limit(limit);
        let page = self.table.query(q).await?;
        page.items
            .iter()
            .filter(|i| !is_expired(i, now))
            .map(task_ref)
            .collect()
    }

    async fn mark_interrupted(
        &self,
        task: &TaskRef,
        idle_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let (pk, sk) = (
            keys::tenant_pk(&task.tenant_id),
            keys::task_sk(&task.task_id),
        );
        let update = Update {
            set: set(vec![
                ("status", to_json(&TaskStatus::Interrupted)?),
                ("updatedAt", to_json(&now)?),
                ("updatedAtMs", Value::from(now.timestamp_millis())),
            ]),
            remove: vec![Index::Gsi2.pk().into(), Index::Gsi2.sk().into()],
            add: vec![("version".into(), 1)],
        };
        let still_active = ACTIVE_STATUSES
            .iter()
            .map(|s| serde_json::to_value(s).map(|v| Cond::Eq("status".into(), v)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        let cond = Cond::All(vec![
            Cond::Live {
                now: now.timestamp(),
            },
            Cond::Any(still_active),
            Cond::MissingOrAtMost("updatedAtMs".into(), idle_before.timestamp_millis() - 1),
            Cond::MissingOrAtMost("leaseUntil".into(), now.timestamp()),
        ]);
        match self.table.update(&pk, &sk, update, cond).await {
            Ok(_) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn delete_task(&self, task: &TaskRef) -> StoreResult<usize> {
        // Raw queries: expired children are exactly what must go.
        let mut keys_to_delete = Vec::new();
        let mut q = Query::partition(keys::task_children_pk(&task.tenant_id, &task.task_id));
        loop {
            let page = self.table.query(q.clone()).await?;
            keys_to_delete.extend(page.items.iter().filter_map(key_of));
            match page.last {
                Some(last) => q.start_after = Some(last),
                None => break,
            }
        }
        let mut removed_messages = 0i64;
        if let Some(session_id) = &task.session_id {
            let mut q = Query::partition(keys::session_children_pk(&task.tenant_id, session_id))
                .sk(SkCond::Prefix(keys::MESSAGE_PREFIX.into()));
            loop {
                let page = self.table.query(q.clone()).await?;
                for item in &page.items {
                    if item.get("taskId").and_then(Value::as_str) == Some(task.task_id.as_str()) {
                        keys_to_delete.extend(key_of(item));
                        removed_messages += 1;
                    }
                }
                match page.last {
                    Some(last) => q.start_after = Some(last),
                    None => break,
                }
            }
        }
        let task_key = (
            keys::tenant_pk(&task.tenant_id),
            keys::task_sk(&task.task_id),
        );
        let stored = self.table.get(&task_key.0, &task_key.1).await?;
        let task_existed = stored.is_some();
        let count = keys_to_delete.len() + usize::from(task_existed);
        // Its entry in the tenant's task list (not counted: an index, not the task's data).
        if let Some(Ok(t)) = stored.map(body_of::<Task>) {
            keys_to_delete.push((
                keys::task_list_pk(&t.tenant_id),
                keys::task_list_sk(t.stored.created_at.timestamp_millis(), &t.id),
            ));
        }
        // The task item goes last, so a crash part-way leaves it for the next sweep to retry.
        self.table.batch_delete(keys_to_delete).await?;
        if let (Some(session_id), true) = (&task.session_id, removed_messages > 0) {
            let update = Update {
                add: vec![("messageCount".into(), -removed_messages)],
                ..Update::default()
            };
            let pk = keys::tenant_pk(&task.tenant_id);
            match self
                .table
                .update(
                    &pk,
                    &keys::session_sk(session_id),
                    update,
                    Cond::Live { now: self.now() },
                )
                .await
            {
                Ok(_) | Err(StoreError::Conflict(_)) => {}
                Err(e) => return Err(e),
            }
        }
        self.table
            .delete(&task_key.0, &task_key.1, Cond::Always)
            .await?;
        Ok(count)
    }
}

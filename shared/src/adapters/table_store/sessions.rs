//! Sessions and their messages: creation with the id's claim, appends with consecutive
//! sequence numbers.

use super::*;

// ---------------------------------------------------------------- sessions and messages

fn session_item(s: &Session) -> StoreResult<Item> {
    let mut item = item_of(
        &keys::tenant_pk(&s.tenant_id),
        &keys::session_sk(&s.session_id),
        s,
    )?;
    let updated = crate::time::iso(s.updated_at);
    item.insert(
        Index::Gsi1.pk().into(),
        Value::from(session_counts::status_pk(
            &s.tenant_id,
            &s.user_id,
            s.status,
        )),
    );
    item.insert(Index::Gsi1.sk().into(), Value::from(updated.clone()));
    item.insert(
        Index::Gsi2.pk().into(),
        Value::from(keys::user_domain_sessions_pk(
            &s.tenant_id,
            &s.user_id,
            &s.domain,
        )),
    );
    item.insert(Index::Gsi2.sk().into(), Value::from(updated));
    Ok(item)
}

/// The write that claims a session id for its tenant and user: it succeeds when the id is
/// unclaimed or already theirs.
fn claim_session_id(s: &Session) -> StoreResult<Write> {
    let owner = SessionOwner {
        tenant_id: s.tenant_id.clone(),
        user_id: s.user_id.clone(),
    };
    Ok(Write::Put {
        item: item_of(
            &keys::session_owner_pk(&s.session_id),
            keys::SESSION_OWNER_SK,
            &owner,
        )?,
        cond: Cond::Any(vec![
            Cond::Missing,
            Cond::All(vec![
                Cond::Eq("tenantId".into(), Value::from(owner.tenant_id.clone())),
                Cond::Eq("userId".into(), Value::from(owner.user_id.clone())),
            ]),
        ]),
    })
}

impl TableStore {
    /// Whether `session_id` is claimed by someone other than `tenant_id`/`user_id`.
    async fn claimed_elsewhere(
        &self,
        session_id: &str,
        tenant_id: &str,
        user_id: &str,
    ) -> StoreResult<bool> {
        Ok(self
            .session_owner(session_id)
            .await?
            .is_some_and(|o| o.tenant_id != tenant_id || o.user_id != user_id))
    }
}

#[async_trait]
impl SessionStore for TableStore {
    async fn create_session(&self, session: &Session) -> StoreResult<SessionCreated> {
        let mut session = session.clone();
        session.id_claimed = true;
        let session = &session;
        let (tenant, user) = (&session.tenant_id, &session.user_id);
        for attempt in 0..RACE_RETRIES {
            let now = self.now();
            let writes = vec![
                Write::Put {
                    item: session_item(session)?,
                    cond: Cond::Absent { now },
                },
                claim_session_id(session)?,
                session_counts::count_write(tenant, user, None, session.status, now),
            ];
            match self.table.transact(writes).await {
                Ok(()) => return Ok(SessionCreated::Created),
                Err(StoreError::Conflict(_)) => {
                    if self.built_missing_counts(tenant, user).await? {
                        continue;
                    }
                    if self
                        .claimed_elsewhere(&session.session_id, tenant, user)
                        .await?
                    {
                        return Ok(SessionCreated::Taken);
                    }
                    if self.session(tenant, &session.session_id).await?.is_some() {
                        return Ok(SessionCreated::Exists);
                    }
                    // Neither: the transaction collided with a parallel one on the user's
                    // counts (DynamoDB cancels one of two), so it is tried again.
                    race_pause(attempt).await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Unavailable(format!(
            "session {} kept colliding with parallel writes",
            session.session_id
        )))
    }

    async fn session(&self, tenant_id: &str, session_id: &str) -> StoreResult<Option<Session>> {
        self.get_live(&keys::tenant_pk(tenant_id), &keys::session_sk(session_id))
            .await
    }

    async fn session_owner(&self, session_id: &str) -> StoreResult<Option<SessionOwner>> {
        self.get_live(&keys::session_owner_pk(session_id), keys::SESSION_OWNER_SK)
            .await
    }

    async fn claim_session(&self, session: &Session) -> StoreResult<bool> {
        let Write::Put { item, cond } = claim_session_id(session)? else {
            return Err(StoreError::Internal("a claim is a put".into()));
        };
        match self.table.put(item, cond).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn append_messages_after(
        &self,
        tenant_id: &str,
        session_id: &str,
        messages: &[Message],
        create_if_missing: Option<&Session>,
        known: KnownSession<'_>,
    ) -> StoreResult<Vec<Message>> {
        let mut known = known;
        if messages.len() + 3 > super::super::table::MAX_TRANSACTION_WRITES {
            // The messages, the session, the id's claim and the user's session counts.
            return Err(StoreError::Internal(
                "too many messages for one append".into(),
            ));
        }
        let pk = keys::tenant_pk(tenant_id);
        let sk = keys::session_sk(session_id);
        for attempt in 0..RACE_RETRIES {
            let now = self.now();
            let existing = match std::mem::replace(&mut known, KnownSession::Unknown) {
                KnownSession::Present(s)
                    if s.tenant_id == tenant_id && s.session_id == session_id =>
                {
                    Some(s.clone())
                }
                KnownSession::Missing => None,
                _ => self.session(tenant_id, session_id).await?,
            };
            let (base, session_write) = match (&existing, create_if_missing) {
                (Some(s), _) => (s.clone(), None),
                (None, Some(new)) => (new.clone(), Some(new)),
                (None, None) => return Err(StoreError::NotFound(format!("session {session_id}"))),
            };
            let mut stored = Vec::with_capacity(messages.len());
            let mut writes = Vec::with_capacity(messages.len() + 1);
            let mut latest = base.last_message_at.unwrap_or(base.updated_at);
            for (k, m) in messages.iter().enumerate() {
                let mut m = m.clone();
                m.tenant_id = tenant_id.to_owned();
                m.session_id = session_id.to_owned();
                m.sequence_number = base.last_sequence + 1 + k as u64;
                // Never earlier than what the session already holds, so timestamps follow the
                // sequence (polling by time relies on it) even across skewed clocks.
                m.timestamp = m.timestamp.max(latest);
                let mut item = item_of(
                    &keys::session_children_pk(tenant_id, session_id),
                    &keys::message_sk(m.sequence_number),
                    &m,
                )?;
                if let Some(exp) = m.expires_at {
                    item.insert(EXPIRES_AT.into(), Value::from(exp));
                }
                latest = latest.max(m.timestamp);
                writes.push(Write::Put {
                    item,
                    cond: Cond::Absent { now },
                });
                stored.push(m);
            }
            let last_sequence = base.last_sequence + messages.len() as u64;
            match session_write {
                Some(new) => {
                    let mut s = new.clone();
                    s.id_claimed = true;
                    s.last_sequence = last_sequence;
                    s.message_count += messages.len() as u64;
                    s.updated_at = s.updated_at.max(latest);
                    s.last_message_at = Some(latest);
                    writes.push(Write::Put {
                        item: session_item(&s)?,
                        cond: Cond::Absent { now },
                    });
                    writes.push(claim_session_id(&s)?);
                    writes.push(session_counts::count_write(
                        tenant_id, &s.user_id, None, s.status, now,
                    ));
                }
                None => {
                    // A session stored before ids were claimed claims its id with its next
                    // messages (one whose id is claimed elsewhere takes no more messages, so
                    // none of its events are sent).
                    if !base.id_claimed {
                        writes.push(claim_session_id(&base)?);
                    }
                    let updated = crate::time::iso(base.updated_at.max(latest));
                    writes.push(Write::Update {
                        pk: pk.clone(),
                        sk: sk.clone(),
                        update: Update {
                            set: set(vec![
                                ("lastSequence", Value::from(last_sequence)),
                                ("lastMessageAt", to_json(&latest)?),
                                ("updatedAt", Value::from(updated.clone())),
                                (Index::Gsi1.sk(), Value::from(updated.clone())),
                                (Index::Gsi2.sk(), Value::from(updated)),
                                ("idClaimed", Value::from(true)),
                            ]),
                            add: vec![("messageCount".into(), messages.len() as i64)],
                            ..Update::default()
                        },
                        cond: Cond::All(vec![
                            Cond::Live { now },
                            Cond::Eq("lastSequence".into(), Value::from(base.last_sequence)),
                        ]),
                    });
                }
            }
            let claimed_here = session_write.is_some() || !base.id_claimed;
            match self.table.transact(writes).await {
                Ok(()) => return Ok(stored),
                Err(StoreError::Conflict(_)) => {
                    if session_write.is_some()
                        && self.built_missing_counts(tenant_id, &base.user_id).await?
                    {
                        continue;
                    }
                    if claimed_here
                        && self
                            .claimed_elsewhere(session_id, tenant_id, &base.user_id)
                            .await?
                    {
                        return Err(StoreError::Conflict(format!(
                            "session id {session_id} belongs to another account"
                        )));
                    }
                    race_pause(attempt).await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Unavailable(format!(
            "session {session_id} kept changing while appending"
        )))
    }

    async fn messages(
        &self,
        tenant_id: &str,
        session_id: &str,
        from: MessagesFrom,
        limit: usize,
    ) -> StoreResult<MessagePage> {
        let all = Query::partition(keys::session_children_pk(tenant_id, session_id))
            .sk(SkCond::Prefix(keys::MESSAGE_PREFIX.into()));
        let (q, since) = match from {
            MessagesFrom::Newest => (all.backward(), None),
            MessagesFrom::Since(t) => (all.backward(), Some(t)),
            MessagesFrom::After(seq) => (
                all.sk(SkCond::Between(
                    keys::message_sk(seq.saturating_add(1)),
                    keys::message_sk(keys::MAX_MESSAGE_SEQUENCE),
                )),
                None,
            ),
            MessagesFrom::Before(0) => return Ok(MessagePage::default()),
            MessagesFrom::Before(seq) => (
                all.sk(SkCond::Between(
                    keys::message_sk(0),
                    keys::message_sk(seq - 1),
                ))
                .backward(),
                None,
            ),
        };
        let forward = q.forward;
        let mut messages: Vec<Message> = self
            .query_bodies(q, limit.saturating_add(1), |m: &Message| {
                since.is_none_or(|t| m.timestamp >= t)
            })
            .await?;
        let has_more = messages.len() > limit;
        messages.truncate(limit);
        if !forward {
            messages.reverse();
        }
        Ok(MessagePage { messages, has_more })
    }
}

//! Users, tenants with their allowed domains, and revoked tokens.

use super::*;

// ---------------------------------------------------------------- users, tenants, tokens

#[async_trait]
impl UserStore for TableStore {
    async fn create_user(&self, user: &User) -> StoreResult<()> {
        let item = item_of(&keys::user_pk(user.email.as_str()), keys::USER_SK, user)?;
        self.table.put(item, Cond::Absent { now: self.now() }).await
    }

    async fn user_by_email(&self, email: &Email) -> StoreResult<Option<User>> {
        self.get_live(&keys::user_pk(email.as_str()), keys::USER_SK)
            .await
    }

    async fn set_user_disabled(&self, email: &Email, disabled: bool) -> StoreResult<User> {
        let mut fields = vec![("disabled", Value::Bool(disabled))];
        if disabled {
            // Every token issued until now ends for good (enabling again keeps the cut-off).
            fields.push((
                "tokens_valid_after",
                Value::from(crate::time::iso(self.clock.now())),
            ));
        }
        let update = Update {
            set: set(fields),
            ..Update::default()
        };
        match self
            .table
            .update(
                &keys::user_pk(email.as_str()),
                keys::USER_SK,
                update,
                Cond::Live { now: self.now() },
            )
            .await
        {
            Ok(item) => body_of(item),
            Err(StoreError::Conflict(_)) => Err(StoreError::NotFound(format!("user {email}"))),
            Err(e) => Err(e),
        }
    }

    async fn list_users(&self, tenant_id: Option<&str>) -> StoreResult<Vec<User>> {
        let now = self.now();
        let items = self.table.scan(keys::USER_PK_PREFIX, keys::USER_SK).await?;
        let users: Vec<User> = items
            .into_iter()
            .filter(|i| !is_expired(i, now))
            .map(body_of)
            .collect::<StoreResult<_>>()?;
        Ok(users
            .into_iter()
            .filter(|u| tenant_id.is_none_or(|t| u.tenant_id == t))
            .collect())
    }
}

#[derive(Serialize, Deserialize)]
struct DomainItem {
    pattern: DomainPattern,
}

#[async_trait]
impl TenantStore for TableStore {
    async fn create_tenant(&self, tenant: &Tenant) -> StoreResult<()> {
        let item = item_of(&keys::tenant_pk(&tenant.id), keys::TENANT_SK, tenant)?;
        self.table.put(item, Cond::Absent { now: self.now() }).await
    }

    async fn tenant(&self, tenant_id: &str) -> StoreResult<Option<Tenant>> {
        self.get_live(&keys::tenant_pk(tenant_id), keys::TENANT_SK)
            .await
    }

    async fn list_tenants(&self) -> StoreResult<Vec<Tenant>> {
        let now = self.now();
        let items = self
            .table
            .scan(keys::TENANT_PK_PREFIX, keys::TENANT_SK)
            .await?;
        items
            .into_iter()
            .filter(|i| !is_expired(i, now))
            .map(body_of)
            .collect()
    }

    async fn add_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool> {
        if self.tenant(tenant_id).await?.is_none() {
            return Err(StoreError::NotFound(format!("tenant {tenant_id}")));
        }
        let item = item_of(
            &keys::tenant_pk(tenant_id),
            &keys::domain_sk(pattern.as_str()),
            &DomainItem {
                pattern: pattern.clone(),
            },
        )?;
        match self.table.put(item, Cond::Absent { now: self.now() }).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn remove_allowed_domain(
        &self,
        tenant_id: &str,
        pattern: &DomainPattern,
    ) -> StoreResult<bool> {
        self.table
            .delete(
                &keys::tenant_pk(tenant_id),
                &keys::domain_sk(pattern.as_str()),
                Cond::Always,
            )
            .await
    }

    async fn allowed_domains(&self, tenant_id: &str) -> StoreResult<Vec<DomainPattern>> {
        let q = Query::partition(keys::tenant_pk(tenant_id))
            .sk(SkCond::Prefix(keys::DOMAIN_PREFIX.into()));
        self.query_all(q)
            .await?
            .into_iter()
            .map(|i| body_of::<DomainItem>(i).map(|d| d.pattern))
            .collect()
    }
}

#[async_trait]
impl RevokedTokenStore for TableStore {
    async fn revoke(&self, tenant_id: &str, jti: &str, until: DateTime<Utc>) -> StoreResult<bool> {
        let mut item = item_of(
            &keys::tenant_pk(tenant_id),
            &keys::revoked_sk(jti),
            &json!({ "jti": jti }),
        )?;
        item.insert(EXPIRES_AT.into(), Value::from(until.timestamp()));
        match self.table.put(item, Cond::Absent { now: self.now() }).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn is_revoked(
        &self,
        tenant_id: &str,
        jti: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let item = self
            .table
            .get(&keys::tenant_pk(tenant_id), &keys::revoked_sk(jti))
            .await?;
        Ok(item.is_some_and(|i| !is_expired(&i, now.timestamp())))
    }
}

//! The table's schema: created here for tests and local set-up.

use std::time::Duration;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::Client;

use super::errors::{build_err, map_err};
use crate::adapters::table::{Index, EXPIRES_AT, PK, SK};
use crate::ports::{StoreError, StoreResult};

/// Creates the table with its key schema, both indexes and TTL on `expiresAt` (tests, local
/// set-up); `template.yaml` declares the same for AWS.
pub async fn create_table(client: &Client, table: &str) -> StoreResult<()> {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
        Projection, ProjectionType, ScalarAttributeType,
    };
    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .map_err(build_err)
    };
    let key_el = |n: &str, t: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(n)
            .key_type(t)
            .build()
            .map_err(build_err)
    };
    let mut req = client
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key_el(PK, KeyType::Hash)?)
        .key_schema(key_el(SK, KeyType::Range)?);
    for a in [
        PK,
        SK,
        Index::Gsi1.pk(),
        Index::Gsi1.sk(),
        Index::Gsi2.pk(),
        Index::Gsi2.sk(),
    ] {
        req = req.attribute_definitions(attr(a)?);
    }
    for i in [Index::Gsi1, Index::Gsi2] {
        req = req.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(i.name())
                .key_schema(key_el(i.pk(), KeyType::Hash)?)
                .key_schema(key_el(i.sk(), KeyType::Range)?)
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .map_err(build_err)?,
        );
    }
    req.send().await.map_err(|e| map_err("CreateTable", e))?;
    wait_active(client, table).await?;
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(
            aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
                .attribute_name(EXPIRES_AT)
                .enabled(true)
                .build()
                .map_err(build_err)?,
        )
        .send()
        .await
        .map_err(|e| map_err("UpdateTimeToLive", e))?;
    Ok(())
}

/// Creates the table unless it exists; `true` if it was created.
pub async fn ensure_table(client: &Client, table: &str) -> StoreResult<bool> {
    match client.describe_table().table_name(table).send().await {
        Ok(_) => Ok(false),
        Err(e) if e.code() == Some("ResourceNotFoundException") => {
            create_table(client, table).await.map(|()| true)
        }
        Err(e) => Err(map_err("DescribeTable", e)),
    }
}

async fn wait_active(client: &Client, table: &str) -> StoreResult<()> {
    for _ in 0..100 {
        let d = client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| map_err("DescribeTable", e))?;
        let status = d.table.and_then(|t| t.table_status);
        if status == Some(aws_sdk_dynamodb::types::TableStatus::Active) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(StoreError::Unavailable(format!(
        "table {table} never became ACTIVE"
    )))
}

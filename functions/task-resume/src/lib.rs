//! `POST /api/session/{sessionId}/task/{taskId}/resume` with `{ resolutionMethod,
//! resolutionData? }`: the user resolved what the task was waiting for (in chat, or by acting on
//! the page); the task is executing again and the next interact continues it.

use ::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;
use shared::domain::{Message, MessageRole, TaskError};
use shared::http::guard::authenticate;
use shared::http::parse_json;
use shared::http::{self, Request, Response, RouteSpec};
use shared::ports::StoreError;
use shared::{AppContext, Error};

/// The route this function serves.
pub const ROUTE: RouteSpec = RouteSpec {
    name: "task-resume",
    methods: &[Method::POST],
    path: "/api/session/{sessionId}/task/{taskId}/resume",
};

/// Longest part of `resolutionData` carried to the task's next decision.
const MAX_NOTE_CHARS: usize = 2_000;

/// Largest `resolutionData` accepted (as compact JSON).
const MAX_RESOLUTION_DATA_BYTES: usize = 16 * 1024;

/// Lambda and local-api entry point.
pub async fn handle(ctx: &AppContext, req: Request) -> Response {
    http::serve(ctx, req, &ROUTE, run).await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResumeBody {
    resolution_method: String,
    #[serde(default)]
    resolution_data: Option<serde_json::Value>,
}

async fn run(ctx: &AppContext, req: Request) -> Result<Response, Error> {
    let p = authenticate(ctx, req.headers()).await?;
    let session_id = http::uuid_param(&req, "sessionId")?;
    let task_id = http::uuid_param(&req, "taskId")?;
    let b: ResumeBody = parse_json(&req)?;
    // It is stored with a message and, later, shown to the model: keep it small.
    if b.resolution_data
        .as_ref()
        .is_some_and(|d| d.to_string().len() > MAX_RESOLUTION_DATA_BYTES)
    {
        return Err(Error::field(
            "resolutionData",
            format!("must be at most {MAX_RESOLUTION_DATA_BYTES} bytes of JSON"),
        ));
    }
    let how = match b.resolution_method.as_str() {
        "provide_in_chat" => "provided what was needed in the chat",
        "user_action_on_web" => "acted on the page",
        _ => {
            return Err(Error::field(
                "resolutionMethod",
                "must be provide_in_chat or user_action_on_web",
            ))
        }
    };
    let task = ctx
        .store
        .task(&p.tenant_id, &task_id)
        .await?
        .filter(|t| t.user_id == p.user_id && t.session_id.as_deref() == Some(session_id.as_str()))
        .ok_or(TaskError::NotFound)?;
    let now = ctx.clock.now();
    // What the user did or said reaches the task's next decision.
    let data = b
        .resolution_data
        .as_ref()
        .filter(|d| !d.is_null())
        .map(|d| d.as_str().map_or_else(|| d.to_string(), str::to_owned));
    let note = match &data {
        Some(d) => format!(
            "the user {how}: {}",
            shared::text::single_line(d, MAX_NOTE_CHARS)
        ),
        None => format!("the user {how}"),
    };
    let resumed = task.resumed_at(now, Some(note))?;
    ctx.store.save_task(&resumed).await.map_err(|e| match e {
        StoreError::Conflict(_) => TaskError::Busy("The task changed meanwhile; try again").into(),
        other => Error::from(other),
    })?;
    let message = format!("Task resumed: the user {how}.");
    let note = Message {
        status: Some("resumed".into()),
        action_payload: b.resolution_data,
        metadata: Some(json!({ "resolutionMethod": b.resolution_method })),
        ..Message::new(
            &p.tenant_id,
            &session_id,
            Some((&task_id, task.stored.expires_at)),
            MessageRole::System,
            &message,
            now,
        )
    };
    let log = shared::debug::entry(
        &ctx.config.retention,
        shared::debug::LogScope {
            tenant_id: &p.tenant_id,
            user_id: &p.user_id,
            task_id: Some(&task_id),
        },
        "task",
        &message,
        None,
        now,
    );
    let (stored, logged) =
        tokio::join!(ctx.store.append_message(&note), ctx.store.append_log(&log));
    match stored {
        Ok(m) => {
            let realtime = ctx.realtime.as_deref();
            shared::realtime::notify(realtime, &session_id, Some(&task_id), &[m], None).await
        }
        Err(e) => tracing::warn!(error = %e, "could not store the resume message"),
    }
    if let Err(e) = logged {
        tracing::warn!(error = %e, "could not store the debug log");
    }
    Ok(http::json(
        StatusCode::OK,
        &json!({ "taskId": task_id, "status": "executing", "message": message, "resumedAt": shared::time::iso(now) }),
    ))
}

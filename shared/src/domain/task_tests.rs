use super::*;

fn task(user: &str, status: TaskStatus, steps: u32) -> Task {
    let mut t = Task::new(
        "t".into(),
        "acme".into(),
        user.into(),
        None,
        "q".into(),
        "https://a.com".into(),
        Utc::now(),
        0,
    );
    t.status = status;
    t.stored.step_count = steps;
    t.stored.lease_owner = Some("r".into());
    t.stored.lease_until = Some(1);
    t
}

#[test]
fn admission_checks_owner_then_state_then_step_limit() {
    use Admission::*;
    assert_eq!(admission(None, "u", 50, false), Start);
    let mine = task("u", TaskStatus::Executing, 3);
    assert_eq!(admission(Some(&mine), "u", 50, false), Continue);
    assert_eq!(admission(Some(&mine), "other", 50, false), NotFound);
    let done = task("u", TaskStatus::Completed, 3);
    assert_eq!(
        admission(Some(&done), "u", 50, false),
        Finished(TaskStatus::Completed)
    );
    assert_eq!(
        admission(Some(&task("other", TaskStatus::Failed, 99)), "u", 50, false),
        NotFound,
        "another user's task reveals nothing about its state"
    );
    assert_eq!(
        admission(
            Some(&task("other", TaskStatus::Executing, 3)),
            "u",
            50,
            true
        ),
        NotFound
    );
    assert_eq!(admission(Some(&mine), "u", 3, false), StepLimit);
    // An archived session's task takes no more steps, whatever its state.
    assert_eq!(
        admission(Some(&mine), "u", 50, true),
        Archived { finished: false }
    );
    assert_eq!(
        admission(Some(&done), "u", 50, true),
        Archived { finished: true }
    );
    assert_eq!(admission(None, "u", 50, true), Start);
    let now = Utc::now();
    let mut idle = task("u", TaskStatus::NeedsUserInput, 3);
    idle.stored.lease_until = Some(now.timestamp() - 1);
    let resumed = idle
        .resumed_at(now, Some("signed in".into()))
        .expect("resumable");
    assert_eq!(resumed.status, TaskStatus::Executing);
    assert_eq!(resumed.notes.resume_note.as_deref(), Some("signed in"));
    assert!(resumed.stored.lease_owner.is_none());
    idle.stored.lease_until = Some(now.timestamp() + 30);
    assert!(matches!(
        idle.resumed_at(now, None),
        Err(super::super::TaskError::Busy(_))
    ));
    assert_eq!(
        done.resumed_at(now, None),
        Err(super::super::TaskError::Finished(TaskStatus::Completed))
    );
    let failed = mine.failed_at(Utc::now());
    assert_eq!(failed.status, TaskStatus::Failed);
    assert!(failed.stored.lease_owner.is_none() && failed.stored.lease_until.is_none());
}

#[test]
fn a_task_is_stored_with_one_attribute_per_field_as_before_its_parts() {
    // The parts are flattened: the stored item is what a task was before them, and a task
    // stored then (with the old name of its refusals) reads back whole.
    let mut t = task("u", TaskStatus::Executing, 3);
    t.carry_note("Look again.");
    t.pending.declined = true;
    t.seen.page_marks = "AAEC".into();
    t.goal.task_type = Some("web_only".into());
    let v = serde_json::to_value(&t).expect("serialises");
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut want = vec![
        "carriedNotes",
        "createdAt",
        "declined",
        "expiresAt",
        "id",
        "leaseOwner",
        "leaseUntil",
        "pageMarks",
        "plan",
        "query",
        "refused",
        "sessionId",
        "status",
        "stepCount",
        "taskType",
        "tenantId",
        "updatedAt",
        "url",
        "usage",
        "userId",
        "version",
    ];
    want.sort_unstable();
    let mut got = keys.clone();
    got.sort_unstable();
    assert_eq!(got, want);
    let mut old = v.clone();
    let refused = old["refused"].take();
    old.as_object_mut().expect("object").remove("refused");
    old["loops"] = refused;
    let back: Task = serde_json::from_value(old).expect("an item stored before reads");
    assert_eq!(back, t);
}

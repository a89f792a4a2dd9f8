//! The document workflow on the seeded mailbox, end to end in the core: one filled copy, one
//! proposal, approve → one local sent message carrying exactly that copy; the original
//! form's bytes never change.

use hearth_core::documents::DocumentInput;
use hearth_core::files::sha256_hex;
use hearth_core::pdf::{PdfEngine, default_library_path, inspect};
use hearth_core::store::tasks::NewTask;
use hearth_core::workspace::seed::PERMISSION_FORM_PDF;
use hearth_protocol::approvals::{ApprovalDecideParams, Decision, ProposalDraft, ProposalStatus};
use hearth_protocol::ids::{OperationId, TaskId};
use hearth_protocol::pdf::FieldValue;
use hearth_protocol::tasks::{TaskControl, TaskControlParams, TaskKind, TaskStatus};

use super::support::{engine_idle, open};

async fn run_once(hearth: &hearth_core::Hearth) {
    let engine = hearth.tasks();
    let mut changes = engine.subscribe();
    engine.tick().await.unwrap();
    engine_idle(engine, &mut changes).await;
}

#[tokio::test]
async fn the_permission_slip_is_filled_reviewed_and_sent_once() {
    let t = open().await;
    let hearth = &t.hearth;
    let original_attachment = hearth.store().get_attachment("att-permission-form").await.unwrap().unwrap();
    let original_hash = sha256_hex(&std::fs::read(&original_attachment.path).unwrap());
    assert_eq!(original_hash, sha256_hex(PERMISSION_FORM_PDF));

    let input = serde_json::to_value(DocumentInput { message_id: "msg-school-1".into(), values: None }).unwrap();
    let task = hearth
        .tasks()
        .create(NewTask { idempotency_key: "doc-1", kind: TaskKind::Document, title: "Permission slip", input: &input, thread_id: None })
        .await
        .unwrap();
    run_once(hearth).await;
    let waiting = hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(waiting.status, TaskStatus::WaitingInput, "{:?}", waiting.error);
    let question = waiting.question.clone().unwrap();
    for field in ["participant_name", "guardian_name", "emergency_phone", "permission_granted: yes/no"] {
        assert!(question.contains(field), "the question lists {field}: {question}");
    }

    let answer = "participant_name: Léa Martin\nguardian_name: Samuel Martin-Okafor\nemergency_contact: Zoë Müller\n\
                  emergency_phone: +33 6 12 34 56 78\npermission_granted: yes";
    let control = TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: waiting.status,
        expected_attempts: waiting.attempts,
        control: TaskControl::Answer { text: answer.into() },
    };
    hearth.task_control(&control).await.unwrap();
    run_once(hearth).await;
    let reviewing = hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(reviewing.status, TaskStatus::WaitingApproval, "{:?}", reviewing.error);

    let files = hearth.file_list().await.unwrap();
    assert_eq!(files.len(), 2, "the imported original and one filled copy");
    let filled = files.iter().find(|f| f.parent_id.is_some()).unwrap();
    let imported = files.iter().find(|f| f.parent_id.is_none()).unwrap();
    assert_eq!(filled.parent_id.as_deref(), Some(imported.id.as_str()));
    assert_eq!(imported.sha256, original_hash, "the imported original is byte-identical");
    for file in &files {
        let row = hearth.store().get_file(&file.id).await.unwrap().unwrap();
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&row.path).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600, "{} is readable by the owner only", row.path);
        assert_eq!(row.path, t.dir.path().join("files").join(format!("{}.pdf", file.id)).to_string_lossy());
    }

    let proposals = hearth.approval_list().await.unwrap();
    assert_eq!(proposals.len(), 1);
    let proposal = &proposals[0];
    assert_eq!(Some(proposal.id.as_str()), reviewing.action_id.as_deref());
    let ProposalDraft::EmailSend(draft) = &proposal.draft else { panic!("not an email") };
    assert_eq!(draft.to, ["alvarez@riverside-school.example"]);
    assert_eq!(draft.subject, "Re: Community visit – permission form");
    assert_eq!(draft.in_reply_to.as_deref(), Some("msg-school-1"));
    assert_eq!(draft.attachments.len(), 1);
    assert_eq!(draft.attachments[0].file_id, filled.id);
    assert_eq!(hearth.store().sent_messages().await.unwrap().len(), 0, "nothing is sent before approval");

    let decided = hearth
        .approval_decide(&ApprovalDecideParams {
            proposal_id: proposal.id.clone(),
            hash: proposal.hash.clone(),
            decision: Decision::Approve,
        })
        .await
        .unwrap();
    assert_eq!(decided.status, ProposalStatus::Succeeded, "{:?}", decided.error);
    run_once(hearth).await;
    let done = hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    assert_eq!(done.result, decided.receipt);

    let sent = hearth.store().sent_messages().await.unwrap();
    assert_eq!(sent.len(), 1, "one message in Sent");
    assert_eq!(sent[0].in_reply_to.as_deref(), Some("msg-school-1"));
    assert_eq!(sent[0].thread_id, "thr-school");
    let carried = hearth.store().message_attachments(&sent[0].id).await.unwrap();
    assert_eq!(carried.len(), 1);
    let carried_bytes = std::fs::read(&carried[0].path).unwrap();
    assert_eq!(sha256_hex(&carried_bytes), filled.sha256, "the sent attachment is the reviewed copy");
    let engine = PdfEngine::load(&default_library_path()).unwrap();
    let values = inspect(&engine, &carried_bytes).unwrap();
    let value = |name: &str| values.fields.iter().find(|f| f.name == name).and_then(|f| f.value.clone());
    assert_eq!(value("participant_name").as_deref(), Some("Léa Martin"));
    assert_eq!(value("permission_granted").as_deref(), Some("true"));
    let _ = FieldValue::Checked(true);

    assert_eq!(sha256_hex(&std::fs::read(&original_attachment.path).unwrap()), original_hash, "the original never changes");
    assert_eq!(hearth.file_list().await.unwrap().len(), 2, "no second filled copy");
}

#[tokio::test]
async fn a_denied_reply_fails_the_task_and_retry_prepares_a_fresh_review() {
    let t = open().await;
    let hearth = &t.hearth;
    let values = serde_json::from_str(r#"{"participant_name":"Ada","permission_granted":true}"#).unwrap();
    let input = serde_json::to_value(DocumentInput { message_id: "msg-school-1".into(), values: Some(values) }).unwrap();
    let task = hearth
        .tasks()
        .create(NewTask { idempotency_key: "doc-2", kind: TaskKind::Document, title: "Slip", input: &input, thread_id: None })
        .await
        .unwrap();
    run_once(hearth).await;
    let proposal = hearth.approval_list().await.unwrap().remove(0);
    hearth
        .approval_decide(&ApprovalDecideParams { proposal_id: proposal.id.clone(), hash: proposal.hash.clone(), decision: Decision::Deny })
        .await
        .unwrap();
    run_once(hearth).await;
    let failed = hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert!(failed.error.as_deref().unwrap().contains("You denied the reply"), "{:?}", failed.error);

    let retry = TaskControlParams {
        task_id: TaskId::trusted(task.id.as_str()),
        expected_status: failed.status,
        expected_attempts: failed.attempts,
        control: TaskControl::Retry { acknowledge_uncertain: false },
    };
    hearth.task_control(&retry).await.unwrap();
    run_once(hearth).await;
    let again = hearth.store().get_task(&task.id).await.unwrap().unwrap();
    assert_eq!(again.status, TaskStatus::WaitingApproval);
    assert_ne!(again.action_id.as_deref(), Some(proposal.id.as_str()), "a new proposal for a new review");
    assert_eq!(hearth.file_list().await.unwrap().len(), 2, "the retry reused the filled copy");
    assert_eq!(hearth.store().sent_messages().await.unwrap().len(), 0);
}

#[tokio::test]
async fn a_pdf_from_disk_is_imported_once_per_operation_and_never_replaces_another_file() {
    use base64::Engine;
    use hearth_protocol::files::FileImportParams;
    let t = open().await;
    let hearth = &t.hearth;
    let choices = include_bytes!("../fixtures/choices.pdf").to_vec();
    let params = |op: &str, bytes: &[u8]| FileImportParams {
        operation_id: OperationId::parse(op).unwrap(),
        name: "mine.pdf".into(),
        bytes_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    };
    let first = hearth.file_import(&params("op-1", &choices)).await.unwrap();
    let again = hearth.file_import(&params("op-1", &choices)).await.unwrap();
    assert_eq!(first.id, again.id, "the same operation keeps one file");
    assert_ne!(first.id, "op-1", "the window never names the stored file");
    // The same operation with other bytes is a conflict, and the stored file is untouched.
    let err = hearth.file_import(&params("op-1", PERMISSION_FORM_PDF)).await.unwrap_err();
    assert!(err.to_string().contains("other bytes"), "{err}");
    let (_, stored) = hearth.files().read(&first.id).await.unwrap();
    assert_eq!(sha256_hex(&stored), sha256_hex(&choices));
    // Another operation is another file; bad bytes are refused with nothing stored.
    let second = hearth.file_import(&params("op-2", PERMISSION_FORM_PDF)).await.unwrap();
    assert_ne!(second.id, first.id);
    assert!(hearth.file_import(&params("op-3", b"not a pdf")).await.is_err());
    assert!(hearth.file_import(&FileImportParams { bytes_base64: "%%%".into(), ..params("op-4", &choices) }).await.is_err());
    let mine: Vec<_> = hearth.file_list().await.unwrap().into_iter().filter(|f| f.name == "mine.pdf").collect();
    assert_eq!(mine.len(), 2);
    hearth.file_delete(&first.id).await.unwrap();
    assert!(hearth.files().read(&first.id).await.is_err(), "its bytes are gone");
    assert_eq!(hearth.file_list().await.unwrap().into_iter().filter(|f| f.name == "mine.pdf").count(), 1);
}

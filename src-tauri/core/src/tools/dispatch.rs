//! The one dispatch path: parse the call once, then decide by effect class alone.
//!
//! `Read`/`Control` run directly; `Effect` runs only inside `Journal::perform` under the key
//! [`OperationScope::key`] gives; `Prepare` goes only to the approval gate under the same key.
//! A model's parallel calls run one at a time, in order ([`run_serially`]).
//!
//! Before any of that, a call a model chose meets the trust policy (`trust::decide`): it runs,
//! it is refused, or it is *held* — stored as a `HeldCall` proposal under the key it would
//! have run under, so the owner decides on a card that shows the call and the outside content
//! that led to it. After a call runs, what it brought in from outside is recorded on the run's
//! provenance.

use std::any::Any;

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_protocol::approvals::HeldTool;
use hearth_protocol::mcp::McpToolRef;
use hearth_protocol::provenance::OutsideSource;
use hearth_protocol::{ToolName, ToolRef};
use serde::Serialize;
use serde_json::Value;

use super::context::{OperationScope, StepId, ToolContext};
use super::keyed::{cite_mandate, journal_answers_without_acting, perform_keyed, propose, propose_held, standing_order, with_failure_id};
use super::registry::visit;
use super::traits::{DirectTool, EffectTool, PrepareTool, Tool, Visitor};
use super::{ToolCall, ToolOutput};
use crate::journal::{JournalError, Receipt, ReceiptStatus};
use crate::trust::{self, Chooser, Verdict};

/// What calls after an outcome-setting call return.
pub const PAUSED_RESULT: &str = "paused — the task is waiting or finished; this call was not run";

/// Runs `calls` one at a time, in order, each after the previous finished. After a call that
/// settles the run's outcome, or after Stop, the rest return [`PAUSED_RESULT`] and do nothing.
///
/// Inside a task, call `i` is the task's step `first_step + i` (the task's conversation owns
/// the counter); in a chat, each call is keyed by its own id within the chat run.
pub async fn run_serially(ctx: &ToolContext, calls: &[ToolCall], first_step: u64) -> Vec<(String, ToolOutput)> {
    let mut outputs = Vec::with_capacity(calls.len());
    let mut settled = false;
    for (index, call) in calls.iter().enumerate() {
        if settled || ctx.cancel.is_cancelled() {
            outputs.push((call.id.clone(), ToolOutput::error(PAUSED_RESULT)));
            continue;
        }
        let step = match &ctx.scope {
            OperationScope::Task(_) => StepId::Step(first_step + index as u64),
            OperationScope::Chat { .. } | OperationScope::Owner { .. } | OperationScope::Approved { .. } => StepId::Call(call.id.clone()),
        };
        // Only a command has output worth streaming to its card.
        let streams = call.name == ToolName::RunComputerCommand.as_str();
        let output = match &ctx.live {
            Some(make) if streams => {
                let (sink, forwarded) = make(&call.id);
                let output = dispatch(&ctx.clone().with_output(sink), &call.name, &call.arguments, step).await;
                // The sink went with the context: the forwarder drains and ends.
                forwarded.await;
                output
            }
            Some(_) | None => dispatch(ctx, &call.name, &call.arguments, step).await,
        };
        settled = output.outcome.is_some();
        outputs.push((call.id.clone(), output));
    }
    outputs
}

/// Runs one call by its wire name and JSON arguments as step `step`: the path of a call a
/// model (or an external agent) chose, whose name and arguments arrive as text.
pub async fn dispatch(ctx: &ToolContext, name: &str, arguments: &str, step: StepId) -> ToolOutput {
    let ToolRef::Known(tool) = ToolRef::parse(name) else {
        if let Some(plugin) = McpToolRef::from_wire(name) {
            return super::mcp_call::dispatch(ctx, plugin, arguments, step).await;
        }
        return ToolOutput::error(format!("There is no tool named {name:?}. Use one of the tools you were given."));
    };
    let args = match parse_arguments(tool, arguments) {
        Ok(args) => args,
        Err(message) => return ToolOutput::error(message),
    };
    checked(ctx, tool, args.clone(), Args::Json(args), step).await
}

/// Runs one call of tool `T` that Hearth itself makes (a workflow's step, a screen's action):
/// the tool is a type and its arguments are `T::Args`, so a misspelt tool or a misshapen
/// argument does not compile, and the handler receives the value as built — no JSON text in
/// between. Everything else is [`dispatch`]'s path: the trust policy, the journal or the gate
/// by the tool's class, and the provenance, which read the arguments as JSON, as a model
/// would have sent them. A context that carries a run's provenance (a workflow step inside a
/// task that has read outside content) is decided by the trust policy exactly as a model's
/// call would be: a typed call is no way around it.
pub(crate) async fn call<T: Tool>(ctx: &ToolContext, args: T::Args, step: StepId) -> ToolOutput
where
    T::Args: Serialize,
{
    let json = match serde_json::to_value(&args) {
        Ok(json) => json,
        Err(err) => return ToolOutput::error(format!("The arguments for {} cannot be written down ({err}).", T::NAME)),
    };
    checked(ctx, T::NAME, json, Args::Typed(Box::new(args)), step).await
}

/// The common path after parsing: the policy decides (for a call a model chose), then the
/// registry runs it by class, then what it read from outside is recorded. `json` is the
/// arguments as the policy, a held call's card and the provenance read them.
async fn checked(ctx: &ToolContext, tool: ToolName, json: Value, args: Args, step: StepId) -> ToolOutput {
    if let (Some(provenance), Some(chooser)) = (ctx.provenance(), chooser(&ctx.scope)) {
        match trust::decide(tool, &json, chooser, provenance) {
            Verdict::Run => {}
            Verdict::Refuse(why) => return ToolOutput::error(why),
            Verdict::Ask(why) => return hold(ctx, tool, json, step, why).await,
        }
    }
    let output = visit(tool, Dispatch { ctx, args, step }).await;
    if let (Some(provenance), Some(kind)) = (ctx.provenance(), trust::outside_kind(tool)) {
        provenance.record_answer(OutsideSource::new(kind, &trust::detail_of(tool, &json)), &output.content, &json);
    }
    output
}

/// A call's arguments on their way to the handler.
enum Args {
    /// As a model sent them: parsed into the tool's type at the handler.
    Json(Value),
    /// Built by Hearth as the tool's own `Args` type ([`call`]).
    Typed(Box<dyn Any + Send>),
}

impl Args {
    /// The tool's typed arguments, or an error the model can fix.
    fn into_typed<T: Tool>(self) -> Result<T::Args, ToolOutput> {
        match self {
            Args::Json(json) => parse_args::<T>(json),
            // The registry maps `T::NAME` to `T` itself, so the box holds `T::Args`; a
            // mismatch would be a registry bug, reported rather than panicked on.
            Args::Typed(typed) => typed
                .downcast::<T::Args>()
                .map(|args| *args)
                .map_err(|_| ToolOutput::error(format!("Hearth built the arguments for {} as another tool's; nothing was run.", T::NAME))),
        }
    }
}

/// Runs the one held call the owner approved, in the context the gate built for it
/// (`Toolbox::for_approved`): the trust policy is not asked again, and the call is keyed by
/// the key it was held under.
pub(crate) async fn run_approved(ctx: &ToolContext, tool: HeldTool, arguments: Value) -> ToolOutput {
    let step = StepId::Named("approved".into());
    match tool {
        HeldTool::Hearth(tool) => visit(tool, Dispatch { ctx, args: Args::Json(arguments), step }).await,
        HeldTool::Mcp(tool) => super::mcp_call::run_approved(ctx, tool, arguments, step).await,
    }
}

/// Who chose the calls in `scope`, for the policy; `None` where no model chooses.
fn chooser(scope: &OperationScope) -> Option<Chooser> {
    match scope {
        OperationScope::Task(_) => Some(Chooser::TaskModel),
        OperationScope::Chat { .. } => Some(Chooser::ChatModel),
        OperationScope::Owner { .. } | OperationScope::Approved { .. } => None,
    }
}

/// Holds a call for the owner: checks its arguments as the tool would, then stores it as a
/// `HeldCall` proposal under the key it would have run under, so asking again (a retried step,
/// a re-dispatched turn) finds the same card and, once decided, its receipt.
async fn hold(ctx: &ToolContext, tool: ToolName, args: Value, step: StepId, why: &'static str) -> ToolOutput {
    let (held_step, action) = match visit(tool, HeldStep { args: args.clone(), step: step.clone() }) {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let key = ctx.scope.key(&held_step);
    if action.is_some() && journal_answers_without_acting(ctx, &key).await {
        // The same operation asked again: the journal returns its receipt (or the conflict)
        // and performs nothing, so there is nothing for the owner to decide.
        return visit(tool, Dispatch { ctx, args: Args::Json(args), step }).await;
    }
    if let Some(mandate) = standing_order(ctx, tool.as_str(), |grant| trust::mandate::covers(grant, tool, &args), &key).await {
        // A standing order the owner granted this task covers the call, and a use of it was
        // counted: it runs without a card, and its result names the order.
        let output = visit(tool, Dispatch { ctx, args: Args::Json(args), step }).await;
        return cite_mandate(output, &mandate);
    }
    let summary = summarize(tool, &args);
    propose_held(ctx, &key, HeldTool::Hearth(tool), summary, args, why).await
}

/// The step a held call is keyed by (an effect's own operation id, when it gives one), and an
/// effect's full action, after its arguments were checked exactly as dispatch will check them
/// when it runs.
struct HeldStep {
    args: Value,
    step: StepId,
}

impl Visitor for HeldStep {
    type Out = Result<(StepId, Option<Value>), ToolOutput>;

    fn direct<T: DirectTool>(self) -> Self::Out {
        parse_args::<T>(self.args).map(|_| (self.step, None))
    }

    fn effect<T: EffectTool>(self) -> Self::Out {
        let args = parse_args::<T>(self.args)?;
        let action = T::action(&args)?;
        let step = match T::operation_id(&args) {
            Some(id) => StepId::Operation(id.to_owned()),
            None => self.step,
        };
        Ok((step, Some(action)))
    }

    fn prepare<T: PrepareTool>(self) -> Self::Out {
        // A proposal already waits for the owner: nothing to hold.
        Err(ToolOutput::error(format!("{} is never held; it is reviewed as it is.", T::NAME)))
    }
}

/// One line saying what a held call would do, for the card's title and the notice.
fn summarize(tool: ToolName, args: &Value) -> String {
    const NAMES: [&str; 8] = ["title", "url", "command", "text", "path", "instructions", "ref", "fileId"];
    let what = NAMES.iter().find_map(|name| args.get(*name).and_then(Value::as_str).filter(|v| !v.trim().is_empty()));
    let what: String = what.unwrap_or_default().chars().take(160).collect();
    if what.is_empty() { tool.as_str().to_owned() } else { format!("{tool}: {what}") }
}

struct Dispatch<'a> {
    ctx: &'a ToolContext,
    args: Args,
    step: StepId,
}

impl<'a> Visitor for Dispatch<'a> {
    type Out = BoxFuture<'a, ToolOutput>;

    fn direct<T: DirectTool>(self) -> Self::Out {
        async move {
            match self.args.into_typed::<T>() {
                Ok(args) => T::run(self.ctx, &self.step, args).await,
                Err(refused) => refused,
            }
        }
        .boxed()
    }

    fn effect<T: EffectTool>(self) -> Self::Out {
        async move {
            let args = match self.args.into_typed::<T>() {
                Ok(args) => args,
                Err(refused) => return refused,
            };
            let action = match T::action(&args) {
                Ok(action) => action,
                Err(refused) => return refused,
            };
            let step = match T::operation_id(&args) {
                Some(id) => StepId::Operation(id.to_owned()),
                None => self.step,
            };
            match journaled::<T>(self.ctx, &step, &action, args).await {
                Ok(receipt) if receipt.status == ReceiptStatus::Failed => {
                    let output = T::present(self.ctx, Ok(receipt)).await;
                    with_failure_id(self.ctx, &self.ctx.scope.key(&step), output).await
                }
                Ok(receipt) => T::present(self.ctx, Ok(receipt)).await,
                Err(err @ JournalError::OutcomeUnknown { .. }) => {
                    with_failure_id(self.ctx, &self.ctx.scope.key(&step), ToolOutput::in_doubt(err.to_string())).await
                }
                // Stopped by the owner, or held by another dispatch: a control, not a failure.
                Err(err @ (JournalError::Stopped { .. } | JournalError::InFlight { .. })) => ToolOutput::in_doubt(err.to_string()),
                Err(
                    err @ (JournalError::Cancelled { .. }
                    | JournalError::Conflict { .. }
                    | JournalError::Fenced { .. }
                    | JournalError::Core(_)),
                ) => T::present(self.ctx, Err(err.to_string())).await,
            }
        }
        .boxed()
    }

    fn prepare<T: PrepareTool>(self) -> Self::Out {
        async move {
            let args = match self.args.into_typed::<T>() {
                Ok(args) => args,
                Err(refused) => return refused,
            };
            let draft = match T::draft(self.ctx, args).await {
                Ok(draft) => draft,
                Err(refused) => return refused,
            };
            let key = self.ctx.scope.key(&self.step);
            propose(self.ctx, &key.joined(), Some(&key), draft).await
        }
        .boxed()
    }
}

/// Runs an effect tool's effect inside the journal, keyed by the one key function.
async fn journaled<T: EffectTool>(ctx: &ToolContext, step: &StepId, action: &Value, args: T::Args) -> Result<Receipt, JournalError> {
    let key = ctx.scope.key(step);
    let mut work = ctx.clone();
    work.effect_key = Some(key.clone());
    let effect = move |cancel| T::perform(work, args, cancel);
    perform_keyed(ctx, &key, T::NAME.as_str(), action, effect).await
}

/// Parses a tool's arguments into its typed form, or an error the model can fix.
fn parse_args<T: Tool>(args: Value) -> Result<T::Args, ToolOutput> {
    serde_json::from_value(args)
        .map_err(|err| ToolOutput::error(format!("The arguments for {} do not fit ({err}). Fix them and call it again.", T::NAME)))
}

/// Arguments must be a JSON object; an empty string means `{}`.
fn parse_arguments(tool: ToolName, text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(serde_json::json!({}));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(format!("The arguments for {tool} must be a JSON object.")),
        Err(err) => Err(format!("The arguments for {tool} are not valid JSON ({err}). Send them again as a JSON object.")),
    }
}

/// Argument parsing of every tool exactly as dispatch does it (the text, then the tool's typed
/// arguments), for the fuzz target. Returns whether the arguments were accepted; never panics.
#[doc(hidden)]
pub fn fuzz_parse_arguments(tool: ToolName, text: &str) -> bool {
    struct Parse(Value);
    impl Visitor for Parse {
        type Out = bool;
        fn direct<T: DirectTool>(self) -> bool {
            parse_args::<T>(self.0).is_ok()
        }
        fn effect<T: EffectTool>(self) -> bool {
            parse_args::<T>(self.0).is_ok()
        }
        fn prepare<T: PrepareTool>(self) -> bool {
            parse_args::<T>(self.0).is_ok()
        }
    }
    match parse_arguments(tool, text) {
        Ok(value) => visit(tool, Parse(value)),
        Err(_) => false,
    }
}

#[cfg(test)]
#[expect(clippy::expect_used, reason = "a test fails by naming what it expected")]
mod tests {
    use super::*;
    use crate::tools::typed::{ImportArgs, ImportPdf, SaveArtifact, SaveArtifactArgs};

    #[test]
    fn typed_arguments_reach_their_tool_as_built() {
        let args = Args::Typed(Box::new(SaveArtifactArgs { name: "a.txt".into(), content: "x".into() }));
        let typed = args.into_typed::<SaveArtifact>().map_err(|out| out.content).expect("its own tool's arguments");
        assert_eq!((typed.name.as_str(), typed.content.as_str()), ("a.txt", "x"));
    }

    #[test]
    fn another_tools_arguments_are_refused_not_panicked_on() {
        let args = Args::Typed(Box::new(SaveArtifactArgs { name: "a.txt".into(), content: "x".into() }));
        let refused = args.into_typed::<ImportPdf>().err().expect("a save_artifact argument is not import_pdf's");
        assert!(refused.is_error && refused.content.contains("import_pdf"), "{}", refused.content);
    }

    #[test]
    fn json_arguments_are_parsed_as_a_model_sends_them() {
        let parsed = Args::Json(serde_json::json!({ "attachmentId": "m1:0" })).into_typed::<ImportPdf>().map_err(|o| o.content);
        let ImportArgs { attachment_id } = parsed.expect("well-formed");
        assert_eq!(attachment_id, "m1:0");
        let refused = Args::Json(serde_json::json!({ "attachment": "m1:0" })).into_typed::<ImportPdf>().err().expect("misnamed");
        assert!(refused.content.contains("do not fit"), "{}", refused.content);
    }
}

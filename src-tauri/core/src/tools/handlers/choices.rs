//! present_choices: put 2–12 options in front of the owner and go on with their pick — how
//! Hearth settles conflicting results instead of guessing. In a chat the run ends with the
//! choice card, and the pick arrives as the owner's next message; in a task the task waits
//! like ask_user, with the options kept beside the question (fenced), and the pick is the
//! answer.

use hearth_protocol::ToolName;
use hearth_protocol::ipc::{MAX_CHOICES, MIN_CHOICES, PresentChoicesResult};
use serde::Deserialize;
use serde_json::json;

use crate::tools::context::{StepId, ToolContext};
use crate::tools::traits::{DirectTool, Tool};
use crate::tools::{RunOutcome, ToolOutput};

const MAX_QUESTION: usize = 2_000;
const MAX_OPTION: usize = 200;

/// `present_choices`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PresentChoicesArgs {
    /// The question for the owner (at most 2,000 characters).
    pub question: String,
    /// 2 to 12 distinct options, each at most 200 characters.
    pub options: Vec<String>,
}

/// `present_choices`.
pub(crate) struct PresentChoices;

impl Tool for PresentChoices {
    const NAME: ToolName = ToolName::PresentChoices;
    const DESCRIPTION: &'static str = "Offer the owner 2 to 12 options and wait for their pick, instead of guessing (results \
                                       that disagree, several good ways to go). Their pick comes back as their next message, \
                                       or as the task's answer.";
    type Args = PresentChoicesArgs;
}

impl DirectTool for PresentChoices {
    async fn run(ctx: &ToolContext, _step: &StepId, args: PresentChoicesArgs) -> ToolOutput {
        let question = args.question.trim().to_owned();
        if question.is_empty() || question.chars().count() > MAX_QUESTION {
            return ToolOutput::error(format!("`question` is 1 to {MAX_QUESTION} characters."));
        }
        // Counted first: the comparisons below are quadratic in the number given.
        if !(MIN_CHOICES..=MAX_CHOICES).contains(&args.options.len()) {
            return ToolOutput::error(format!("Give {MIN_CHOICES} to {MAX_CHOICES} options."));
        }
        let mut options: Vec<String> = Vec::new();
        for option in &args.options {
            let option = option.trim();
            if option.is_empty() || option.chars().count() > MAX_OPTION {
                return ToolOutput::error(format!("Each option is 1 to {MAX_OPTION} characters."));
            }
            if options.iter().any(|o| o.eq_ignore_ascii_case(option)) {
                return ToolOutput::error(format!("The option {option:?} is given twice; make each one different."));
            }
            options.push(option.to_owned());
        }
        if !(MIN_CHOICES..=MAX_CHOICES).contains(&options.len()) {
            return ToolOutput::error(format!("Give {MIN_CHOICES} to {MAX_CHOICES} options."));
        }
        if let Some(task) = ctx.scope.task()
            && let Err(err) = task.checkpoint(&json!({ "choices": { "question": question, "options": options } })).await
        {
            return ToolOutput::error(err.to_string());
        }
        let result = PresentChoicesResult { question: question.clone(), options };
        ToolOutput {
            outcome: Some(RunOutcome::WaitingInput(question)),
            ..ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default())
        }
    }
}

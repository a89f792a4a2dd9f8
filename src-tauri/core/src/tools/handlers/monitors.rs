//! watch_page: make a page monitor — a `monitor` task that looks at the page on its interval
//! (see `core::monitors`). A Control tool: it creates a task through the task desk, keyed by
//! its step like delegate_task.

use hearth_protocol::ToolName;
use hearth_protocol::ids::TaskId;
use hearth_protocol::ipc::DelegateTaskResult;
use hearth_protocol::tasks::TaskKind;
use serde::Deserialize;

use crate::tools::ToolOutput;
use crate::tools::context::{StepId, ToolContext};
use crate::tools::traits::{DirectTool, Tool};
use crate::watch::{Condition, MonitorInput};

/// `watch_page`'s arguments.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct WatchPageArgs {
    /// A short title, e.g. "Kettle price".
    pub title: String,
    /// The page's http(s) address.
    pub url: String,
    /// `change` (any change of its text), `contains` (the text appears) or `price_below`.
    pub condition: ConditionArg,
    /// The text to look for (contains) or the price (price_below, e.g. "25.00").
    #[serde(default)]
    pub value: Option<String>,
    /// Minutes between looks, 1 to 10,080. Default 60.
    #[serde(default)]
    pub interval_minutes: Option<u32>,
}

/// What to look for.
#[derive(Deserialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ConditionArg {
    /// Any change.
    Change,
    /// The text appears.
    Contains,
    /// A price below the value.
    PriceBelow,
}

/// `watch_page`.
pub(crate) struct WatchPage;

impl Tool for WatchPage {
    const NAME: ToolName = ToolName::WatchPage;
    const DESCRIPTION: &'static str = "Watch a web page and tell the owner when it changes, contains a text, or shows a price \
                                       below a value. Looks every intervalMinutes through Hearth's browser; the owner can \
                                       pause, resume, stop or check it now in Activity.";
    type Args = WatchPageArgs;
}

impl DirectTool for WatchPage {
    async fn run(ctx: &ToolContext, step: &StepId, args: WatchPageArgs) -> ToolOutput {
        let input = MonitorInput {
            title: args.title.trim().to_owned(),
            url: args.url.trim().to_owned(),
            condition: match args.condition {
                ConditionArg::Change => Condition::Change,
                ConditionArg::Contains => Condition::Contains,
                ConditionArg::PriceBelow => Condition::PriceBelow,
            },
            value: args.value.unwrap_or_default().trim().to_owned(),
            interval_minutes: args.interval_minutes.unwrap_or(60),
        };
        if let Err(why) = input.validate() {
            return ToolOutput::error(why);
        }
        if ctx.cancel.is_cancelled() {
            return ToolOutput::error("The run was stopped, so nothing is watched.");
        }
        let key = ctx.scope.key(step).joined();
        let fence = ctx.scope.task().map(|t| t.fence());
        let value = match serde_json::to_value(&input) {
            Ok(value) => value,
            Err(err) => return ToolOutput::error(err.to_string()),
        };
        match ctx.desk.create(&key, TaskKind::Monitor, &input.title, &value, ctx.scope.thread_id(), fence, ctx.scope.chat_run()).await {
            Ok(task) => {
                let result = DelegateTaskResult { task_id: TaskId::trusted(task.id), title: task.title, status: task.status };
                ToolOutput::ok(&serde_json::to_value(result).unwrap_or_default())
            }
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }
}

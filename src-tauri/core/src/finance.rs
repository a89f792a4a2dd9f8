//! The finance task's deterministic core (issue 14, point 5): a bank statement as CSV in, a
//! summary out — no model involved.
//!
//! - CSV is read by the `csv` crate (RFC 4180: quoted fields with commas and line breaks, CRLF);
//!   a UTF-8 byte-order mark is dropped.
//! - The columns `date`, `description`, `amount`, `category` are found by name, in any order and
//!   case; others are ignored.
//! - Amounts become **integer cents** straight from their digits — never through floating point,
//!   which would make 0.10 + 0.20 come out as 0.30000000000000004.
//! - Bounds: at most 500,000 characters and 5,000 rows; anything past them is refused with a
//!   message that says which limit, rather than summarised in part.
//!
//! The `finance` task kind that runs it is `finance_task`: it reads the statement a task's
//! input names ([`StatementSource`]), keeps the summary as the task's tracker
//! (`state.financeTracker`, which the Activity screen charts) and saves it as an artifact.

use std::collections::BTreeMap;

use chrono::NaiveDate;

/// Where a finance task keeps its tracker in its state.
pub const TRACKER: &str = "financeTracker";

/// A finance task's title.
pub const TASK_TITLE: &str = "Summarize the bank statement";

/// A finance task's input: the statement, as the handler reads it.
pub fn task_input(csv: &str) -> serde_json::Value {
    serde_json::json!({ "title": TASK_TITLE, "csv": csv })
}

/// Where a finance task's statement is: the three sources a task's input can name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatementSource {
    /// CSV text the owner pasted.
    Pasted(String),
    /// A PDF in Files (its bytes never change: read when the task runs).
    File(hearth_protocol::ids::FileId),
    /// A file in the owner's document folders, by its path, read from the index when the task
    /// runs — as the file is then, so a schedule's runs follow a statement the bank overwrites.
    Document(String),
}

impl StatementSource {
    /// The task's input.
    pub fn task_input(&self) -> serde_json::Value {
        match self {
            Self::Pasted(csv) => task_input(csv),
            Self::File(id) => serde_json::json!({ "title": TASK_TITLE, "fileId": id.as_str() }),
            Self::Document(path) => serde_json::json!({ "title": TASK_TITLE, "documentPath": path }),
        }
    }

    /// The source a task's input names.
    pub fn of(input: &serde_json::Value) -> Option<Self> {
        let text = |key: &str| input.get(key).and_then(serde_json::Value::as_str).map(str::to_owned);
        if let Some(csv) = text("csv") {
            Some(Self::Pasted(csv))
        } else if let Some(id) = text("fileId") {
            hearth_protocol::ids::FileId::parse(id).ok().map(Self::File)
        } else {
            text("documentPath").map(Self::Document)
        }
    }

    /// Whether the source can be read now (a pasted statement always can): said to the model
    /// in its reply rather than later as a failed task.
    pub async fn check(&self, files: &crate::files::FileStore, store: &crate::store::Store) -> Result<(), String> {
        match self {
            Self::Pasted(_) => Ok(()),
            Self::File(id) => files.read(id.as_str()).await.map(|_| ()).map_err(|err| format!("That file cannot be read: {err}")),
            Self::Document(path) => match store.doc_text_at(path).await {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err(format!(
                    "{path} is not an indexed file of your document folders; use a path search_documents gives (Settings → Documents adds folders)."
                )),
                Err(err) => Err(format!("The document index could not be read ({err}); try again.")),
            },
        }
    }
}

/// A bank statement to try Hearth's finance task on (the sample agent's "summarize this CSV").
pub const SAMPLE_STATEMENT: &str = include_str!("finance_data/sample_statement.csv");

/// The most characters of CSV read.
pub const MAX_CSV_CHARS: usize = 500_000;
/// The most characters of a category a finance task's result sentence repeats.
const MAX_CATEGORY_SHOWN: usize = 40;

/// The most rows (transactions) read.
pub const MAX_ROWS: usize = 5_000;

/// One transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// When.
    pub date: NaiveDate,
    /// What.
    pub description: String,
    /// Signed: income positive, spending negative.
    pub amount_cents: i64,
    /// `Uncategorized` when the row has none.
    pub category: String,
}

/// What a statement adds up to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The sum of the positive amounts.
    pub income_cents: i64,
    /// The sum of the negative amounts, as a positive number.
    pub spending_cents: i64,
    /// Income less spending.
    pub saved_cents: i64,
    /// Transactions.
    pub count: usize,
    /// Spending by category, largest first (then by name).
    pub categories: Vec<(String, i64)>,
    /// Spending by month (`YYYY-MM`), in order.
    pub months: Vec<(String, i64)>,
    /// The first and last day, when there is any row.
    pub period: Option<(NaiveDate, NaiveDate)>,
}

/// Why a statement was refused. Each says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FinanceError {
    /// Over [`MAX_CSV_CHARS`].
    #[error("the CSV has {0} characters; at most 500,000 are read — split it by period")]
    TooLong(usize),
    /// Over [`MAX_ROWS`].
    #[error("the CSV has more than 5,000 rows; split it by period")]
    TooManyRows,
    /// A required column is missing.
    #[error("the CSV has no {0:?} column; it needs date, description and amount (category is optional)")]
    MissingColumn(&'static str),
    /// A row the CSV reader could not read.
    #[error("row {row}: {why}")]
    Unreadable {
        /// 1-based, the header being row 1.
        row: u64,
        /// The reader's words.
        why: String,
    },
    /// A date not in ISO form.
    #[error("row {row}: {value:?} is not a date as YYYY-MM-DD")]
    BadDate {
        /// 1-based.
        row: u64,
        /// What it said (cut).
        value: String,
    },
    /// An amount that is not a plain decimal with at most two places.
    #[error("row {row}: {value:?} is not an amount like -12.34 (digits, a point, at most two decimals, no thousands separators)")]
    BadAmount {
        /// 1-based.
        row: u64,
        /// What it said (cut).
        value: String,
    },
    /// A sum past what 64-bit cents hold.
    #[error("the amounts add up past what Hearth can count")]
    Overflow,
}

/// Reads a statement.
pub fn parse_statement(text: &str) -> Result<Vec<Transaction>, FinanceError> {
    let chars = text.chars().count();
    if chars > MAX_CSV_CHARS {
        return Err(FinanceError::TooLong(chars));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| FinanceError::Unreadable { row: 1, why: e.to_string() })?.clone();
    let column = |name: &'static str| headers.iter().position(|h| h.eq_ignore_ascii_case(name));
    let date = column("date").ok_or(FinanceError::MissingColumn("date"))?;
    let description = column("description").ok_or(FinanceError::MissingColumn("description"))?;
    let amount = column("amount").ok_or(FinanceError::MissingColumn("amount"))?;
    let category = column("category");
    let mut rows = Vec::new();
    for record in reader.records() {
        if rows.len() == MAX_ROWS {
            return Err(FinanceError::TooManyRows);
        }
        let row = u64::try_from(rows.len()).unwrap_or(u64::MAX).saturating_add(2);
        let record = record.map_err(|e| FinanceError::Unreadable { row, why: e.to_string() })?;
        let field = |i: usize| record.get(i).unwrap_or_default();
        let cut = |s: &str| s.chars().take(40).collect::<String>();
        let day = NaiveDate::parse_from_str(field(date), "%Y-%m-%d").map_err(|_| FinanceError::BadDate { row, value: cut(field(date)) })?;
        let cents = cents(field(amount)).ok_or_else(|| FinanceError::BadAmount { row, value: cut(field(amount)) })?;
        let category = category.map(field).filter(|c| !c.is_empty()).unwrap_or("Uncategorized");
        rows.push(Transaction {
            date: day,
            description: field(description).to_owned(),
            amount_cents: cents,
            category: category.to_owned(),
        });
    }
    Ok(rows)
}

/// `-12.34`, `+5`, `0.1` → cents; anything else (thousands separators, three decimals, `1e3`,
/// a currency sign) is `None`.
fn cents(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || !all_digits(whole)
        || !all_digits(fraction)
        || fraction.len() > 2
        || (digits.contains('.') && fraction.is_empty())
    {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let fraction: i64 = if fraction.is_empty() { 0 } else { format!("{fraction:0<2}").parse().ok()? };
    let value = whole.checked_mul(100)?.checked_add(fraction)?;
    Some(if negative { -value } else { value })
}

/// Adds a statement up.
pub fn summarize(rows: &[Transaction]) -> Result<Summary, FinanceError> {
    let mut income: i64 = 0;
    let mut spending: i64 = 0;
    let mut categories: BTreeMap<&str, i64> = BTreeMap::new();
    let mut months: BTreeMap<String, i64> = BTreeMap::new();
    for row in rows {
        if row.amount_cents >= 0 {
            income = income.checked_add(row.amount_cents).ok_or(FinanceError::Overflow)?;
        } else {
            let spent = row.amount_cents.checked_neg().ok_or(FinanceError::Overflow)?;
            spending = spending.checked_add(spent).ok_or(FinanceError::Overflow)?;
            let by_category = categories.entry(row.category.as_str()).or_default();
            *by_category = by_category.checked_add(spent).ok_or(FinanceError::Overflow)?;
            let by_month = months.entry(row.date.format("%Y-%m").to_string()).or_default();
            *by_month = by_month.checked_add(spent).ok_or(FinanceError::Overflow)?;
        }
    }
    let mut categories: Vec<(String, i64)> = categories.into_iter().map(|(c, v)| (c.to_owned(), v)).collect();
    categories.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let period = rows.iter().map(|r| r.date).min().zip(rows.iter().map(|r| r.date).max());
    Ok(Summary {
        income_cents: income,
        spending_cents: spending,
        saved_cents: income.checked_sub(spending).ok_or(FinanceError::Overflow)?,
        count: rows.len(),
        categories,
        months: months.into_iter().collect(),
        period,
    })
}

impl Summary {
    /// The wire view.
    pub fn view(&self) -> hearth_protocol::finance::FinanceSummary {
        use hearth_protocol::finance::{FinanceSummary, Total};
        let totals = |list: &[(String, i64)]| list.iter().map(|(name, cents)| Total { name: name.clone(), cents: *cents }).collect();
        FinanceSummary {
            income_cents: self.income_cents,
            spending_cents: self.spending_cents,
            saved_cents: self.saved_cents,
            count: self.count,
            categories: totals(&self.categories),
            months: totals(&self.months),
            first_day: self.period.map(|(first, _)| first.to_string()),
            last_day: self.period.map(|(_, last)| last.to_string()),
        }
    }

    /// One paragraph for the owner.
    pub fn sentence(&self) -> String {
        use hearth_protocol::finance::money;
        let period = self.period.map_or_else(String::new, |(first, last)| format!(" from {first} to {last}"));
        // The category is the statement's own word and this sentence becomes a notice: it is
        // quoted and cut short, so a statement cannot write a paragraph in Hearth's voice.
        let top = self.categories.first().map_or_else(String::new, |(name, cents)| {
            let name: String = name.chars().take(MAX_CATEGORY_SHOWN).collect();
            format!(" The most went to \u{201c}{name}\u{201d} ({}).", money(*cents))
        });
        format!(
            "{} transactions{period}: income {}, spending {}, saved {}.{top}",
            self.count,
            money(self.income_cents),
            money(self.spending_cents),
            money(self.saved_cents)
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn quoted_fields_bom_crlf_any_column_order_and_negative_amounts() {
        let csv = "\u{feff}Amount,CATEGORY,Date,Description\r\n\
                   -12.50,Food,2026-11-02,\"Bakery, the one on Main St\"\r\n\
                   2500,Salary,2026-11-01,\"November\nsalary\"\r\n\
                   -3,,2026-12-01,Bus\r\n";
        let rows = parse_statement(csv).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].description, "Bakery, the one on Main St");
        assert_eq!(rows[0].amount_cents, -1250);
        assert_eq!(rows[1].description, "November\nsalary");
        assert_eq!(rows[1].amount_cents, 250_000);
        assert_eq!(rows[2].category, "Uncategorized");
        let summary = summarize(&rows).unwrap();
        assert_eq!((summary.income_cents, summary.spending_cents, summary.saved_cents, summary.count), (250_000, 1550, 248_450, 3));
        assert_eq!(summary.categories, [("Food".to_owned(), 1250), ("Uncategorized".to_owned(), 300)]);
        assert_eq!(summary.months, [("2026-11".to_owned(), 1250), ("2026-12".to_owned(), 300)]);
        assert_eq!(summary.period, Some((NaiveDate::from_ymd_opt(2026, 11, 1).unwrap(), NaiveDate::from_ymd_opt(2026, 12, 1).unwrap())));
    }

    #[test]
    fn sums_floating_point_gets_wrong_are_exact_in_cents() {
        assert!(std::hint::black_box(0.10_f64) + 0.20_f64 != 0.30_f64, "the trap this avoids");
        let rows = parse_statement("date,description,amount\n2026-11-01,a,-0.10\n2026-11-01,b,-0.20\n").unwrap();
        assert_eq!(summarize(&rows).unwrap().spending_cents, 30);
        let many: String = std::iter::once("date,description,amount\n".to_owned())
            .chain((0..1000).map(|i| format!("2026-11-01,item {i},0.01\n")))
            .collect();
        assert_eq!(summarize(&parse_statement(&many).unwrap()).unwrap().income_cents, 1000);
    }

    #[test]
    fn amounts_other_than_plain_decimals_are_refused_with_their_row() {
        for bad in ["1,000.00", "12.345", "1e3", "$5", "", "-", ".5", "5.", "--1", "0x10"] {
            let csv = format!("date,description,amount\n2026-11-01,x,\"{bad}\"\n");
            let err = parse_statement(&csv).unwrap_err();
            assert!(matches!(err, FinanceError::BadAmount { row: 2, .. }), "{bad:?}: {err}");
        }
        assert_eq!(cents("+7"), Some(700));
        assert_eq!(cents("0.5"), Some(50));
        assert_eq!(cents("-0.05"), Some(-5));
    }

    #[test]
    fn bad_dates_missing_columns_and_limits_say_what_to_change() {
        let err = parse_statement("date,description,amount\n01/11/2026,x,1\n").unwrap_err();
        assert!(err.to_string().contains("YYYY-MM-DD"), "{err}");
        let err = parse_statement("when,description,amount\n").unwrap_err();
        assert_eq!(err, FinanceError::MissingColumn("date"));
        let rows: String = std::iter::once("date,description,amount\n".to_owned())
            .chain((0..MAX_ROWS + 1).map(|_| "2026-11-01,x,1\n".to_owned()))
            .collect();
        assert_eq!(parse_statement(&rows).unwrap_err(), FinanceError::TooManyRows, "5,001 rows");
        let exactly: String =
            std::iter::once("date,description,amount\n".to_owned()).chain((0..MAX_ROWS).map(|_| "2026-11-01,x,1\n".to_owned())).collect();
        assert_eq!(parse_statement(&exactly).unwrap().len(), MAX_ROWS, "5,000 rows are fine");
        let long = "x".repeat(MAX_CSV_CHARS + 1);
        assert_eq!(parse_statement(&long).unwrap_err(), FinanceError::TooLong(MAX_CSV_CHARS + 1));
    }
}

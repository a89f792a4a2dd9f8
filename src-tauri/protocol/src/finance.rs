//! A finance task's result: what a bank statement adds up to, in integer cents.

use serde::{Deserialize, Serialize};

/// Spending in one category or one month.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Total {
    /// The category, or the month as `YYYY-MM`.
    pub name: String,
    /// Spent, in cents (positive).
    pub cents: i64,
}

/// What a statement adds up to (the tracker a finance task keeps, and the chart shows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FinanceSummary {
    /// Sum of the positive amounts.
    pub income_cents: i64,
    /// Sum of the negative amounts, as a positive number.
    pub spending_cents: i64,
    /// Income less spending.
    pub saved_cents: i64,
    /// Transactions.
    pub count: usize,
    /// Spending by category, largest first.
    pub categories: Vec<Total>,
    /// Spending by month, in order.
    pub months: Vec<Total>,
    /// The first day, `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_day: Option<String>,
    /// The last day, `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_day: Option<String>,
}

/// The most characters of a statement (the finance task reads no more).
pub const MAX_STATEMENT_CHARS: usize = 500_000;

/// `finance_start`: the owner pastes a statement in Activity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FinanceStartParams {
    /// The statement as CSV (date, description, amount, optional category).
    pub csv: String,
}

impl FinanceStartParams {
    /// Some text, within the bound.
    pub fn validate(&self) -> Result<(), crate::error::IpcError> {
        if self.csv.trim().is_empty() {
            return Err(crate::error::IpcError::invalid("Paste the statement's CSV first."));
        }
        if self.csv.chars().count() > MAX_STATEMENT_CHARS {
            return Err(crate::error::IpcError::invalid("The statement is longer than 500,000 characters; split it by period."));
        }
        Ok(())
    }
}

/// Cents as money for the screen: `-1250` → `-12.50`.
pub fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_read_as_money() {
        assert_eq!(money(-1250), "-12.50");
        assert_eq!(money(5), "0.05");
        assert_eq!(money(0), "0.00");
        assert_eq!(money(i64::MIN), "-92233720368547758.08");
    }
}

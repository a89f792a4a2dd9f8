//! Reading the owner's answer to "which values?" as field values.

use hearth_protocol::pdf::{FieldKind, FieldValue, FieldValues, PdfField};

/// Parses `answer` — a JSON object, or one `Field name: value` per line — against the form's
/// fields. Names match without regard to case; checkboxes take yes/no. Errors name the line.
pub fn parse_answer(answer: &str, fields: &[PdfField]) -> Result<FieldValues, String> {
    if let Ok(values) = serde_json::from_str::<FieldValues>(answer.trim()) {
        return check(values, fields);
    }
    let mut values = FieldValues::new();
    for (number, line) in answer.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("Line {number} has no ':'. Write one field per line, like `Student name: Ada`."));
        };
        let (name, value) = (name.trim(), value.trim());
        let field = fields
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("Line {number}: this form has no field {name:?}. Its fields: {}.", names(fields)))?;
        let value = match field.kind {
            FieldKind::Checkbox => match value.to_ascii_lowercase().as_str() {
                "yes" | "y" | "true" | "x" | "checked" | "on" | "1" => FieldValue::Checked(true),
                "no" | "n" | "false" | "unchecked" | "off" | "0" | "" => FieldValue::Checked(false),
                _ => return Err(format!("Line {number}: {} is a checkbox; answer yes or no.", field.name)),
            },
            _ => FieldValue::Text(value.to_owned()),
        };
        values.insert(field.name.clone(), value);
    }
    check(values, fields)
}

fn check(values: FieldValues, fields: &[PdfField]) -> Result<FieldValues, String> {
    if values.is_empty() {
        return Err(format!("No values were given. The form's fields: {}.", names(fields)));
    }
    Ok(values)
}

fn names(fields: &[PdfField]) -> String {
    fields.iter().filter(|f| f.kind.is_fillable()).map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn field(name: &str, kind: FieldKind) -> PdfField {
        PdfField { name: name.into(), kind, page: 1, value: None, options: vec![] }
    }

    #[test]
    fn lines_and_json_both_work() {
        let fields = [field("student_name", FieldKind::Text), field("consent", FieldKind::Checkbox)];
        let values = parse_answer("Student_Name: Ada Lovelace\nconsent: yes\n", &fields).unwrap();
        assert_eq!(values.get("student_name"), Some(&FieldValue::Text("Ada Lovelace".into())));
        assert_eq!(values.get("consent"), Some(&FieldValue::Checked(true)));
        let json = parse_answer(r#"{"consent": false}"#, &fields).unwrap();
        assert_eq!(json.get("consent"), Some(&FieldValue::Checked(false)));
    }

    #[test]
    fn mistakes_name_the_line() {
        let fields = [field("consent", FieldKind::Checkbox)];
        assert!(parse_answer("nope", &fields).unwrap_err().starts_with("Line 1"));
        assert!(parse_answer("age: 9", &fields).unwrap_err().contains("no field \"age\""));
        assert!(parse_answer("consent: maybe", &fields).unwrap_err().contains("yes or no"));
        assert!(parse_answer("  ", &fields).unwrap_err().contains("No values"));
    }
}

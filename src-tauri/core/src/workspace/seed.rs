//! The sample workspace written on first start, so the offline app has something real to
//! read: a mailbox with a PDF permission form attached, and a calendar for this week.

use std::path::Path;

use chrono::{Datelike, Duration, Local, NaiveDate, NaiveTime, TimeZone};

use crate::error::{CoreError, Result};
use crate::store::workspace::{CalendarEvent, MailAttachment, MailMessage};
use crate::store::{Store, now_ms};

/// The sample permission form (2 pages, AcroForm text fields and a checkbox).
pub const PERMISSION_FORM_PDF: &[u8] = include_bytes!("../../assets/permission-form.pdf");

/// File name of the seeded form.
pub const PERMISSION_FORM_NAME: &str = "permission-form.pdf";

/// Seeds the workspace unless it was seeded before. Returns whether it seeded now.
pub async fn seed_if_empty(store: &Store, attachments_dir: &Path) -> Result<bool> {
    if store.workspace_seeded_at().await?.is_some() {
        return Ok(false);
    }
    let now = now_ms();
    let messages = sample_mail(now);
    let attachment = write_permission_form(attachments_dir)?;
    let events = sample_calendar(Local::now().date_naive());
    store.seed_workspace(&messages, &[attachment], &events, now).await?;
    Ok(true)
}

fn write_permission_form(dir: &Path) -> Result<MailAttachment> {
    // Private like the owner's files: a 0700 folder, the file 0600, written atomically.
    Store::create_private_dir(dir)?;
    let path = dir.join("att-permission-form.pdf");
    crate::files::write_private(&path, PERMISSION_FORM_PDF).map_err(|source| CoreError::DataDir { path: path.clone(), source })?;
    Ok(MailAttachment {
        id: "att-permission-form".into(),
        message_id: "msg-school-1".into(),
        filename: PERMISSION_FORM_NAME.into(),
        mime_type: "application/pdf".into(),
        size: PERMISSION_FORM_PDF.len() as i64,
        path: path.to_string_lossy().into_owned(),
    })
}

fn sample_mail(now: i64) -> Vec<MailMessage> {
    let hour = 3_600_000;
    let msg = |id: &str, thread: &str, from: &str, subject: &str, body: &str, hours_ago: i64| MailMessage {
        id: id.into(),
        thread_id: thread.into(),
        from: from.into(),
        to: "owner@hearth.local".into(),
        subject: subject.into(),
        body: body.into(),
        sent_at: now - hours_ago * hour,
    };
    vec![
        msg(
            "msg-school-1",
            "thr-school",
            "Ms. Alvarez <alvarez@riverside-school.example>",
            "Community visit – permission form",
            "Hello,\n\nNext Thursday our class visits the community garden. Please fill in the attached permission form and send it back by Wednesday.\n\nThank you,\nMs. Alvarez",
            30,
        ),
        msg(
            "msg-school-2",
            "thr-school",
            "Ms. Alvarez <alvarez@riverside-school.example>",
            "Re: Community visit – permission form",
            "A reminder that forms are due Wednesday. An emergency phone number is required.",
            6,
        ),
        msg(
            "msg-dentist-1",
            "thr-dentist",
            "Bright Smile Dental <frontdesk@brightsmile.example>",
            "Appointment reminder",
            "This is a reminder of your check-up on Friday at 16:00. Reply to reschedule.",
            50,
        ),
        msg(
            "msg-dentist-2",
            "thr-dentist",
            "Bright Smile Dental <frontdesk@brightsmile.example>",
            "Re: Appointment reminder",
            "Please arrive ten minutes early to update your insurance details.",
            20,
        ),
        msg(
            "msg-trip-1",
            "thr-trip",
            "Sam Okafor <sam@okafor.example>",
            "Weekend hiking trip",
            "Are we still on for Saturday? I was thinking we leave at 8 and take the ridge trail.",
            12,
        ),
        msg(
            "msg-trip-2",
            "thr-trip",
            "Sam Okafor <sam@okafor.example>",
            "Re: Weekend hiking trip",
            "I booked the cabin for Saturday night. Bring the stove!",
            3,
        ),
        msg(
            "msg-bank-1",
            "thr-bank",
            "Northbank <no-reply@northbank.example>",
            "Your monthly statement is ready",
            "Your statement for last month is available in online banking.",
            72,
        ),
    ]
}

/// Six events spread over the current week (Monday first) and one later today.
pub fn sample_calendar(today: NaiveDate) -> Vec<CalendarEvent> {
    let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
    let at = |day: NaiveDate, h: u32, m: u32| -> i64 {
        let naive = day.and_time(NaiveTime::from_hms_opt(h, m, 0).unwrap_or(NaiveTime::MIN));
        Local.from_local_datetime(&naive).earliest().map_or_else(|| naive.and_utc().timestamp_millis(), |t| t.timestamp_millis())
    };
    let event = |id: &str, title: &str, day_offset: i64, (h, m): (u32, u32), minutes: i64, location: &str| {
        let day = monday + Duration::days(day_offset);
        let starts_at = at(day, h, m);
        CalendarEvent {
            id: id.into(),
            calendar_id: "primary".into(),
            title: title.into(),
            starts_at,
            ends_at: starts_at + minutes * 60_000,
            location: location.into(),
            description: String::new(),
        }
    };
    let today_offset = i64::from(today.weekday().num_days_from_monday());
    vec![
        event("evt-standup", "Team stand-up", 0, (9, 30), 15, "Video call"),
        event("evt-lunch", "Lunch with Priya", 1, (12, 30), 60, "Café Lumen"),
        event("evt-yoga", "Yoga class", 2, (18, 0), 60, "Studio 4"),
        event("evt-garden", "Class visit to the community garden", 3, (9, 0), 180, "Community garden"),
        event("evt-dentist", "Dentist check-up", 4, (16, 0), 45, "Bright Smile Dental"),
        event("evt-hike", "Hiking trip with Sam", 5, (8, 0), 480, "Ridge trail"),
        event("evt-today", "Review the week's plans", today_offset, (17, 0), 30, "Home"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_falls_in_the_week_of_today() {
        for day in 1..=28 {
            let today = NaiveDate::from_ymd_opt(2026, 3, day).unwrap_or(NaiveDate::MIN);
            let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
            let week_start = Local.from_local_datetime(&monday.and_time(NaiveTime::MIN)).earliest().map(|t| t.timestamp_millis());
            let events = sample_calendar(today);
            assert!(events.len() >= 5);
            let Some(start) = week_start else { continue };
            for e in &events {
                assert!(e.starts_at >= start && e.starts_at < start + 7 * 86_400_000 + 3_600_000, "{e:?} on {today}");
                assert!(e.ends_at > e.starts_at);
            }
        }
    }

    #[test]
    fn the_seeded_form_is_a_pdf() {
        assert!(PERMISSION_FORM_PDF.starts_with(b"%PDF-"));
        let threads: std::collections::BTreeSet<_> = sample_mail(0).into_iter().map(|m| m.thread_id).collect();
        assert!(threads.len() >= 3);
        assert!(sample_mail(0).len() >= 6);
    }
}

//! Human-written durations for the job scheduler's config: "90s", "1h30m", "2d".
//!
//! A duration is one or more `<number><unit>` groups with no spaces between them;
//! the groups add up ("1h30m" is 5400 seconds).

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The text is empty (or only whitespace).
    Empty,
    /// A unit with no number before it, at this byte offset.
    MissingNumber(usize),
    /// A number with no unit after it, at this byte offset.
    MissingUnit(usize),
    UnknownUnit(String),
    Overflow,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty duration"),
            ParseError::MissingNumber(at) => write!(f, "expected a number at offset {at}"),
            ParseError::MissingUnit(at) => write!(f, "expected a unit at offset {at}"),
            ParseError::UnknownUnit(u) => write!(f, "unknown unit {u:?} (use ms, s, m, h, d or w)"),
            ParseError::Overflow => write!(f, "duration too large"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Milliseconds in one `unit`.
fn unit_millis(unit: &str) -> Option<u64> {
    match unit {
        "ms" => Some(1),
        "s" => Some(1_000),
        "m" => Some(60_000),
        "h" => Some(3_600_000),
        "d" => Some(86_400_000),
        "w" => Some(604_800_000),
        _ => None,
    }
}

/// Parse `text` ("250ms", "45s", "1h30m", "2w") into a `Duration`.
pub fn parse_duration(text: &str) -> Result<Duration, ParseError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(ParseError::Empty);
    }
    let bytes = s.as_bytes();
    let mut total: u64 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(ParseError::MissingNumber(start));
        }
        let n: u64 = s[start..i].parse().map_err(|_| ParseError::Overflow)?;
        let unit_start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        if i == unit_start {
            return Err(ParseError::MissingUnit(unit_start));
        }
        let unit = &s[unit_start..i];
        let per = unit_millis(unit).ok_or_else(|| ParseError::UnknownUnit(unit.to_string()))?;
        total = n
            .checked_mul(per)
            .and_then(|v| total.checked_add(v))
            .ok_or(ParseError::Overflow)?;
    }
    Ok(Duration::from_millis(total))
}

/// The shortest text `parse_duration` reads back as `d` (whole seconds).
pub fn format_duration(d: Duration) -> String {
    let mut secs = d.as_secs();
    if secs == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    for (unit, size) in [("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] {
        if secs >= size {
            out.push_str(&format!("{}{}", secs / size, unit));
            secs %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_add_up() {
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse_duration(" 2d "), Ok(Duration::from_secs(172_800)));
    }

    #[test]
    fn errors() {
        assert_eq!(parse_duration(""), Err(ParseError::Empty));
        assert_eq!(parse_duration("h"), Err(ParseError::MissingNumber(0)));
        assert_eq!(parse_duration("10"), Err(ParseError::MissingUnit(2)));
        assert_eq!(parse_duration("3y"), Err(ParseError::UnknownUnit("y".into())));
    }

    #[test]
    fn round_trip() {
        for text in ["45s", "1h30m", "1w2d", "0s"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
    }
}

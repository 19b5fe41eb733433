//! A small `key = value` configuration format for the collector agent.
//!
//! ```text
//! # comments start with '#'
//! name = "edge-01"
//!
//! [server]
//! port = 9100
//! timeout = 45
//! ```
//!
//! A `[section]` header prefixes the keys after it with `section.`, so the
//! example gives the keys `name`, `server.port` and `server.timeout`.

use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// A line that is neither blank, a comment, a section nor `key = value`.
    MissingEquals { line: usize },
    /// `= value` with nothing before the `=`.
    EmptyKey { line: usize },
    /// The same key twice (after section prefixes are applied).
    DuplicateKey { line: usize, key: String },
    /// A `[` line without its `]`, or `[]`.
    BadSection { line: usize },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::MissingEquals { line } => write!(f, "line {line}: expected `key = value`"),
            ParseError::EmptyKey { line } => write!(f, "line {line}: empty key"),
            ParseError::DuplicateKey { line, key } => write!(f, "line {line}: duplicate key `{key}`"),
            ParseError::BadSection { line } => write!(f, "line {line}: malformed section header"),
        }
    }
}

impl std::error::Error for ParseError {}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Config {
    values: BTreeMap<String, String>,
}

impl Config {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    pub fn get_or<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.get(key).unwrap_or(default)
    }

    pub fn get_bool(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        }
    }

    /// The port the agent listens on.
    pub fn port(&self) -> u16 {
        self.get("server.port").unwrap().parse().unwrap()
    }

    /// Seconds to wait for a scrape before giving up; 30 when unset or invalid.
    pub fn timeout_secs(&self) -> u64 {
        self.get("server.timeout")
            .and_then(|v| v.parse().ok())
            .unwrap_or(30)
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }
}

/// Drop a trailing `# comment`, unless the `#` is inside double quotes.
fn strip_comment(line: &str) -> &str {
    let mut in_quotes = false;
    for (i, ch) in line.char_indices() {
        match ch {
            '"' => in_quotes = !in_quotes,
            '#' if !in_quotes => return &line[..i],
            _ => {}
        }
    }
    line
}

fn unquote(value: &str) -> &str {
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        &value[1..value.len() - 1]
    } else {
        value
    }
}

/// Parse a whole configuration file.
pub fn parse(text: &str) -> Result<Config, ParseError> {
    let mut values = BTreeMap::new();
    let mut section = String::new();
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            if !line.ends_with(']') || line.len() < 3 {
                return Err(ParseError::BadSection { line: line_no });
            }
            section = line[1..line.len() - 1].trim().to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(ParseError::MissingEquals { line: line_no });
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(ParseError::EmptyKey { line: line_no });
        }
        let full = if section.is_empty() {
            key.to_string()
        } else {
            format!("{section}.{key}")
        };
        if values.contains_key(&full) {
            return Err(ParseError::DuplicateKey { line: line_no, key: full });
        }
        values.insert(full, unquote(value.trim()).to_string());
    }
    Ok(Config { values })
}

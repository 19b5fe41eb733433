//! Semantic versions for the plugin registry (semver 2.0.0): `MAJOR.MINOR.PATCH`,
//! an optional pre-release after `-` (dot-separated identifiers, e.g. `rc.1`) and
//! optional build metadata after `+` (e.g. `+git.3f2a`).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The part before `-`/`+` is not three dot-separated numbers.
    BadCore(String),
    /// A numeric part with a leading zero, such as `01`.
    LeadingZero(String),
    /// An empty identifier, or one with characters other than `[0-9A-Za-z-]`.
    BadIdentifier(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::BadCore(s) => write!(f, "expected MAJOR.MINOR.PATCH, got {s:?}"),
            ParseError::LeadingZero(s) => write!(f, "leading zero in {s:?}"),
            ParseError::BadIdentifier(s) => write!(f, "bad identifier {s:?}"),
        }
    }
}

/// One dot-separated part of a pre-release tag: `rc`, `1`, `beta2`.
/// Numeric identifiers order before alphanumeric ones (variant order matters).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Identifier {
    Numeric(u64),
    Alpha(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Vec<Identifier>,
    pub build: Vec<String>,
}

fn parse_number(part: &str) -> Result<u64, ParseError> {
    if part.len() > 1 && part.starts_with('0') {
        return Err(ParseError::LeadingZero(part.to_string()));
    }
    part.parse().map_err(|_| ParseError::BadCore(part.to_string()))
}

fn check_identifier(part: &str) -> Result<(), ParseError> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(ParseError::BadIdentifier(part.to_string()));
    }
    Ok(())
}

fn parse_pre(text: &str) -> Result<Vec<Identifier>, ParseError> {
    let mut out = Vec::new();
    for part in text.split('.') {
        check_identifier(part)?;
        out.push(match part.bytes().all(|b| b.is_ascii_digit()) {
            true => Identifier::Numeric(parse_number(part)?),
            false => Identifier::Alpha(part.to_string()),
        });
    }
    Ok(out)
}

impl FromStr for Version {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Version, ParseError> {
        let text = text.trim().strip_prefix('v').unwrap_or(text.trim());
        let (rest, build) = text.split_once('+').map_or((text, None), |(r, b)| (r, Some(b)));
        let (core, pre) = rest.split_once('-').map_or((rest, None), |(c, p)| (c, Some(p)));
        let nums: Vec<&str> = core.split('.').collect();
        if nums.len() != 3 {
            return Err(ParseError::BadCore(core.to_string()));
        }
        let (major, minor, patch) = (parse_number(nums[0])?, parse_number(nums[1])?, parse_number(nums[2])?);
        let pre = pre.map(parse_pre).transpose()?.unwrap_or_default();
        let mut version = Version { major, minor, patch, pre, build: Vec::new() };
        for part in build.map(|b| b.split('.')).into_iter().flatten() {
            check_identifier(part)?;
            version.build.push(part.to_string());
        }
        Ok(version)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, part) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match part {
                Identifier::Numeric(n) => write!(f, "{n}")?,
                Identifier::Alpha(s) => f.write_str(s)?,
            }
        }
        if !self.build.is_empty() {
            write!(f, "+{}", self.build.join("."))?;
        }
        Ok(())
    }
}

/// Precedence: major, then minor, then patch, then the pre-release (a version
/// with one orders before the same version without). Build metadata never counts.
impl Ord for Version {
    fn cmp(&self, other: &Version) -> Ordering {
        self.major
            .cmp(&other.major)
            .then(self.minor.cmp(&other.minor))
            .then(self.patch.cmp(&other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&other.pre),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Version) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The highest version in `versions`; pre-releases only count with `allow_pre`.
pub fn latest(versions: &[Version], allow_pre: bool) -> Option<&Version> {
    versions.iter().filter(|v| allow_pre || v.pre.is_empty()).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        text.parse().unwrap()
    }

    #[test]
    fn parses_and_prints() {
        let ver = v("v1.4.0-beta.2+git.3f2a");
        assert_eq!(ver.pre, vec![Identifier::Alpha("beta".into()), Identifier::Numeric(2)]);
        assert_eq!(ver.to_string(), "1.4.0-beta.2+git.3f2a");
        assert_eq!("1.2".parse::<Version>(), Err(ParseError::BadCore("1.2".into())));
        assert_eq!("1.02.0".parse::<Version>(), Err(ParseError::LeadingZero("02".into())));
        assert_eq!("1.0.0-rc..1".parse::<Version>(), Err(ParseError::BadIdentifier("".into())));
    }

    #[test]
    fn orders_and_picks_latest() {
        assert!(v("1.9.0") < v("1.10.0") && v("2.0.0") > v("1.99.99"));
        assert_eq!(v("1.0.0+a").cmp(&v("1.0.0+b")), Ordering::Equal);
        let all = [v("1.1.0"), v("1.3.0-alpha"), v("1.2.5")];
        assert_eq!(latest(&all, false), Some(&all[2]));
        assert_eq!(latest(&all, true), Some(&all[1]));
        assert_eq!(latest(&[], true), None);
    }
}

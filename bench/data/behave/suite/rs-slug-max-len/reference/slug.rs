//! URL slugs for the blog: "Hello, World!" becomes "hello-world".
//!
//! Slugs are lowercase ASCII letters and digits joined by single dashes.
//! Common Latin accents are folded ("Crème brûlée" -> "creme-brulee"); any
//! other character separates words.

use std::collections::HashSet;

/// Fold a few accented Latin letters to their ASCII base letter.
fn fold_accent(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' => 'A',
        'ç' => 'c',
        'Ç' => 'C',
        'è' | 'é' | 'ê' | 'ë' => 'e',
        'È' | 'É' | 'Ê' | 'Ë' => 'E',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        _ => c,
    }
}

/// The slug of `title`, at most `max_len` characters long.
pub fn slugify(title: &str, max_len: usize) -> String {
    let mut slug = String::with_capacity(title.len());
    let mut pending_dash = false;
    for ch in title.chars().map(fold_accent) {
        if ch.is_ascii_alphanumeric() {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push(ch.to_ascii_lowercase());
        } else {
            pending_dash = true;
        }
    }
    slug.truncate(max_len);
    while slug.ends_with('-') {
        slug.pop();
    }
    slug
}

/// A slug for `title` that is not in `taken`: the plain slug, or the slug
/// with "-2", "-3"... appended. An empty slug becomes "post".
pub fn unique_slug(title: &str, taken: &HashSet<String>) -> String {
    let mut base = slugify(title, 60);
    if base.is_empty() {
        base = String::from("post");
    }
    if !taken.contains(&base) {
        return base;
    }
    let mut n = 2;
    loop {
        let candidate = format!("{base}-{n}");
        if !taken.contains(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

/// The path of a post published on `date` (year, month, day):
/// "/2024/03/09/hello-world/".
pub fn post_path(date: (u16, u8, u8), title: &str) -> String {
    let (year, month, day) = date;
    format!("/{year:04}/{month:02}/{day:02}/{}/", slugify(title, 60))
}

/// Whether `s` is a well-formed slug.
pub fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

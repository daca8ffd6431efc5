//! The error of a parameter the user gave: the key it sits under and what is wrong with its
//! value. At the bottom of the layers, so that each mechanism, congestion control and
//! workload checks its own table and words its own refusals (the scenario layer only
//! gathers them).

use std::fmt;

/// A user error in a scenario: which key, and what is wrong with its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}
impl std::error::Error for ScenarioError {}

/// The error for `key` (its dotted path in the scenario file), every overlong word of it
/// cut ([`cut_long_words`]).
pub(crate) fn err(key: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError { key: cut_long_words(&key.into()), message: cut_long_words(&message.into()) }
}

/// Most characters of one word (a run without white space: a value, a key, a name) an
/// error quotes whole. An error echoes what it refuses, and a value of megabytes echoed
/// back made one line of five million characters.
pub const LONGEST_WORD: usize = 120;

/// `text` with each word longer than [`LONGEST_WORD`] cut to its first 80 and last 20
/// characters around the count of those left out.
pub fn cut_long_words(text: &str) -> String {
    if text.chars().count() <= LONGEST_WORD {
        return text.to_string();
    }
    let mut out = String::new();
    for piece in text.split_inclusive(char::is_whitespace) {
        let word = piece.trim_end_matches(char::is_whitespace);
        let n = word.chars().count();
        if n <= LONGEST_WORD {
            out.push_str(piece);
            continue;
        }
        let head: String = word.chars().take(80).collect();
        let tail: String = word.chars().skip(n - 20).collect();
        out.push_str(&format!("{head}...[{} characters]...{tail}{}", n - 100, &piece[word.len()..]));
    }
    out
}

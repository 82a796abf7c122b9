//! The name of an external chunker as a strategy: checked once, then kept as a `&'static str`
//! so that [`crate::chunking::Strategy`] stays `Copy` (each distinct name is stored once for
//! the life of the process).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// A checked external chunker name: lowercase letters, digits, `_` and `-`, starting with a
/// letter, no part between dashes empty or only digits (so that a configuration id, which
/// joins parts with `-`, still reads back). That it is no built-in strategy's name is checked
/// where a strategy is read ([`crate::chunking::Strategy`]'s `FromStr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExternalName(&'static str);

impl ExternalName {
    /// Checks `name` and keeps it.
    ///
    /// # Errors
    /// A sentence saying what is wrong with the name.
    pub fn new(name: &str) -> Result<ExternalName, String> {
        let rule = "a chunker name is lowercase letters, digits, '_' and '-', starts with a letter, and has no part between dashes that is empty or only digits";
        let starts_with_letter = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
        let chars_ok = name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        let parts_ok = name
            .split('-')
            .all(|p| !p.is_empty() && !p.chars().all(|c| c.is_ascii_digit()));
        if !(starts_with_letter && chars_ok && parts_ok) {
            return Err(format!("{name:?}: {rule}"));
        }
        static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        let mut names = NAMES
            .get_or_init(Default::default)
            .lock()
            .expect("the chunker names");
        let kept = match names.get(name) {
            Some(&kept) => kept,
            None => {
                let kept: &'static str = Box::leak(name.to_string().into_boxed_str());
                names.insert(kept);
                kept
            }
        };
        Ok(ExternalName(kept))
    }

    /// The name.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_break_an_id_are_refused() {
        for good in ["lc-recursive", "chonkie_token", "my-chunker-v2", "a"] {
            assert_eq!(ExternalName::new(good).unwrap().as_str(), good);
        }
        for bad in ["", "LC", "2fast", "lc-512", "lc--x", "lc-", "lc recursive"] {
            assert!(ExternalName::new(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn one_name_is_kept_once() {
        let a = ExternalName::new("same-name").unwrap();
        let b = ExternalName::new("same-name").unwrap();
        assert!(std::ptr::eq(a.as_str(), b.as_str()));
    }
}

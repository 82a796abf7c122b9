//! Structured-output modes learnt per model in this process: what a server refused, known at
//! once to every call, and what worked.

use std::collections::HashMap;
use std::sync::Mutex;

use super::format::ResponseFormatKind;

/// The structured-output mode known for a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FormatState {
    mode: ResponseFormatKind,
    /// True once a reply in `mode` was accepted (in this run or, through the cache file, an
    /// earlier one); false while it is only what refusals of stricter modes left.
    confirmed: bool,
}

/// The modes known per model (one client: one server).
#[derive(Debug, Default)]
pub(super) struct FormatMemory {
    map: Mutex<HashMap<String, FormatState>>,
}

impl FormatMemory {
    /// The mode known for `model`, if any.
    pub(super) fn known(&self, model: &str) -> Option<ResponseFormatKind> {
        self.map.lock().expect("lock").get(model).map(|s| s.mode)
    }

    /// Takes `mode` (which worked in an earlier run) for `model` unless something is known
    /// already; returns the mode now known.
    pub(super) fn adopt(&self, model: &str, mode: ResponseFormatKind) -> ResponseFormatKind {
        let mut map = self.map.lock().expect("lock");
        map.entry(model.to_string())
            .or_insert(FormatState {
                mode,
                confirmed: true,
            })
            .mode
    }

    /// Records at once, for every call to `model`, that the server refused `mode`: attempts
    /// admitted from now on use the next mode. A refusal of a mode that already worked says
    /// nothing about the format (a prompt over the context length, say) and is ignored.
    pub(super) fn mark_refused(&self, model: &str, mode: ResponseFormatKind) {
        let Some(next) = mode.next() else { return };
        let mut map = self.map.lock().expect("lock");
        let learnt = FormatState {
            mode: next,
            confirmed: false,
        };
        match map.get_mut(model) {
            Some(s) if s.confirmed && s.mode == mode => {}
            Some(s) if s.mode < next => *s = learnt,
            Some(_) => {}
            None => {
                map.insert(model.to_string(), learnt);
            }
        }
    }

    /// Forgets what refusals taught about `model` when no mode worked after all (every mode
    /// refused: the refusals were about something else).
    pub(super) fn forget_refusals(&self, model: &str) {
        let mut map = self.map.lock().expect("lock");
        if map.get(model).is_some_and(|s| !s.confirmed) {
            map.remove(model);
        }
    }

    /// Records that a reply in `mode` was accepted for `model`; true when that is news.
    pub(super) fn confirm(&self, model: &str, mode: ResponseFormatKind) -> bool {
        let state = FormatState {
            mode,
            confirmed: true,
        };
        self.map
            .lock()
            .expect("lock")
            .insert(model.to_string(), state)
            != Some(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ResponseFormatKind::{JsonObject, JsonSchema, Text};

    #[test]
    fn refusals_downgrade_until_a_mode_works_and_unrelated_ones_are_forgotten() {
        let m = FormatMemory::default();
        m.mark_refused("a", JsonSchema);
        assert_eq!(m.known("a"), Some(JsonObject));
        // a late refusal of the stricter mode does not move it back
        m.mark_refused("a", JsonSchema);
        assert_eq!(m.known("a"), Some(JsonObject));
        assert!(m.confirm("a", JsonObject));
        assert!(!m.confirm("a", JsonObject));
        // a refusal of a mode that worked is not about the format
        m.mark_refused("a", JsonObject);
        assert_eq!(m.known("a"), Some(JsonObject));
        m.mark_refused("b", JsonSchema);
        m.mark_refused("b", JsonObject);
        assert_eq!(m.known("b"), Some(Text));
        m.forget_refusals("b");
        assert_eq!(m.known("b"), None);
        assert_eq!(m.adopt("c", JsonObject), JsonObject);
        assert_eq!(m.adopt("a", Text), JsonObject, "what is known stays");
    }
}

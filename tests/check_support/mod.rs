//! Running `chunksweep check` in integration tests: the binary from the repository's root
//! (without `OPENAI_BASE_URL`), its exit code, output and check.json.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary under test, run from the repository's root, `OPENAI_BASE_URL` unset.
pub fn chunksweep() -> Command {
    let mut cmd = Command::cargo_bin("chunksweep").unwrap();
    cmd.current_dir(root()).env_remove("OPENAI_BASE_URL");
    cmd
}

/// `check --baseline BASE --out OUT --quiet` with `flags`: (exit code, stdout, stderr,
/// check.json or null when it was not written).
pub fn check(base: &Path, out: &Path, flags: &[&str]) -> (i32, String, String, Value) {
    let o = chunksweep()
        .arg("check")
        .arg("--baseline")
        .arg(base)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .args(flags)
        .output()
        .unwrap();
    let json = std::fs::read_to_string(out.join("check.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (
        o.status.code().unwrap(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
        json,
    )
}

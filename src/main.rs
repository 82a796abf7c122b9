//! The `chunksweep` command line: parses flags, calls the library, prints.
//!
//! Exit codes: 0 success; 1 a failure while running (writing results, a server that keeps
//! failing); 2 invalid input or usage (bad flags or config, missing corpus, golden-set errors, a
//! grid such as overlap >= size or k = 0); 4 a `run` that left work unfinished: rerun the same
//! command to finish it. Library errors carry their class ([`chunksweep::ExitClass`]).

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::args::{Cli, Command};

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Sweep(args) => cli::sweep(*args),
        Command::Validate(args) => cli::validate(args),
        Command::Report(args) => cli::report(args),
        Command::Merge(args) => cli::merge(args),
        Command::Run(args) => cli::run(*args),
        Command::Prompts(command) => cli::prompts(command),
        Command::JudgeCheck(args) => cli::judge_check(args),
        Command::Golden(command) => cli::golden::golden(command),
        Command::Check(args) => cli::check(*args),
        Command::Extract(args) => cli::extract(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", describe(&err));
            ExitCode::from(exit_code(&err))
        }
    }
}

/// The error and its causes, each cause added only when the message does not already say it
/// (library errors often print their source themselves).
fn describe(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// The class of the library error in the chain (1 when there is none).
fn exit_code(err: &anyhow::Error) -> u8 {
    err.chain()
        .find_map(|e| e.downcast_ref::<chunksweep::Error>())
        .map_or(1, |e| e.exit_class().code())
}

//! The progress display: one subscriber of the pipeline's [`RunEvent`] stream. A bar per step
//! (indicatif; drawn only on a terminal) whose elapsed time ticks while calls are in flight,
//! whose count never passes its total (the judge's total is an estimate: it grows when retries
//! or format reminders add calls), with an estimate of the time left. Notes, step summaries and
//! unfinished questions are printed as lines, so they show without a terminal too.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use chunksweep::events::{RunEvent, Step};

/// Draws the events of one command.
pub struct Progress {
    multi: MultiProgress,
    quiet: bool,
    bars: Mutex<HashMap<Step, (ProgressBar, f64)>>,
}

impl Progress {
    /// A display; `quiet` hides the bars and the notes (unfinished questions are still printed).
    pub fn new(quiet: bool) -> Self {
        let multi = MultiProgress::new();
        if quiet {
            multi.set_draw_target(ProgressDrawTarget::hidden());
        }
        Progress {
            multi,
            quiet,
            bars: Mutex::new(HashMap::new()),
        }
    }

    fn line(&self, text: &str) {
        self.multi.suspend(|| eprintln!("{text}"));
    }

    /// Shows one event.
    pub fn handle(&self, event: RunEvent) {
        let mut bars = self.bars.lock().expect("progress lock");
        match event {
            RunEvent::Started { step, total } => {
                let bar = self.multi.add(ProgressBar::new(total));
                bar.set_style(
                    ProgressStyle::with_template(&format!(
                        "{{spinner}} {:<11} [{{bar:30}}] {{pos}}/{{len}} {} {{elapsed}} (left ~{{eta}}) {{msg}}",
                        step.name(),
                        step.unit()
                    ))
                    .expect("valid template")
                    .progress_chars("=> "),
                );
                bar.enable_steady_tick(Duration::from_millis(250));
                bars.insert(step, (bar, 0.0));
            }
            RunEvent::Advanced {
                step,
                label,
                cost_usd,
                cached,
            } => {
                if let Some((bar, spent)) = bars.get_mut(&step) {
                    bar.inc(1);
                    if bar.length().is_some_and(|len| bar.position() > len) {
                        bar.set_length(bar.position());
                    }
                    *spent += cost_usd.unwrap_or(0.0);
                    let msg = match step {
                        Step::Judge | Step::Contexts | Step::Rerank => {
                            format!("spent ${spent:.4}{}", if cached { " (cached)" } else { "" })
                        }
                        Step::Embed | Step::Retrieve | Step::Sweep => label,
                    };
                    bar.set_message(msg);
                }
            }
            RunEvent::Finished { step, summary } => {
                if let Some((bar, _)) = bars.remove(&step) {
                    bar.finish_and_clear();
                }
                if !self.quiet {
                    self.line(&format!("{}: {summary}", step.name()));
                }
            }
            RunEvent::Unfinished {
                config_id,
                question_id,
                error,
            } => self.line(&format!(
                "unfinished {config_id} {question_id} (a rerun will redo it): {error}"
            )),
            RunEvent::Note(text) => {
                if !self.quiet {
                    self.line(&text);
                }
            }
            RunEvent::Warning(text) => self.line(&format!("warning: {text}")),
        }
    }

    /// Removes every bar (before printing the results).
    pub fn clear(&self) {
        for (_, (bar, _)) in self.bars.lock().expect("progress lock").drain() {
            bar.finish_and_clear();
        }
        self.multi.clear().ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn advanced(step: Step) -> RunEvent {
        RunEvent::Advanced {
            step,
            label: "x".into(),
            cost_usd: Some(0.5),
            cached: false,
        }
    }

    #[test]
    fn a_count_never_passes_its_total_and_a_finished_step_is_cleared() {
        let p = Progress::new(true);
        p.handle(RunEvent::Started {
            step: Step::Judge,
            total: 2,
        });
        for _ in 0..3 {
            p.handle(advanced(Step::Judge));
        }
        {
            let bars = p.bars.lock().unwrap();
            let (bar, spent) = &bars[&Step::Judge];
            assert_eq!((bar.position(), bar.length()), (3, Some(3)));
            assert_eq!(*spent, 1.5);
        }
        // an event of a step that has no bar is ignored
        p.handle(advanced(Step::Sweep));
        p.handle(RunEvent::Finished {
            step: Step::Judge,
            summary: "done".into(),
        });
        assert!(p.bars.lock().unwrap().is_empty());
    }
}

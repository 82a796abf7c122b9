//! The judge's files in a run folder, written so that nothing finished is lost: finished
//! questions in judge_questions.csv and calls in calls.csv are appended and flushed one by one; a
//! line torn by a kill is dropped before anything is appended; no finished row is ever removed.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::JudgeError;
use super::rows::{JudgeQuestionRow, TAG_SEP};
use crate::files;
use crate::llm::CallRecord;

/// judge_questions.csv in `dir`.
pub fn questions_path(dir: &Path) -> PathBuf {
    dir.join(files::JUDGE_QUESTIONS)
}

/// calls.csv in `dir`.
pub fn calls_path(dir: &Path) -> PathBuf {
    dir.join(files::CALLS)
}

/// Reads `path`, without a last line torn by a kill (text after the last newline). A missing
/// file is empty.
fn read_whole_lines(path: &Path) -> Result<Vec<u8>, JudgeError> {
    let mut text = Vec::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut text)
                .map_err(|e| JudgeError::io(path, e))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(text),
        Err(e) => return Err(JudgeError::io(path, e)),
    }
    let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    text.truncate(keep);
    Ok(text)
}

/// The finished rows of a run folder's judge_questions.csv and the criteria of its header.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Finished {
    /// The criteria of the file's columns, in order (empty without a file).
    pub criteria: Vec<String>,
    /// Its rows, in file order.
    pub rows: Vec<JudgeQuestionRow>,
}

/// Reads the finished rows of a run folder's judge_questions.csv (a last line torn by a kill is
/// not a row, and neither is a row that recorded a timeout as a result,
/// [`JudgeQuestionRow::left_by_timeout`]: its question is unfinished). Reads only: the file is
/// not changed.
///
/// # Errors
/// [`JudgeError::Io`] if the file exists but cannot be read; [`JudgeError::Csv`] if a whole
/// line is not a row (a file written by something else), so that nothing is silently dropped.
pub fn load_finished(dir: &Path) -> Result<Finished, JudgeError> {
    let path = questions_path(dir);
    let text = read_whole_lines(&path)?;
    if text.is_empty() {
        return Ok(Finished::default());
    }
    let mut reader = csv::Reader::from_reader(text.as_slice());
    let header = reader
        .headers()
        .map_err(|e| JudgeError::csv(&path, e))?
        .clone();
    let criteria = JudgeQuestionRow::criteria_of(&header);
    let rows: Vec<JudgeQuestionRow> = reader
        .records()
        .map(|r| {
            r.and_then(|rec| JudgeQuestionRow::read(&header, &criteria, &rec))
                .map_err(|e| JudgeError::csv(&path, e))
        })
        .collect::<Result<_, _>>()?;
    let rows = rows.into_iter().filter(|r| !r.left_by_timeout()).collect();
    Ok(Finished { criteria, rows })
}

/// Replaces judge_questions.csv with `rows` under the columns of `criteria` at once (a temporary
/// file renamed over it).
///
/// # Errors
/// [`JudgeError::Csv`]/[`JudgeError::Io`] for the file.
pub fn rewrite_rows<'a>(
    dir: &Path,
    criteria: &[String],
    rows: impl IntoIterator<Item = &'a JudgeQuestionRow>,
) -> Result<(), JudgeError> {
    let path = questions_path(dir);
    let tmp = dir.join(format!("{}.tmp", files::JUDGE_QUESTIONS));
    let file = File::create(&tmp).map_err(|e| JudgeError::io(&tmp, e))?;
    crate::table::write_cells(
        file,
        &JudgeQuestionRow::header(criteria),
        rows.into_iter().map(|r| r.cells(criteria)),
    )
    .map_err(|e| JudgeError::csv(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| JudgeError::io(&path, e))
}

/// The length of the first `len` bytes of `file` up to and including their last newline (0
/// without one), read from the end backwards: only the last line is read.
fn whole_len(file: &mut File, len: u64) -> std::io::Result<u64> {
    const BLOCK: u64 = 8192;
    let mut buf = vec![0u8; BLOCK as usize];
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let part = &mut buf[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if let Some(i) = part.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// Appends rows to a CSV file, writing the header only if the file is empty (the serialized
/// type's field names, or the `header` given to [`open`](Self::open)); flushes each row. A last
/// line torn by a kill is cut off first, so the next row starts on a line of its own.
pub(crate) struct Appender {
    path: PathBuf,
    writer: csv::Writer<File>,
    /// The header still to write before the first row.
    header: Option<Vec<String>>,
}

impl Appender {
    pub(crate) fn open(path: &Path, header: Option<Vec<String>>) -> Result<Self, JudgeError> {
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| JudgeError::io(path, e))?;
        let len = file.metadata().map_err(|e| JudgeError::io(path, e))?.len();
        let whole = whole_len(&mut file, len).map_err(|e| JudgeError::io(path, e))?;
        if len > whole {
            file.set_len(whole).map_err(|e| JudgeError::io(path, e))?;
        }
        let writer = csv::WriterBuilder::new()
            .has_headers(whole == 0 && header.is_none())
            .from_writer(file);
        Ok(Appender {
            path: path.to_path_buf(),
            writer,
            header: header.filter(|_| whole == 0),
        })
    }

    pub(crate) fn append<T: Serialize>(&mut self, row: &T) -> Result<(), JudgeError> {
        if let Some(h) = self.header.take() {
            self.writer
                .write_record(&h)
                .map_err(|e| JudgeError::csv(&self.path, e))?;
        }
        self.writer
            .serialize(row)
            .map_err(|e| JudgeError::csv(&self.path, e))?;
        self.writer
            .flush()
            .map_err(|e| JudgeError::io(&self.path, e))
    }
}

/// One row of calls.csv: a [`CallRecord`] with its configuration and question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    /// `generate`, `faithfulness`, `relevancy` or `correctness`.
    pub stage: String,
    /// Configuration id.
    pub config_id: String,
    /// Question id.
    pub question_id: String,
    /// Model.
    pub model: String,
    /// The request's key ([`CallRecord::request_key`]): equal in every run for equal requests.
    pub request_key: String,
    /// Start time (RFC 3339 UTC).
    pub started_at: String,
    /// Last attempt's time to the end of the body, in ms (empty for cache hits).
    pub latency_ms_total: Option<f64>,
    /// Whole call including queueing and retries, in ms.
    pub wall_ms: f64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Whether the tokens are estimates.
    pub tokens_estimated: bool,
    /// Money actually spent, in USD (0 for a cache hit; empty without a price).
    pub cost_usd: Option<f64>,
    /// HTTP attempts.
    pub attempts: u32,
    /// Answered from the cache.
    pub cache_hit: bool,
    /// Structured-output mode, if any.
    pub response_format: String,
    /// Last HTTP status.
    pub http_status: Option<u16>,
    /// Error, if the call failed.
    pub error: String,
    /// The batch that carried the call (`run --batch`); empty for a direct call, whose latency
    /// is in `latency_ms_total` (a batched call has none of its own).
    pub batch_id: String,
    /// When that batch was submitted (RFC 3339 UTC); empty for a direct call.
    pub batch_submitted_at: String,
    /// When the run saw that batch end (RFC 3339 UTC); empty for a direct call.
    pub batch_completed_at: String,
}

impl From<&CallRecord> for CallRow {
    fn from(r: &CallRecord) -> Self {
        let mut parts = r.stage.split(TAG_SEP);
        let stage = parts.next().unwrap_or_default().to_string();
        CallRow {
            stage,
            config_id: parts.next().unwrap_or_default().to_string(),
            question_id: parts.next().unwrap_or_default().to_string(),
            model: r.model.clone(),
            request_key: r.request_key.clone(),
            started_at: r.started_at.clone(),
            latency_ms_total: r.latency_ms_total,
            wall_ms: r.wall_ms,
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            tokens_estimated: r.tokens_estimated,
            cost_usd: r.cost_usd,
            attempts: r.attempts,
            cache_hit: r.cache_hit,
            response_format: r
                .response_format
                .map(|f| f.as_str().to_string())
                .unwrap_or_default(),
            http_status: r.http_status,
            error: r.error.clone().unwrap_or_default(),
            batch_id: r.batch_id.clone().unwrap_or_default(),
            batch_submitted_at: r.batch_submitted_at.clone().unwrap_or_default(),
            batch_completed_at: r.batch_completed_at.clone().unwrap_or_default(),
        }
    }
}

/// What identifies an answered call in calls.csv: stage, configuration, question, request key.
type CallId = (String, String, String, String);

/// calls.csv of a run folder, open for appending: every call is written as it ends. An answered
/// call is listed once: a rerun that gets the same call (same stage, configuration, question and
/// request) from the cache does not list it again. Keeps the spend recorded before it opened
/// (the file's, and the sweep's call files' beside it: [`recorded_spend`]) and this run's.
pub struct CallLog {
    out: Appender,
    answered: HashSet<CallId>,
    spent_before: f64,
    spent_now: f64,
}

impl CallLog {
    /// Opens `dir/calls.csv` (creating it), reading the calls already answered and their cost.
    ///
    /// # Errors
    /// [`JudgeError::Io`]/[`JudgeError::Csv`] for the file.
    pub fn open(dir: &Path) -> Result<Self, JudgeError> {
        let path = calls_path(dir);
        let (answered, judged_before) = read_calls(&path)?;
        let spent_before = judged_before + sweep_spend(dir)?;
        Ok(CallLog {
            out: Appender::open(&path, None)?,
            answered,
            spent_before,
            spent_now: 0.0,
        })
    }

    /// Appends `rec` unless it is a cache hit of a call already listed.
    ///
    /// # Errors
    /// [`JudgeError::Io`]/[`JudgeError::Csv`] for the file.
    pub fn record(&mut self, rec: &CallRecord) -> Result<(), JudgeError> {
        let row = CallRow::from(rec);
        let id = (
            row.stage.clone(),
            row.config_id.clone(),
            row.question_id.clone(),
            row.request_key.clone(),
        );
        if rec.error.is_none() && !rec.request_key.is_empty() {
            let new = self.answered.insert(id);
            if rec.cache_hit && !new {
                return Ok(());
            }
        }
        self.spent_now += rec.cost_usd.unwrap_or(0.0);
        self.out.append(&row)
    }

    /// Spend recorded in the folder when it opened ([`recorded_spend`]), in USD.
    pub fn spent_before(&self) -> f64 {
        self.spent_before
    }

    /// Spend of the calls recorded since [`open`](Self::open), in USD.
    pub fn spent_now(&self) -> f64 {
        self.spent_now
    }

    /// All spend recorded in the folder, in USD.
    pub fn spent_total(&self) -> f64 {
        self.spent_before + self.spent_now
    }
}

/// The answered calls of a calls.csv (stage, configuration, question, request key) and the sum
/// of its `cost_usd` column.
fn read_calls(path: &Path) -> Result<(HashSet<CallId>, f64), JudgeError> {
    let text = read_whole_lines(path)?;
    // flexible: a calls.csv written before the batch columns has shorter rows
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_slice());
    let headers = reader
        .headers()
        .map_err(|e| JudgeError::csv(path, e))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let cols = [
        col("stage"),
        col("config_id"),
        col("question_id"),
        col("request_key"),
    ];
    let (cost, error) = (col("cost_usd"), col("error"));
    let mut answered = HashSet::new();
    let mut spent = 0.0;
    for rec in reader.records() {
        let rec = rec.map_err(|e| JudgeError::csv(path, e))?;
        let get = |i: Option<usize>| i.and_then(|i| rec.get(i)).unwrap_or("").to_string();
        spent += get(cost).parse::<f64>().unwrap_or(0.0);
        let key = get(cols[3]);
        if get(error).is_empty() && !key.is_empty() {
            answered.insert((get(cols[0]), get(cols[1]), get(cols[2]), key));
        }
    }
    Ok((answered, spent))
}

/// Spend recorded in a run folder's calls.csv, in USD (0 without the file): the judge's, of
/// every run into the folder (a judge stage resumes); what `--max-cost` counts before a sweep
/// spends anything (the sweep's own call files are rewritten by it).
///
/// # Errors
/// [`JudgeError::Io`]/[`JudgeError::Csv`] for the file.
pub fn judge_spend(dir: &Path) -> Result<f64, JudgeError> {
    Ok(read_calls(&calls_path(dir))?.1)
}

/// Spend recorded in the sweep's call files of a run folder (embed_calls.csv,
/// context_calls.csv, rerank_calls.csv: the last sweep's calls, cache hits at no cost), in USD
/// (0 without them).
///
/// # Errors
/// [`JudgeError::Io`]/[`JudgeError::Csv`] for a file.
pub fn sweep_spend(dir: &Path) -> Result<f64, JudgeError> {
    let mut spent = 0.0;
    for name in [
        files::EMBED_CALLS,
        files::CONTEXT_CALLS,
        files::RERANK_CALLS,
    ] {
        spent += read_calls(&dir.join(name))?.1;
    }
    Ok(spent)
}

/// Spend recorded in a run folder, in USD: its calls.csv ([`judge_spend`]) and its sweep's
/// call files. `--max-cost` caps it: one cap covers the sweep and the judge stage of a run.
///
/// # Errors
/// [`JudgeError::Io`]/[`JudgeError::Csv`] for a file.
pub fn recorded_spend(dir: &Path) -> Result<f64, JudgeError> {
    Ok(judge_spend(dir)? + sweep_spend(dir)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_spend_counts_the_sweeps_call_files_and_calls_csv() {
        let dir = tempfile::tempdir().unwrap();
        let header = "stage,kind,model,request_key,cost_usd,cache_hit,error\n";
        std::fs::write(
            dir.path().join(files::CALLS),
            format!("{header}judge,chat_json,m,k1,0.5,false,\njudge,chat_json,m,k2,,true,\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join(files::RERANK_CALLS),
            format!("{header}rerank,rerank,r,k3,0.25,false,\nrerank,rerank,r,k4,0,true,\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join(files::EMBED_CALLS),
            format!("{header}embed,embed,e,k5,0.125,false,\n"),
        )
        .unwrap();
        assert_eq!(judge_spend(dir.path()).unwrap(), 0.5);
        assert_eq!(recorded_spend(dir.path()).unwrap(), 0.875);
        assert_eq!(CallLog::open(dir.path()).unwrap().spent_before(), 0.875);
    }

    #[test]
    fn a_torn_line_is_cut_before_appending_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        std::fs::write(&path, "a,b\n1,2\n3,").unwrap();
        let mut out = Appender::open(&path, None).unwrap();
        out.append(&(5, 6)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,2\n5,6\n");
        // a header torn in half: the file starts again with a header
        // a long last line torn in half, longer than one block read backwards
        let long = format!("a,b\n1,2\n{}", "x".repeat(20_000));
        std::fs::write(&path, long).unwrap();
        Appender::open(&path, None)
            .unwrap()
            .append(&(7, 8))
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,2\n7,8\n");
        std::fs::write(&path, "a,").unwrap();
        #[derive(Serialize)]
        struct R {
            a: u8,
        }
        Appender::open(&path, None)
            .unwrap()
            .append(&R { a: 1 })
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\n1\n");
    }
}

//! Shards of a grid: `--shard I/N` runs the I-th of N parts of the grid (I from 0), so that a
//! scheduler (a GitHub Actions matrix, a Kubernetes Indexed Job, a Slurm array) can spread a
//! sweep over machines and `chunksweep merge` can join the parts.
//!
//! The split is deterministic and balanced by estimated cost ([`estimated_cost`]): the
//! configurations, most expensive first (ties in grid order), each go to the shard with the
//! least estimated cost so far (ties to the lowest index): the longest-processing-time rule.
//! Every configuration is in exactly one shard, and a shard lists its configurations in grid
//! order.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::chunking::chunk::Strategy;
use crate::chunking::enrich::Prefix;
use crate::sweep::grid::{ConfigSpec, RetrieverKind};

/// The environment variables a shard's index is read from with `--shard env/N`, in the order
/// they are looked at: chunksweep's own (set it from a GitHub Actions matrix value), a
/// Kubernetes Indexed Job's, a Slurm array's.
pub const INDEX_VARIABLES: [&str; 3] = [
    "CHUNKSWEEP_SHARD_INDEX",
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
];

/// One part of a grid split into `count` parts: part `index`, from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which part, from 0 to `count - 1`.
    pub index: usize,
    /// Into how many parts the grid is split (at least 1).
    pub count: usize,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// The shard's folder under a `--out` folder: `shard-<index>-of-<count>`.
    pub fn folder_name(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }
}

/// What `--shard` was given: an index, or `env` (the index read from [`INDEX_VARIABLES`]), and
/// the number of shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardFlag {
    /// The index given (`None`: `env`).
    pub index: Option<usize>,
    /// The number of shards.
    pub count: usize,
}

/// What is wrong with `--shard` or with the environment it reads.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ShardError {
    /// The flag's value does not parse.
    #[error(
        "--shard {0}: expected I/N (I from 0 to N-1, e.g. 0/3) or env/N (I from ${var}, ${k8s} or ${slurm})",
        var = INDEX_VARIABLES[0], k8s = INDEX_VARIABLES[1], slurm = INDEX_VARIABLES[2]
    )]
    Syntax(String),
    /// `env/N` and none of the variables is set.
    #[error(
        "--shard env/{count}: none of {} is set; set one to this shard's index (0 to {last})",
        INDEX_VARIABLES.join(", "), last = count.saturating_sub(1)
    )]
    NoVariable {
        /// N.
        count: usize,
    },
    /// A variable holds no whole number.
    #[error("--shard env/{count}: ${variable} is {value:?}, not a shard index (0 to {last})", last = count.saturating_sub(1))]
    BadVariable {
        /// The variable.
        variable: String,
        /// Its value.
        value: String,
        /// N.
        count: usize,
    },
    /// Two variables are set to different indexes.
    #[error(
        "--shard env/{count}: ${first} is {first_value} but ${second} is {second_value}; unset one"
    )]
    Disagree {
        /// N.
        count: usize,
        /// The first variable set.
        first: String,
        /// Its value.
        first_value: usize,
        /// The other.
        second: String,
        /// Its value.
        second_value: usize,
    },
    /// The index is not below N.
    #[error("--shard {index}/{count}: the index runs from 0 to {last} (shards are numbered from 0){from}", last = count.saturating_sub(1))]
    OutOfRange {
        /// I.
        index: usize,
        /// N.
        count: usize,
        /// Where I came from (`", from $VAR"`), or empty.
        from: String,
    },
    /// The grid's prepare step calls a model, whose records `merge` does not join.
    #[error(
        "--shard splits only grids whose prepare step calls no model; this grid needs {0}, whose records (embed_calls.csv, embeddings.json, context_calls.csv, rerank_calls.csv, rerank.json) merge does not join yet: sweep it whole"
    )]
    NeedsModelCalls(String),
    /// More shards than configurations.
    #[error(
        "--shard {shard}: the grid has {configs} configuration(s), so at most {configs} shard(s); lower N"
    )]
    MoreShardsThanConfigs {
        /// The shard.
        shard: Shard,
        /// Configurations in the grid.
        configs: usize,
    },
}

impl ShardError {
    /// Every one is a usage error (exit 2).
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        crate::exit::ExitClass::Usage
    }
}

impl std::str::FromStr for ShardFlag {
    type Err = ShardError;
    /// `I/N` or `env/N`, N at least 1.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || ShardError::Syntax(s.to_string());
        let (index, count) = s.trim().split_once('/').ok_or_else(syntax)?;
        let count: usize = count.trim().parse().map_err(|_| syntax())?;
        if count == 0 {
            return Err(syntax());
        }
        let index = match index.trim() {
            "env" => None,
            i => Some(i.parse().map_err(|_| syntax())?),
        };
        Ok(ShardFlag { index, count })
    }
}

impl ShardFlag {
    /// The shard, its index given or read through `var` from [`INDEX_VARIABLES`] (the first
    /// set; all that are set must agree).
    ///
    /// # Errors
    /// [`ShardError`] naming the variable and its value, or the index out of range.
    pub fn resolve(&self, var: impl Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let count = self.count;
        let (index, from) = match self.index {
            Some(i) => (i, String::new()),
            None => {
                let mut found: Option<(&str, usize)> = None;
                for name in INDEX_VARIABLES {
                    let Some(value) = var(name).filter(|v| !v.trim().is_empty()) else {
                        continue;
                    };
                    let index =
                        value
                            .trim()
                            .parse::<usize>()
                            .map_err(|_| ShardError::BadVariable {
                                variable: name.to_string(),
                                value: value.clone(),
                                count,
                            })?;
                    match found {
                        None => found = Some((name, index)),
                        Some((first, first_value)) if first_value != index => {
                            return Err(ShardError::Disagree {
                                count,
                                first: first.to_string(),
                                first_value,
                                second: name.to_string(),
                                second_value: index,
                            });
                        }
                        Some(_) => {}
                    }
                }
                let (name, index) = found.ok_or(ShardError::NoVariable { count })?;
                (index, format!(", from ${name}"))
            }
        };
        if index >= count {
            return Err(ShardError::OutOfRange { index, count, from });
        }
        Ok(Shard { index, count })
    }
}

/// A configuration's estimated cost, in arbitrary units, for balancing shards: chunking and
/// indexing grow with the number of chunks (about `1 + 256 / chunk_size` in the unit of the
/// sizes), weighted by the strategy (rough weights after the profile in
/// results/benchmarks/sweep.md, where markdown's and recursive's chunking take far longer than
/// fixed's), doubled for a dense or hybrid retriever and for a prefix other than `none`, and half
/// as much again for an expansion (`parent:P` also cuts every document into parents). Only the
/// balance depends on it, never a result.
pub fn estimated_cost(config: &ConfigSpec) -> f64 {
    let strategy = match config.params.strategy {
        Strategy::Words => 0.5,
        Strategy::Fixed => 1.0,
        Strategy::Sentence => 3.0,
        Strategy::Recursive | Strategy::Page | Strategy::External(_) => 4.0,
        Strategy::Markdown => 6.0,
        Strategy::Semantic => 8.0,
    };
    let size = 1.0 + 256.0 / config.params.chunk_size.max(1) as f64;
    let retriever = match config.retriever {
        RetrieverKind::Bm25 => 1.0,
        _ => 2.0,
    };
    let prefix = if config.prefix == Prefix::None {
        1.0
    } else {
        2.0
    };
    let expand = if config.expand.is_expanded() {
        1.5
    } else {
        1.0
    };
    strategy * size * retriever * prefix * expand
}

/// The grid's configurations split into `count` shards: for each shard, the indexes into
/// `configs` of its configurations, in grid order (see the module's rule).
pub fn split(configs: &[ConfigSpec], count: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<(usize, f64)> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| (i, estimated_cost(c)))
        .collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut shards = vec![(0.0_f64, Vec::new()); count.max(1)];
    for (i, cost) in order {
        let lightest = (0..shards.len())
            .min_by(|&a, &b| shards[a].0.total_cmp(&shards[b].0).then(a.cmp(&b)))
            .unwrap_or(0);
        shards[lightest].0 += cost;
        shards[lightest].1.push(i);
    }
    shards
        .into_iter()
        .map(|(_, mut members)| {
            members.sort_unstable();
            members
        })
        .collect()
}

/// The configurations of `shard` in a grid of `configs`, in grid order.
///
/// # Errors
/// [`ShardError::MoreShardsThanConfigs`] when the grid has fewer configurations than shards.
pub fn select(configs: &[ConfigSpec], shard: Shard) -> Result<Vec<ConfigSpec>, ShardError> {
    if shard.count > configs.len() {
        return Err(ShardError::MoreShardsThanConfigs {
            shard,
            configs: configs.len(),
        });
    }
    Ok(split(configs, shard.count)
        .swap_remove(shard.index)
        .into_iter()
        .map(|i| configs[i].clone())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::grid::{SweepSpec, expand};

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_flag_parses_an_index_or_env_and_a_count() {
        let flag: ShardFlag = "1/3".parse().unwrap();
        assert_eq!(
            flag.resolve(env(&[])).unwrap(),
            Shard { index: 1, count: 3 }
        );
        let flag: ShardFlag = "env/3".parse().unwrap();
        assert_eq!(flag.index, None);
        for bad in ["3", "1/0", "a/3", "1/b", "-1/3"] {
            assert!(
                matches!(bad.parse::<ShardFlag>(), Err(ShardError::Syntax(_))),
                "{bad}"
            );
        }
        let err = "3/3"
            .parse::<ShardFlag>()
            .unwrap()
            .resolve(env(&[]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--shard 3/3: the index runs from 0 to 2 (shards are numbered from 0)"
        );
    }

    #[test]
    fn env_reads_the_first_variable_set_and_refuses_disagreeing_ones() {
        let flag: ShardFlag = "env/4".parse().unwrap();
        assert_eq!(
            flag.resolve(env(&[("JOB_COMPLETION_INDEX", "2")])).unwrap(),
            Shard { index: 2, count: 4 }
        );
        assert_eq!(
            flag.resolve(env(&[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("JOB_COMPLETION_INDEX", "")
            ]))
            .unwrap(),
            Shard { index: 3, count: 4 }
        );
        let err = flag
            .resolve(env(&[
                ("CHUNKSWEEP_SHARD_INDEX", "1"),
                ("SLURM_ARRAY_TASK_ID", "2"),
            ]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--shard env/4: $CHUNKSWEEP_SHARD_INDEX is 1 but $SLURM_ARRAY_TASK_ID is 2; unset one"
        );
        let err = flag.resolve(env(&[])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--shard env/4: none of CHUNKSWEEP_SHARD_INDEX, JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID is set; set one to this shard's index (0 to 3)"
        );
        let err = flag
            .resolve(env(&[("SLURM_ARRAY_TASK_ID", "4")]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--shard 4/4: the index runs from 0 to 3 (shards are numbered from 0), from $SLURM_ARRAY_TASK_ID"
        );
        let err = flag
            .resolve(env(&[("JOB_COMPLETION_INDEX", "x")]))
            .unwrap_err();
        assert!(matches!(err, ShardError::BadVariable { .. }), "{err}");
    }

    #[test]
    fn every_configuration_is_in_exactly_one_shard_and_the_split_is_balanced() {
        let configs = expand(&SweepSpec::default()).unwrap();
        assert_eq!(configs.len(), 15);
        for count in 1..=15 {
            let shards = split(&configs, count);
            let mut all: Vec<usize> = shards.iter().flatten().copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..15).collect::<Vec<_>>(), "{count} shards");
            assert!(shards.iter().all(|s| !s.is_empty()), "{count} shards");
            assert!(shards.iter().all(|s| s.is_sorted()));
        }
        // three shards of the default grid (estimated 140.25 in all): 47, 47.25 and 46 by hand
        let costs: Vec<f64> = split(&configs, 3)
            .iter()
            .map(|s| s.iter().map(|&i| estimated_cost(&configs[i])).sum())
            .collect();
        let (lo, hi) = (
            costs.iter().copied().fold(f64::MAX, f64::min),
            costs.iter().copied().fold(0.0, f64::max),
        );
        assert!(hi / lo < 1.05, "{costs:?}");
        // the split is a function of the grid alone
        assert_eq!(split(&configs, 3), split(&configs, 3));
        let err = select(
            &configs,
            Shard {
                index: 0,
                count: 16,
            },
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--shard 0/16: the grid has 15 configuration(s), so at most 15 shard(s); lower N"
        );
    }

    #[test]
    fn the_split_includes_every_expansion_of_each_configuration() {
        use crate::expand::Expand;
        let spec = SweepSpec {
            strategies: vec![Strategy::Recursive],
            sizes: vec![64, 128],
            expand: vec![Expand::None, Expand::Neighbours(1), Expand::Parent(1024)],
            ..SweepSpec::default()
        };
        let configs = expand(&spec).unwrap();
        assert_eq!(configs.len(), 6);
        // recursive 4 × (1 + 256 / 64) = 20 at 64, 4 × 3 = 12 at 128; an expansion × 1.5
        let cost = |i: usize| estimated_cost(&configs[i]);
        assert_eq!((cost(0), cost(1), cost(2)), (20.0, 30.0, 30.0));
        assert_eq!((cost(3), cost(4), cost(5)), (12.0, 18.0, 18.0));
        let shards = split(&configs, 2);
        let mut all: Vec<usize> = shards.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..6).collect::<Vec<_>>());
        // largest first to the lightest: 30 → A, 30 → B, 20 → A, 18 → B, 18 → B, 12 → A
        assert_eq!(shards, vec![vec![0, 1, 3], vec![2, 4, 5]]);
    }
}

//! Small-sample statistics for the decision: Wilson score intervals for proportions, a seeded
//! percentile bootstrap over questions for means, the exact McNemar test for paired pass/fail
//! outcomes, the exact sign test for paired graded outcomes (per-question span recall), two-sided
//! and one-sided, Holm's step-down correction for a family of tests, a paired non-inferiority
//! test within a margin δ with its three classes, and the questions a comparison needs.
//!
//! Sources:
//! - E. B. Wilson (1927), "Probable inference, the law of succession, and statistical
//!   inference", *Journal of the American Statistical Association* 22(158): 209–212.
//! - Q. McNemar (1947), "Note on the sampling error of the difference between correlated
//!   proportions or percentages", *Psychometrika* 12(2): 153–157. The exact form used here is the
//!   two-sided binomial test on the discordant pairs with p = 0.5.
//! - B. Efron and R. Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile
//!   intervals).
//! - W. J. Dixon and A. M. Mood (1946), "The statistical sign test", *Journal of the American
//!   Statistical Association* 41(236): 557–566. On 0/1 outcomes it is exactly McNemar's test.
//! - S. Holm (1979), "A simple sequentially rejective multiple test procedure", *Scandinavian
//!   Journal of Statistics* 6(2): 65–70.
//! - Student (1908), "The probable error of a mean", *Biometrika* 6(1): 1–25: the paired t
//!   interval of a mean difference.
//! - S. Wellek (2010), *Testing Statistical Hypotheses of Equivalence and Noninferiority*, 2nd ed.,
//!   ch. 2 and 5: non-inferiority as the one-sided interval's bound against −δ.
//! - S.-C. Chow, J. Shao and H. Wang (2008), *Sample Size Calculations in Clinical Research*, 2nd
//!   ed., §3.1 (one-sample and paired means, test for non-inferiority): the questions needed.

use rand::RngExt;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal, StudentsT};

/// A two-sided confidence interval `[lo, hi]`, in the unit of the statistic it bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

impl Interval {
    /// Whether `x` lies inside the interval (bounds included, with a 1e-12 tolerance for rounding).
    pub fn contains(&self, x: f64) -> bool {
        x >= self.lo - 1e-12 && x <= self.hi + 1e-12
    }
}

/// The two-sided standard-normal quantile for a confidence level, e.g. 1.959964 for 0.95.
///
/// # Panics
/// If `confidence` is not strictly between 0 and 1.
pub fn z_for(confidence: f64) -> f64 {
    assert!(
        confidence > 0.0 && confidence < 1.0,
        "confidence {confidence} must be strictly between 0 and 1"
    );
    Normal::standard().inverse_cdf(1.0 - (1.0 - confidence) / 2.0)
}

/// Wilson score interval (Wilson 1927) for `successes` out of `n` at the given confidence
/// (e.g. 0.95). With `p = successes / n` and `z` the two-sided normal quantile:
///
/// `centre = (p + z²/2n) / (1 + z²/n)`, `half = z / (1 + z²/n) · sqrt(p(1 − p)/n + z²/4n²)`.
///
/// Unlike the normal (Wald) interval it stays inside [0, 1] and does not collapse at 0 or n
/// successes. `n = 0` gives the uninformative `[0, 1]`.
///
/// # Panics
/// If `successes > n` or `confidence` is not strictly between 0 and 1.
pub fn wilson(successes: u64, n: u64, confidence: f64) -> Interval {
    assert!(successes <= n, "{successes} successes out of {n} trials");
    if n == 0 {
        return Interval { lo: 0.0, hi: 1.0 };
    }
    let z = z_for(confidence);
    let n_f = n as f64;
    let p = successes as f64 / n_f;
    let z2 = z * z;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = z / denom * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt();
    // At 0 and n successes the bounds are exactly 0 and 1; the closed form leaves a rounding
    // residue of about 1e-17 there.
    Interval {
        lo: if successes == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        hi: if successes == n {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    }
}

/// Result of an exact McNemar test on paired binary outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct McNemar {
    /// Pairs where the first system succeeded and the second failed.
    pub b: u64,
    /// Pairs where the first system failed and the second succeeded.
    pub c: u64,
    /// Two-sided exact p-value.
    pub p_value: f64,
}

/// Exact McNemar test (McNemar 1947, exact binomial form): under the null hypothesis the
/// `b + c` discordant pairs split as Binomial(b + c, 0.5), and the two-sided p-value is
/// `min(1, 2 · P(X ≤ min(b, c)))`. No discordant pair gives p = 1.
///
/// Example: b = 2, c = 10 gives p = 2 · 79/4096 = 0.0386.
pub fn mcnemar_exact(b: u64, c: u64) -> McNemar {
    let n = b + c;
    let p_value = if n == 0 {
        1.0
    } else {
        let binom = Binomial::new(0.5, n).expect("p = 0.5 is a valid probability");
        let p = 2.0 * binom.cdf(b.min(c));
        // statrs evaluates the cdf through the regularised incomplete beta function, which
        // leaves residues of about 1e-15; a p-value that close to 1 is 1.
        if p > 1.0 - 1e-12 { 1.0 } else { p }
    };
    McNemar { b, c, p_value }
}

/// Paired McNemar on two equally long 0/1 outcome vectors (one entry per question, same order):
/// `b` counts `first[i] && !second[i]`, `c` counts `!first[i] && second[i]`.
///
/// # Panics
/// If the slices differ in length.
pub fn mcnemar_paired(first: &[bool], second: &[bool]) -> McNemar {
    let (b, c) = discordant(first, second, |x, y| x & !y);
    mcnemar_exact(b, c)
}

/// Values closer than this count as equal in [`sign_test`] (per-question span recall is a
/// ratio of small integers, so real differences are at least 1/spans).
pub const SIGN_TIE: f64 = 1e-9;

/// The default significance level α, as a literal for help texts built with `concat!`
/// ([`DEFAULT_ALPHA`] is its value).
#[macro_export]
macro_rules! default_alpha {
    () => {
        0.05
    };
}

/// The default significance level α of every test chunksweep decides with: the selection's,
/// the judge's and `check`'s (each a setting of its own, `--alpha`).
pub const DEFAULT_ALPHA: f64 = default_alpha!();

/// Exact two-sided sign test (Dixon and Mood 1946) on paired graded outcomes, one per question in
/// the same order, e.g. per-question span recall of two configurations: `b` counts questions
/// where `first` is higher, `c` where `second` is higher (differences within [`SIGN_TIE`] are
/// ties and drop out), and under the null hypothesis of no difference `b` is Binomial(b + c, ½),
/// so the p-value is that of [`mcnemar_exact`]. On 0/1 outcomes it is McNemar's test.
///
/// Chosen over the Wilcoxon signed-rank test because per-question span recall takes few
/// distinct values (0, ½, 1 …), where rank ties make Wilcoxon's exact distribution unavailable
/// and its normal approximation poor at small n; the sign test stays exact.
///
/// # Panics
/// If the slices differ in length.
pub fn sign_test(first: &[f64], second: &[f64]) -> McNemar {
    let (b, c) = discordant(first, second, |x, y| x > y + SIGN_TIE);
    mcnemar_exact(b, c)
}

/// `(b, c)`: pairs where `better(first, second)`, and pairs where `better(second, first)`.
fn discordant<T: Copy>(first: &[T], second: &[T], better: impl Fn(T, T) -> bool) -> (u64, u64) {
    assert_eq!(
        first.len(),
        second.len(),
        "paired outcomes differ in length"
    );
    first.iter().zip(second).fold((0, 0), |(b, c), (&x, &y)| {
        (b + u64::from(better(x, y)), c + u64::from(better(y, x)))
    })
}

/// One-sided exact sign test (Dixon and Mood 1946) that `candidate` is worse than `reference`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OneSidedSign {
    /// Questions where `reference` is higher (by more than [`SIGN_TIE`]).
    pub reference_better: u64,
    /// Questions where `candidate` is higher (by more than [`SIGN_TIE`]).
    pub candidate_better: u64,
    /// One-sided exact p-value: `P(X ≥ reference_better)` with `X ~ Binomial(reference_better +
    /// candidate_better, ½)`; 1 when no question differs.
    pub p_value: f64,
}

/// One-sided exact sign test (Dixon and Mood 1946) of "`candidate` is worse than `reference`" on
/// paired graded outcomes, one per question in the same order (e.g. per-question span recall of a
/// baseline and of a candidate): differences within [`SIGN_TIE`] are ties and drop out, and under
/// the null hypothesis of no difference the questions where `reference` is higher are
/// Binomial(discordant, ½). Reject "not worse" at α when `p_value < α`. One question that got
/// worse gives p = 0.5: a single wobble is never significant.
///
/// Examples: 6 worse and 0 better → p = 1/64 = 0.015625; 10 worse and 2 better →
/// p = (1 + 12 + 66)/4096 = 0.019287.
///
/// # Panics
/// If the slices differ in length.
pub fn sign_test_worse(reference: &[f64], candidate: &[f64]) -> OneSidedSign {
    let (b, c) = discordant(reference, candidate, |x, y| x > y + SIGN_TIE);
    let p_value = if b == 0 {
        1.0
    } else {
        let binom = Binomial::new(0.5, b + c).expect("p = 0.5 is a valid probability");
        // P(X ≥ b) = 1 − P(X ≤ b − 1), computed as the upper tail to keep small values exact.
        binom.sf(b - 1)
    };
    OneSidedSign {
        reference_better: b,
        candidate_better: c,
        p_value,
    }
}

/// Where a candidate stands against a reference within a non-inferiority margin δ (see
/// [`non_inferiority`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Worse by more than δ: the one-sided (1 − α) upper bound of the mean difference is below −δ.
    Worse,
    /// Within δ: the one-sided (1 − α) lower bound of the mean difference is at least −δ.
    NonInferior,
    /// Neither: the interval straddles −δ, and the data cannot tell (see [`questions_needed`]).
    Undetermined,
}

impl Class {
    /// The class as written in reports and CSVs: `worse`, `non-inferior`, `undetermined`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Worse => "worse",
            Class::NonInferior => "non-inferior",
            Class::Undetermined => "undetermined",
        }
    }
}

/// A paired non-inferiority comparison of a candidate with a reference (see [`non_inferiority`]).
/// Differences are `candidate − reference`, in the unit of the values (span recall: 0 to 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NonInferiority {
    /// Questions compared.
    pub n: usize,
    /// Mean paired difference Δ = mean(candidate − reference).
    pub mean_difference: f64,
    /// Sample standard deviation of the paired differences (n − 1 denominator); 0 for n < 2.
    pub sd_difference: f64,
    /// One-sided (1 − α) lower bound of Δ: `Δ − t(1−α, n−1) · sd/√n`; −∞ for n < 2.
    pub lower: f64,
    /// One-sided (1 − α) upper bound of Δ: `Δ + t(1−α, n−1) · sd/√n`; +∞ for n < 2.
    pub upper: f64,
    /// The margin δ (> 0, in the unit of the values).
    pub delta: f64,
    /// The one-sided significance level α.
    pub alpha: f64,
    /// The class: [`Class::NonInferior`] when `lower ≥ −δ`, else [`Class::Worse`] when
    /// `upper < −δ`, else [`Class::Undetermined`].
    pub class: Class,
}

impl NonInferiority {
    /// The questions (in all) that would show the candidate non-inferior within δ at its α and
    /// the given power (0.8 for 80 %) **if it were in truth as good as the reference**: the
    /// planning difference is [`PLANNING_DIFFERENCE`] (0), not the observed one, and σ_d is the
    /// observed standard deviation of the paired differences; see [`questions_needed`]. `None`
    /// with fewer than 2 questions (no variance).
    pub fn questions_needed(&self, power: f64) -> Option<u64> {
        (self.n >= 2)
            .then(|| {
                questions_needed(
                    self.sd_difference,
                    PLANNING_DIFFERENCE,
                    self.delta,
                    self.alpha,
                    power,
                )
            })
            .flatten()
    }

    /// How likely the candidate is worse than the reference by more than δ, given the data:
    /// `P(true Δ < −δ) = F_t(n−1)((−δ − Δ̂) / (s/√n))`, the posterior probability under a flat
    /// prior on the mean difference, whose posterior is Student's t centred on Δ̂ with scale
    /// s/√n (Gelman et al. 2013, *Bayesian Data Analysis*, 3rd ed., §3.2). In [0, 1]; `None`
    /// with fewer than 2 questions. With s = 0 it is 1 when Δ̂ < −δ and 0 otherwise.
    ///
    /// Example: 20 questions, one 0.5 lower (Δ̂ = −0.025, s/√n = 0.025), δ = 0.05:
    /// F_t(19)(−1) = 0.165.
    pub fn probability_worse(&self) -> Option<f64> {
        if self.n < 2 || !self.sd_difference.is_finite() {
            return None;
        }
        let gap = -self.delta - self.mean_difference;
        if self.sd_difference == 0.0 {
            return Some(if gap > BOUND_EPS { 1.0 } else { 0.0 });
        }
        let se = self.sd_difference / (self.n as f64).sqrt();
        let t =
            StudentsT::new(0.0, 1.0, (self.n - 1) as f64).expect("n − 1 ≥ 1 degrees of freedom");
        Some(t.cdf(gap / se))
    }
}

/// The true difference (candidate − reference) the questions-needed figure plans for: 0, "as
/// good as the reference". Planning at the observed difference would make the figure explode
/// (to infinity at exactly −δ) for configurations that are likely worse; planning at 0 answers
/// "how many questions would show it within δ if it were as good", the convention for
/// non-inferiority sample sizes (Chow, Shao and Wang 2008, §3.1; Julious 2004, *Statistics in
/// Medicine* 23: 1921–1986, §6). [`NonInferiority::probability_worse`] says, separately, how
/// likely that premise is false.
pub const PLANNING_DIFFERENCE: f64 = 0.0;

/// Above this many questions a questions-needed figure is not printed: reports say "more
/// questions are unlikely to settle this" (at δ = 0.05 it is only reached with σ_d above 1, which
/// span recall differences cannot have; at a smaller δ it is).
pub const QUESTIONS_CAP: u64 = 10_000;

/// Rounding allowance of the comparisons with −δ, in the unit of the values.
const BOUND_EPS: f64 = 1e-12;

/// Paired non-inferiority of `candidate` to `reference` within the margin `delta` at one-sided
/// level `alpha`, from per-question values in the same order (Student 1908 for the paired t
/// bound; Wellek 2010 for non-inferiority as that bound against −δ):
///
/// - the differences `d_i = candidate_i − reference_i`, their mean Δ and sample sd `s`;
/// - the one-sided (1 − α) bounds `Δ ∓ t(1 − α, n − 1) · s / √n`;
/// - **non-inferior** when the lower bound is ≥ −δ (H0 "worse by δ or more" rejected at α);
///   else **worse** when the upper bound is < −δ (H0 "worse by less than δ" rejected at α: worse
///   by more than the margin, not merely significantly worse);
///   else **undetermined**. The classes are exclusive: lower ≤ upper.
///
/// With n < 2 the variance is unknown: the bounds are infinite and the class undetermined. With
/// s = 0 both bounds are Δ. No multiplicity correction: one call is one comparison.
///
/// Example (δ = 0.05, α = 0.05): 40 questions, one 0.5 lower and 39 equal: Δ = −0.0125,
/// s = 0.079057, lower bound −0.0125 − 1.684875 · 0.0125 = −0.033561 ≥ −0.05: non-inferior.
///
/// # Panics
/// If the slices differ in length, `delta` is not positive or `alpha` is not in (0, 1).
pub fn non_inferiority(
    reference: &[f64],
    candidate: &[f64],
    delta: f64,
    alpha: f64,
) -> NonInferiority {
    assert_eq!(
        reference.len(),
        candidate.len(),
        "paired outcomes differ in length"
    );
    assert!(delta > 0.0, "the margin δ = {delta} must be positive");
    assert!(alpha > 0.0 && alpha < 1.0, "α = {alpha} must be in (0, 1)");
    let n = reference.len();
    let d: Vec<f64> = candidate
        .iter()
        .zip(reference)
        .map(|(c, r)| c - r)
        .collect();
    let mean = if n == 0 {
        0.0
    } else {
        d.iter().sum::<f64>() / n as f64
    };
    let (sd, half) = if n < 2 {
        (0.0, f64::INFINITY)
    } else {
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .expect("n − 1 ≥ 1 degrees of freedom")
            .inverse_cdf(1.0 - alpha);
        (sd, t * sd / (n as f64).sqrt())
    };
    let (lower, upper) = (mean - half, mean + half);
    let class = if lower >= -delta - BOUND_EPS {
        Class::NonInferior
    } else if upper < -delta - BOUND_EPS {
        Class::Worse
    } else {
        Class::Undetermined
    };
    NonInferiority {
        n,
        mean_difference: mean,
        sd_difference: sd,
        lower,
        upper,
        delta,
        alpha,
        class,
    }
}

/// The number of questions (in all, not in addition) a paired comparison needs to show
/// non-inferiority within `delta` at one-sided level `alpha` with the given `power`, if the true
/// mean paired difference is `mean_difference` (candidate − reference; the planning difference,
/// [`PLANNING_DIFFERENCE`] in every report) and its standard deviation `sd_difference` (Chow,
/// Shao and Wang 2008, §3.1, the paired design as one sample of differences):
///
/// `n = ⌈((z(1 − α) + z(power)) · σ_d / |δ + Δ|)²⌉`
///
/// The nearer Δ is to −δ, the more questions; at Δ = −δ none suffice. Normal quantiles, so it is
/// a planning figure: at small n the t bound of [`non_inferiority`] is a little wider.
///
/// `None` when it cannot be computed: Δ exactly on the margin (|δ + Δ| < 1e-12, no number of
/// questions settles it), σ_d or Δ not finite, or `alpha`/`power` outside (0, 1). σ_d = 0 gives 0
/// (nothing to estimate).
///
/// Example: σ_d = 0.235702, Δ = 0, δ = 0.05, α = 0.05, power 0.8:
/// ((1.644854 + 0.841621) · 0.235702 / 0.05)² = 137.39 → 138.
pub fn questions_needed(
    sd_difference: f64,
    mean_difference: f64,
    delta: f64,
    alpha: f64,
    power: f64,
) -> Option<u64> {
    let gap = (delta + mean_difference).abs();
    let valid = sd_difference.is_finite()
        && mean_difference.is_finite()
        && gap >= 1e-12
        && alpha > 0.0
        && alpha < 1.0
        && power > 0.0
        && power < 1.0;
    if !valid {
        return None;
    }
    let normal = Normal::standard();
    let z = normal.inverse_cdf(1.0 - alpha) + normal.inverse_cdf(power);
    let n = (z * sd_difference / gap).powi(2).ceil();
    (n < u64::MAX as f64).then_some(n as u64)
}

/// Holm's (1979) step-down adjusted p-values for a family of `m` tests, in the input order:
/// with the p-values sorted ascending as `p(1) ≤ … ≤ p(m)`, the adjusted value of `p(i)` is
/// `max over j ≤ i of min(1, (m − j + 1) · p(j))`. Rejecting where the adjusted value is below
/// α controls the family-wise error rate at α without assuming independence. Equal p-values
/// keep their input order. An empty family gives an empty vector.
///
/// Example: `[0.01, 0.04, 0.03, 0.005]` → `[0.03, 0.06, 0.06, 0.02]`.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]).then(a.cmp(&b)));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (j, &i) in order.iter().enumerate() {
        running = running.max(((m - j) as f64 * p_values[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Seeded bootstrap resamples of `n` items: `resamples` vectors of `n` indices drawn with
/// replacement (ChaCha8 seeded with `seed`). Sharing one set of resamples across configurations
/// keeps their intervals paired on the same question draws and makes them reproducible.
pub fn bootstrap_indices(n: usize, resamples: usize, seed: u64) -> Vec<Vec<u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..resamples)
        .map(|_| {
            (0..n)
                .map(|_| rng.random_range(0..n.max(1)) as u32)
                .collect()
        })
        .collect()
}

/// Percentile bootstrap interval (Efron and Tibshirani 1993) of the mean of `values`, over the
/// given resamples of their indices (see [`bootstrap_indices`]): the `(1 − confidence)/2` and
/// `(1 + confidence)/2` quantiles of the resampled means (linear interpolation between order
/// statistics). No values give `[0, 0]`; no resamples give the point estimate twice.
///
/// # Panics
/// If an index in `resamples` is out of range for `values`.
pub fn bootstrap_mean(values: &[f64], resamples: &[Vec<u32>], confidence: f64) -> Interval {
    if values.is_empty() {
        return Interval { lo: 0.0, hi: 0.0 };
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if resamples.is_empty() {
        return Interval { lo: mean, hi: mean };
    }
    let means: Vec<f64> = resamples
        .iter()
        .map(|idx| idx.iter().map(|&i| values[i as usize]).sum::<f64>() / idx.len() as f64)
        .collect();
    let alpha = (1.0 - confidence) / 2.0;
    Interval {
        lo: quantile(&means, alpha).expect("at least one resample"),
        hi: quantile(&means, 1.0 - alpha).expect("at least one resample"),
    }
}

/// Relative reduction of a failure rate, `(before − after) / before` (0.35: a third fewer
/// failures; negative: more); `None` when `before` is 0 (nothing to reduce).
pub fn relative_reduction(before: f64, after: f64) -> Option<f64> {
    (before > 0.0).then(|| (before - after) / before)
}

/// Percentile bootstrap interval of the [`relative_reduction`] from the mean of `before` to the
/// mean of `after` (paired: the same resampled indices for both; see [`bootstrap_indices`]).
/// Resamples whose `before` mean is 0 are left out; `None` when every one is (or there is none).
///
/// # Panics
/// If an index in `resamples` is out of range for `before` or `after`.
pub fn bootstrap_reduction(
    before: &[f64],
    after: &[f64],
    resamples: &[Vec<u32>],
    confidence: f64,
) -> Option<Interval> {
    let mean = |v: &[f64], idx: &[u32]| {
        idx.iter().map(|&i| v[i as usize]).sum::<f64>() / idx.len().max(1) as f64
    };
    let reductions: Vec<f64> = resamples
        .iter()
        .filter_map(|idx| relative_reduction(mean(before, idx), mean(after, idx)))
        .collect();
    let alpha = (1.0 - confidence) / 2.0;
    Some(Interval {
        lo: quantile(&reductions, alpha)?,
        hi: quantile(&reductions, 1.0 - alpha)?,
    })
}

/// Quantile `q` in [0, 1] of `values` (any order), interpolating linearly between order
/// statistics (type 7 of Hyndman and Fan 1996, the default of R and NumPy: the median of 1..=4 is
/// 2.5, its 0.95 quantile 3.85); `None` for no value. The one quantile of the crate: bootstrap
/// intervals, semantic chunking's distance threshold and latency percentiles all use it.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn quantile_interpolates_like_numpy() {
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.5), Some(3.0));
        // numpy.percentile([1, 2, 3, 4], 95) = 3.85; numpy.median(range(1, 21)) = 10.5
        assert!((quantile(&[4.0, 1.0, 3.0, 2.0], 0.95).unwrap() - 3.85).abs() < 1e-12);
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), Some(10.5));
        assert!((quantile(&v, 0.95).unwrap() - 19.05).abs() < 1e-12);
        assert_eq!(quantile(&[3.0], 0.95), Some(3.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn z_is_the_familiar_quantile() {
        assert!(close(z_for(0.95), 1.959964, 1e-6), "{}", z_for(0.95));
        assert!(close(z_for(0.90), 1.644854, 1e-6));
    }

    #[test]
    fn wilson_matches_published_values() {
        // 8 of 10 at 95%: 0.490 to 0.943 (the value quoted in issue 3).
        let ci = wilson(8, 10, 0.95);
        assert!(close(ci.lo, 0.4902, 5e-4), "{ci:?}");
        assert!(close(ci.hi, 0.9433, 5e-4), "{ci:?}");
        // Newcombe (1998), Statistics in Medicine 17: 857–872, worked examples, score method:
        // 81/263 → 0.2553–0.3662, 1/29 → 0.0061–0.1718, 0/20 → 0–0.1611 (no collapse at 0).
        let ci = wilson(81, 263, 0.95);
        assert!(close(ci.lo, 0.2553, 5e-4), "{ci:?}");
        assert!(close(ci.hi, 0.3662, 5e-4), "{ci:?}");
        let ci = wilson(1, 29, 0.95);
        assert!(close(ci.lo, 0.0061, 5e-4), "{ci:?}");
        assert!(close(ci.hi, 0.1718, 5e-4), "{ci:?}");
        let ci = wilson(0, 20, 0.95);
        assert_eq!(ci.lo, 0.0);
        assert!(close(ci.hi, 0.1611, 5e-4), "{ci:?}");
        // n = 0 is uninformative rather than a division by zero.
        assert_eq!(wilson(0, 0, 0.95), Interval { lo: 0.0, hi: 1.0 });
    }

    #[test]
    fn wilson_is_symmetric_in_successes_and_failures() {
        let a = wilson(3, 17, 0.95);
        let b = wilson(14, 17, 0.95);
        assert!(close(a.lo, 1.0 - b.hi, 1e-12) && close(a.hi, 1.0 - b.lo, 1e-12));
    }

    #[test]
    fn exact_mcnemar_matches_the_binomial_tail() {
        // b = 2, c = 10: 2 · (1 + 12 + 66) / 4096 = 0.038574.
        let t = mcnemar_exact(2, 10);
        assert!(close(t.p_value, 0.038574, 1e-6), "{t:?}");
        assert_eq!(mcnemar_exact(10, 2).p_value, t.p_value);
        // Balanced discordance is capped at 1, and no discordant pair means no evidence.
        assert_eq!(mcnemar_exact(5, 5).p_value, 1.0);
        assert_eq!(mcnemar_exact(0, 0).p_value, 1.0);
        // b = 0, c = 6: 2 / 64 = 0.03125.
        assert!(close(mcnemar_exact(0, 6).p_value, 0.03125, 1e-12));
    }

    #[test]
    fn paired_mcnemar_counts_discordant_pairs_in_order() {
        let a = [true, true, false, false, true];
        let b = [false, true, true, false, false];
        let t = mcnemar_paired(&a, &b);
        assert_eq!((t.b, t.c), (2, 1));
    }

    #[test]
    fn sign_test_counts_graded_differences_and_matches_mcnemar_on_0_1() {
        let a = [1.0, 0.5, 0.5, 0.0, 1.0, 1.0];
        let b = [0.5, 0.5, 1.0, 0.0, 0.0, 1.0];
        let t = sign_test(&a, &b);
        assert_eq!((t.b, t.c), (2, 1));
        // 3 discordant, 2 vs 1: p = 2 · (1 + 3) / 8 = 1 (capped).
        assert_eq!(t.p_value, 1.0);
        // On 0/1 values it is McNemar: b = 0, c = 6 gives 2 / 64.
        let zeros = [0.0; 8];
        let six = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0];
        let t = sign_test(&zeros, &six);
        assert_eq!((t.b, t.c), (0, 6));
        assert!(close(t.p_value, 0.03125, 1e-12));
        // A rounding residue is a tie, not a difference.
        assert_eq!(sign_test(&[1.0 / 3.0], &[1.0 - 2.0 / 3.0]).c, 0);
    }

    #[test]
    fn holm_adjusted_p_values_equal_the_hand_computed_ones() {
        // Sorted: 0.005·4 = 0.02; 0.01·3 = 0.03; 0.03·2 = 0.06; 0.04·1 = 0.04 → max(0.06, 0.04).
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!(close(*a, w, 1e-12), "{adj:?}");
        }
        // Capped at 1, and a single test is left alone.
        assert_eq!(holm(&[0.4, 0.5, 0.9]), vec![1.0, 1.0, 1.0]);
        assert_eq!(holm(&[0.03]), vec![0.03]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn one_sided_sign_test_counts_worse_questions_and_equals_the_binomial_tail() {
        // 6 worse, 0 better: 1/64.
        let reference = [1.0; 8];
        let candidate = [0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 1.0, 1.0];
        let t = sign_test_worse(&reference, &candidate);
        assert_eq!((t.reference_better, t.candidate_better), (6, 0));
        assert!(close(t.p_value, 0.015625, 1e-12), "{t:?}");
        // 10 worse, 2 better: P(X ≥ 10 | 12, ½) = 79/4096; the other way round it is not worse:
        // P(X ≥ 2) = 1 − 13/4096.
        let a: Vec<f64> = (0..12).map(|i| f64::from(u8::from(i < 10))).collect();
        let b: Vec<f64> = a.iter().map(|x| 1.0 - x).collect();
        assert!(close(sign_test_worse(&a, &b).p_value, 79.0 / 4096.0, 1e-12));
        assert!(close(
            sign_test_worse(&b, &a).p_value,
            1.0 - 13.0 / 4096.0,
            1e-12
        ));
        // One question that got worse is never significant; none gives 1.
        assert!(close(
            sign_test_worse(&[1.0, 1.0], &[0.0, 1.0]).p_value,
            0.5,
            1e-12
        ));
        assert_eq!(sign_test_worse(&[1.0], &[1.0]).p_value, 1.0);
    }

    /// `n` per-question differences: `d` repeated `k` times, the rest 0; reference all 1.
    fn pairs(n: usize, diffs: &[(f64, usize)]) -> (Vec<f64>, Vec<f64>) {
        let mut cand: Vec<f64> = diffs
            .iter()
            .flat_map(|&(d, k)| std::iter::repeat_n(1.0 + d, k))
            .collect();
        cand.resize(n, 1.0);
        (vec![1.0; n], cand)
    }

    #[test]
    fn non_inferiority_puts_hand_made_rows_in_the_three_classes() {
        // Non-inferior: 40 questions, one 0.5 lower. Δ = −0.0125, s = √(0.24375/39) = 0.079057,
        // s/√40 = 0.0125, t(0.95, 39) = 1.684875: lower = −0.033561 ≥ −0.05.
        let (r, c) = pairs(40, &[(-0.5, 1)]);
        let t = non_inferiority(&r, &c, 0.05, 0.05);
        assert_eq!(t.class, Class::NonInferior);
        assert!(close(t.mean_difference, -0.0125, 1e-12));
        assert!(close(t.sd_difference, 0.079057, 1e-6), "{t:?}");
        assert!(close(t.lower, -0.033561, 1e-6), "{t:?}");
        assert!(close(t.upper, 0.008561, 1e-6), "{t:?}");
        // Worse: 4 questions, differences −1, −1, −0.5, −0.5. Δ = −0.75, s = 0.288675,
        // s/√4 = 0.144338, t(0.95, 3) = 2.353363: upper = −0.410321 < −0.05.
        let (r, c) = pairs(4, &[(-1.0, 2), (-0.5, 2)]);
        let t = non_inferiority(&r, &c, 0.05, 0.05);
        assert_eq!(t.class, Class::Worse);
        assert!(close(t.upper, -0.410321, 1e-6), "{t:?}");
        assert!(close(t.lower, -1.089679, 1e-6), "{t:?}");
        // Undetermined: 20 questions, one 0.5 lower. Δ = −0.025, s = 0.111803, s/√20 = 0.025,
        // t(0.95, 19) = 1.729133: lower = −0.068228 < −0.05 ≤ upper = 0.018228.
        let (r, c) = pairs(20, &[(-0.5, 1)]);
        let t = non_inferiority(&r, &c, 0.05, 0.05);
        assert_eq!(t.class, Class::Undetermined);
        assert!(close(t.lower, -0.068228, 1e-6), "{t:?}");
        // Identical values: s = 0, both bounds 0, non-inferior.
        let t = non_inferiority(&[0.5, 1.0, 0.0], &[0.5, 1.0, 0.0], 0.05, 0.05);
        assert_eq!((t.class, t.lower, t.upper), (Class::NonInferior, 0.0, 0.0));
        // One question: no variance, undetermined, nothing to compute.
        let t = non_inferiority(&[1.0], &[1.0], 0.05, 0.05);
        assert_eq!(t.class, Class::Undetermined);
        assert_eq!(t.questions_needed(0.8), None);
    }

    #[test]
    fn equivalence_decides_differently_from_the_fixed_0_02_tolerance() {
        // 10 questions, one 0.5 higher and one 0.5 lower: Δ = 0, within 0.02 of the best, and the
        // sign test sees 1 vs 1 (p = 1), so "within 0.02 and not significantly worse" kept it as
        // good. Equivalence: s = √(0.5/9) = 0.235702, s/√10 = 0.074536, t(0.95, 9) = 1.833113:
        // lower = −0.136632 < −0.05 < upper = 0.136632: undetermined.
        let (r, c) = pairs(10, &[(0.5, 1), (-0.5, 1)]);
        let t = non_inferiority(&r, &c, 0.05, 0.05);
        assert!(t.mean_difference.abs() <= 0.02);
        assert_eq!(sign_test(&r, &c).p_value, 1.0);
        assert_eq!(t.class, Class::Undetermined);
        assert!(close(t.lower, -0.136632, 1e-6), "{t:?}");
        // Planned at a true difference of 0: ((1.644854 + 0.841621) · 0.235702 / 0.05)² = 137.39,
        // so 138 questions would show it within δ if it were as good as the best.
        assert_eq!(t.questions_needed(0.8), Some(138));
        // Δ̂ = 0 sits 0.05 / 0.074536 = 0.670820 standard errors above −δ: F_t(9)(−0.670820) =
        // 0.2596 that it is worse by more than δ.
        assert!(close(t.probability_worse().unwrap(), 0.2596, 5e-4), "{t:?}");
        // 200 questions, 10 of them 0.5 lower: Δ = −0.025, more than 0.02 below, so the
        // tolerance dropped it. Equivalence: s = √(2.375/199) = 0.109246, s/√200 = 0.007725,
        // t(0.95, 199) = 1.652547: lower = −0.037766 ≥ −0.05: non-inferior.
        let (r, c) = pairs(200, &[(-0.5, 10)]);
        let t = non_inferiority(&r, &c, 0.05, 0.05);
        assert!(t.mean_difference < -0.02);
        assert_eq!(t.class, Class::NonInferior);
        assert!(close(t.lower, -0.037766, 1e-6), "{t:?}");
    }

    #[test]
    fn questions_needed_plans_for_a_true_difference_of_zero() {
        // 20 questions, one 0.5 lower: Δ̂ = −0.025, s = 0.111803, s/√20 = 0.025. Planned at a true
        // difference of 0, not at Δ̂: (2.486475 · 0.111803 / 0.05)² = 30.91 → 31 questions (at
        // Δ̂ it would have been 124).
        let (r, c) = pairs(20, &[(-0.5, 1)]);
        let t = non_inferiority(&r, &c, 0.05, 0.05);
        assert_eq!(t.questions_needed(0.8), Some(31));
        // P(worse by more than δ) = F_t(19)((−0.05 + 0.025) / 0.025) = F_t(19)(−1) = 0.1649.
        assert!(close(t.probability_worse().unwrap(), 0.1649, 5e-4), "{t:?}");
        // A difference exactly on −δ (the case that used to give no figure at all): 10
        // questions, one 0.5 lower: Δ̂ = −0.05, s = 0.158114: (2.486475 · 0.158114 / 0.05)² =
        // 61.83 → 62, and P(worse by more than δ) is exactly ½.
        let (r, c) = pairs(10, &[(-0.5, 1)]);
        let t = non_inferiority(&r, &c, 0.05, 0.05);
        assert_eq!(t.questions_needed(0.8), Some(62));
        assert!(close(t.probability_worse().unwrap(), 0.5, 1e-9), "{t:?}");
        // No variance: worse for sure when Δ̂ < −δ, never otherwise.
        let (r, c) = pairs(4, &[(-0.5, 4)]);
        assert_eq!(
            non_inferiority(&r, &c, 0.05, 0.05).probability_worse(),
            Some(1.0)
        );
        let t = non_inferiority(&[1.0], &[1.0], 0.05, 0.05);
        assert_eq!(t.probability_worse(), None);
    }

    #[test]
    fn questions_needed_follows_the_sample_size_formula() {
        // σ_d = 0.111803, Δ = −0.025, δ = 0.05: (2.486475 · 0.111803 / 0.025)² = 123.65 → 124.
        assert_eq!(
            questions_needed(0.111803, -0.025, 0.05, 0.05, 0.8),
            Some(124)
        );
        // Δ = −0.0125: (2.486475 · 0.079057 / 0.0375)² = 27.48 → 28.
        assert_eq!(
            questions_needed(0.079057, -0.0125, 0.05, 0.05, 0.8),
            Some(28)
        );
        // Past the margin the same distance counts: Δ = −0.075 needs as many as Δ = −0.025.
        assert_eq!(
            questions_needed(0.111803, -0.075, 0.05, 0.05, 0.8),
            questions_needed(0.111803, -0.025, 0.05, 0.05, 0.8)
        );
        // On the margin no number of questions settles it; bad inputs give nothing.
        assert_eq!(questions_needed(0.1, -0.05, 0.05, 0.05, 0.8), None);
        assert_eq!(questions_needed(f64::NAN, 0.0, 0.05, 0.05, 0.8), None);
        assert_eq!(questions_needed(0.1, 0.0, 0.05, 0.05, 1.0), None);
        assert_eq!(questions_needed(0.0, -0.01, 0.05, 0.05, 0.8), Some(0));
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let values: Vec<f64> = (0..40).map(|i| f64::from(i % 4) / 3.0).collect();
        let r1 = bootstrap_indices(values.len(), 2000, 42);
        let r2 = bootstrap_indices(values.len(), 2000, 42);
        assert_eq!(r1, r2);
        let ci = bootstrap_mean(&values, &r1, 0.95);
        let mean = values.iter().sum::<f64>() / 40.0;
        assert!(ci.lo < mean && mean < ci.hi, "{ci:?} vs {mean}");
        // Standard error of the mean is sd/sqrt(n) = 0.3727/6.32 = 0.059; the 95% half-width
        // should be about 1.96 × 0.059 = 0.115 (generous tolerance for resampling noise).
        let half = (ci.hi - ci.lo) / 2.0;
        assert!(close(half, 0.115, 0.02), "half-width {half}");
        // A constant has a zero-width interval.
        let ci = bootstrap_mean(&[0.7; 40], &r1, 0.95);
        assert!(close(ci.lo, 0.7, 1e-12) && close(ci.hi, 0.7, 1e-12));
    }
}

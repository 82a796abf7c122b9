use super::*;

#[test]
fn the_baselines_judge_settings_carry_over_but_not_its_spending_cap() {
    let recorded = JudgeSettings {
        generator_model: "gen-of-the-baseline".into(),
        max_cost_usd: Some(0.5),
        ..JudgeSettings::default()
    };
    let none = JudgeSection::default();
    let cap = |usd: f64| JudgeSection {
        max_cost_usd: Some(usd),
        ..JudgeSection::default()
    };
    let given = judge_settings(&recorded, &none, &none).unwrap();
    assert_eq!(given.generator_model, "gen-of-the-baseline");
    assert_eq!(
        given.max_cost_usd, None,
        "no cap unless this command sets one"
    );
    let from_file = judge_settings(&recorded, &cap(1.0), &none).unwrap();
    assert_eq!(from_file.max_cost_usd, Some(1.0));
    let from_flag = judge_settings(&recorded, &cap(1.0), &cap(2.0)).unwrap();
    assert_eq!(from_flag.max_cost_usd, Some(2.0));
}

//! What `GET /api/scenario` tells of a scenario file: its parameters (the
//! value as written, the value it evaluates to, the comment beside it, the
//! laws to choose from when it names one), its recorded columns and its
//! plots, and the run's time interval.

use std::collections::BTreeMap;

use nonsmooth_scenario::Scenario;
use serde::Serialize;

/// One `[parameters]` entry.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Parameter {
    /// Its name.
    pub name: String,
    /// `number` (a number in the file), `expression` (an expression of
    /// other parameters, evaluating to a number) or `word` (a text such as
    /// a law's name).
    pub kind: &'static str,
    /// The value as written in the file (a number's text, an expression
    /// or a word).
    pub default: String,
    /// The number it evaluates to (none for a word).
    pub value: Option<f64>,
    /// The comment beside it or on the lines above it.
    pub comment: Option<String>,
    /// The values to choose from, when the word names a control law.
    pub choices: Option<Vec<&'static str>>,
}

/// A `[[plots]]` entry.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Plot {
    /// Title.
    pub title: Option<String>,
    /// Abscissa column.
    pub x: String,
    /// Ordinate columns.
    pub y: Vec<String>,
}

/// A scenario as the page shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Description {
    /// The file, relative to the served folder.
    pub path: String,
    /// The scenario's name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// Its parameters, in the file's order.
    pub parameters: Vec<Parameter>,
    /// The recorded columns (`t` first), as the CSV header.
    pub columns: Vec<String>,
    /// The plots.
    pub plots: Vec<Plot>,
    /// Start and final time.
    pub t0: f64,
    /// Final time.
    pub t_end: f64,
    /// True for rigid bodies (`[[bodies]]`).
    pub rigid: bool,
    /// True for a co-simulation (`[[fmus]]`).
    pub cosim: bool,
}

/// Describes `scenario` (read from `text`, shown as `path`); builds it
/// with its defaults to know the columns and plots.
pub fn describe(
    scenario: &Scenario,
    text: &str,
    path: &str,
) -> Result<Description, nonsmooth_runs::RunError> {
    let values = scenario.parameters()?;
    let words = scenario.words()?;
    let laws = nonsmooth_runs::laws();
    let mut law_names = laws.controller_laws();
    law_names.extend(laws.observer_laws());
    let written = written_parameters(text);
    let mut parameters: Vec<Parameter> = Vec::new();
    let mut order: Vec<&str> = written.iter().map(|w| w.0.as_str()).collect();
    for name in scenario.parameter_names() {
        if !order.contains(&name) {
            order.push(name);
        }
    }
    for name in order {
        let (default, comment, is_number) = written
            .iter()
            .find(|w| w.0 == name)
            .map(|w| (w.1.clone(), w.2.clone(), w.3))
            .unwrap_or_default();
        let value = values.get(name).copied();
        let word = words.get(name);
        let kind = match (value, is_number) {
            (Some(_), true) => "number",
            (Some(_), false) => "expression",
            (None, _) => "word",
        };
        let choices = word
            .filter(|w| law_names.contains(&w.as_str()))
            .map(|_| law_names.clone());
        parameters.push(Parameter {
            name: name.to_string(),
            kind,
            default,
            value,
            comment,
            choices,
        });
    }
    let (columns, plots, t0, t_end, rigid) = if scenario.is_cosim() {
        let cols = nonsmooth_runs::columns(scenario)?;
        let built = cosim_plots(scenario);
        (cols, built, f64::NAN, f64::NAN, false)
    } else {
        let built = scenario.build_with(laws)?;
        let cols = built.header().iter().map(|s| s.to_string()).collect();
        let plots = built
            .plots
            .iter()
            .map(|p| Plot {
                title: p.title.clone(),
                x: p.x.clone(),
                y: p.y.clone(),
            })
            .collect();
        (
            cols,
            plots,
            built.settings.t0,
            built.settings.t_end,
            built.rigid.is_some(),
        )
    };
    Ok(Description {
        path: path.to_string(),
        name: scenario.name().to_string(),
        description: scenario.description().map(str::to_string),
        parameters,
        columns,
        plots,
        t0,
        t_end,
        rigid,
        cosim: scenario.is_cosim(),
    })
}

/// The plots of a co-simulation scenario, read from its text (its build
/// needs the FMUs; the plots do not).
fn cosim_plots(scenario: &Scenario) -> Vec<Plot> {
    let Ok(doc) = scenario.text().parse::<toml_edit::DocumentMut>() else {
        return Vec::new();
    };
    let Some(plots) = doc.get("plots").and_then(|p| p.as_array_of_tables()) else {
        return Vec::new();
    };
    plots
        .iter()
        .map(|t| Plot {
            title: t.get("title").and_then(|v| v.as_str()).map(str::to_string),
            x: t.get("x")
                .and_then(|v| v.as_str())
                .unwrap_or("t")
                .to_string(),
            y: t.get("y")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// The `[parameters]` entries as written: name, value text, comment, and
/// whether the value is a number.
fn written_parameters(text: &str) -> Vec<(String, String, Option<String>, bool)> {
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
        return Vec::new();
    };
    let Some(table) = doc.get("parameters").and_then(|p| p.as_table()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, item) in table.iter() {
        let Some(value) = item.as_value() else {
            continue;
        };
        let (text, is_number) = match value {
            toml_edit::Value::String(s) => (s.value().clone(), false),
            toml_edit::Value::Integer(i) => (i.value().to_string(), true),
            toml_edit::Value::Float(f) => (f.value().to_string(), true),
            v => (v.type_name().to_string(), false),
        };
        let mut comment = Vec::new();
        if let Some(above) = table
            .key(name)
            .and_then(|k| k.leaf_decor().prefix())
            .and_then(|p| p.as_str())
        {
            comment.extend(comment_lines(above));
        }
        if let Some(beside) = value.decor().suffix().and_then(|s| s.as_str()) {
            comment.extend(comment_lines(beside));
        }
        let comment = (!comment.is_empty()).then(|| comment.join(" "));
        out.push((name.to_string(), text, comment, is_number));
    }
    out
}

/// The text of the `#` comments in `decor`.
fn comment_lines(decor: &str) -> Vec<String> {
    decor
        .lines()
        .filter_map(|l| l.trim().strip_prefix('#'))
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The parameter values a request sets: a JSON number, or a text (a
/// number's text, an expression of the other parameters, or a word).
pub fn overrides(
    set: &BTreeMap<String, serde_json::Value>,
) -> Result<Vec<(String, nonsmooth_scenario::Quantity)>, String> {
    set.iter()
        .map(|(name, v)| match v {
            serde_json::Value::Number(n) => n
                .as_f64()
                .map(|x| (name.clone(), x.into()))
                .ok_or_else(|| format!("parameter `{name}`: {n} is not a number")),
            serde_json::Value::String(s) if !s.trim().is_empty() => {
                Ok((name.clone(), nonsmooth_runs::quantity(s)))
            }
            v => Err(format!(
                "parameter `{name}`: {v} is neither a number nor a text (an expression or a word)"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_above_and_beside_a_parameter() {
        let text = "name = \"x\"\n[parameters]\n# the gain\n# of the law\nalpha = 2 # > 0\nh = \"t / 10\"\nlaw = \"pid\"\n";
        let w = written_parameters(text);
        assert_eq!(w[0].0, "alpha");
        assert_eq!(w[0].1, "2");
        assert_eq!(w[0].2.as_deref(), Some("the gain of the law > 0"));
        assert!(w[0].3);
        assert_eq!(w[1].1, "t / 10");
        assert!(!w[1].3);
        assert_eq!(w[2].2, None);
    }
}

//! The `[parameters]`: resolved in dependency order, with overrides.

use std::collections::BTreeMap;

use exmex::Express;

use super::error::{Place, Result, ScenarioError, Source};
use super::expr::{self, Fault, Scope};
use super::schema::{Quantity, ScenarioFile};
use super::values::{fault_error, is_identifier};

struct ParamDef<'a> {
    quantity: &'a Quantity,
    place: Place,
}

/// Resolves every parameter (file values, replaced by overrides), in
/// dependency order.
pub(super) fn parameters(
    src: &Source,
    file: &ScenarioFile,
    overrides: &BTreeMap<String, Quantity>,
) -> Result<BTreeMap<String, f64>> {
    Ok(parameters_and_words(src, file, overrides)?.0)
}

/// True when a parameter's value is a word (such as a law name): a string
/// that is a plain name and not the name of a parameter, `t`, `pi` or a
/// function.
fn is_word(q: &Quantity, names: &[&str]) -> bool {
    match q {
        Quantity::Expression(text) => {
            let text = text.trim();
            is_identifier(text) && !expr::is_reserved(text) && !names.contains(&text)
        }
        Quantity::Number(_) => false,
    }
}

/// The numeric parameters, resolved, and the word parameters (e.g.
/// `law = "smc_implicit"`), which other values name where a word is
/// expected.
pub(super) fn parameters_and_words(
    src: &Source,
    file: &ScenarioFile,
    overrides: &BTreeMap<String, Quantity>,
) -> Result<(BTreeMap<String, f64>, BTreeMap<String, String>)> {
    let mut defs: BTreeMap<&str, ParamDef<'_>> = BTreeMap::new();
    if let Some(p) = &file.parameters {
        for (name, q) in p.get_ref() {
            let place = src.span(q.span());
            if !is_identifier(name) || expr::is_reserved(name) {
                return Err(ScenarioError::Invalid {
                    at: place,
                    reason: format!(
                        "`{name}` cannot be a parameter name: use letters, digits and `_`, \
                         not starting with a digit, and none of t, pi, {}",
                        expr::FUNCTIONS.join(", ")
                    ),
                });
            }
            let def = match overrides.get(name) {
                Some(o) => ParamDef {
                    quantity: o,
                    place: src.override_of(name),
                },
                None => ParamDef {
                    quantity: q.get_ref(),
                    place,
                },
            };
            defs.insert(name, def);
        }
    }
    // A parameter is a word when the file gives it a word; an override of
    // it is then a word too (taken literally, even if it names a parameter).
    let names: Vec<&str> = defs.keys().copied().collect();
    let mut words = BTreeMap::new();
    if let Some(p) = &file.parameters {
        for (name, q) in p.get_ref() {
            if !is_word(q.get_ref(), &names) {
                continue;
            }
            let def = &defs[name.as_str()];
            match def.quantity {
                Quantity::Expression(text) if is_identifier(text.trim()) => {
                    words.insert(name.to_string(), text.trim().to_string());
                }
                other => {
                    return Err(ScenarioError::Invalid {
                        at: def.place.clone(),
                        reason: format!(
                            "parameter `{name}` is a word (e.g. a law name), not {}",
                            match other {
                                Quantity::Number(x) => format!("the number {x}"),
                                Quantity::Expression(e) => format!("the expression `{e}`"),
                            }
                        ),
                    })
                }
            }
        }
    }
    defs.retain(|name, _| !words.contains_key(*name));
    let mut done = BTreeMap::new();
    for name in defs.keys().copied().collect::<Vec<_>>() {
        let mut stack = Vec::new();
        resolve(name, &defs, &mut done, &mut stack, &words)?;
    }
    Ok((done, words))
}

fn resolve<'a>(
    name: &'a str,
    defs: &BTreeMap<&'a str, ParamDef<'a>>,
    done: &mut BTreeMap<String, f64>,
    stack: &mut Vec<&'a str>,
    words: &BTreeMap<String, String>,
) -> Result<f64> {
    if let Some(&v) = done.get(name) {
        return Ok(v);
    }
    let def = &defs[name];
    if stack.contains(&name) {
        stack.push(name);
        return Err(ScenarioError::Invalid {
            at: def.place.clone(),
            reason: format!(
                "parameter `{name}` depends on itself ({})",
                stack.join(" → ")
            ),
        });
    }
    let text = match def.quantity {
        Quantity::Number(x) => {
            if !x.is_finite() {
                return Err(ScenarioError::NonFinite {
                    at: def.place.clone(),
                    what: format!("parameter `{name}`"),
                    value: *x,
                });
            }
            done.insert(name.to_string(), *x);
            return Ok(*x);
        }
        Quantity::Expression(text) => text.as_str(),
    };
    let known: Vec<&str> = defs.keys().copied().collect();
    let located = |f: Fault, done: &BTreeMap<String, f64>| match f {
        Fault::UnknownName(n) => ScenarioError::UnknownParameter {
            at: def.place.clone(),
            name: n,
            expression: text.to_string(),
            known: expr::list(&known),
        },
        Fault::TimeNotAllowed => ScenarioError::Expression {
            at: def.place.clone(),
            expression: text.to_string(),
            reason: format!("parameter `{name}` cannot depend on time `t`"),
        },
        f => fault_error(
            def.place.clone(),
            text,
            &format!("parameter `{name}`"),
            &Scope::constant(done),
            f,
        ),
    };
    let ex = expr::parse(text).map_err(|f| located(f, done))?;
    stack.push(name);
    for var in ex.var_names() {
        if var == "t" {
            return Err(located(Fault::TimeNotAllowed, done));
        }
        if let Some(word) = words.get(var.as_str()) {
            return Err(ScenarioError::Expression {
                at: def.place.clone(),
                expression: text.to_string(),
                reason: format!("parameter `{var}` is the word `{word}`, not a number"),
            });
        }
        let Some((&dep, _)) = defs.get_key_value(var.as_str()) else {
            return Err(located(Fault::UnknownName(var.clone()), done));
        };
        resolve(dep, defs, done, stack, words)?;
    }
    stack.pop();
    let v = Scope::constant(done)
        .constant_value(text)
        .map_err(|f| located(f, done))?;
    done.insert(name.to_string(), v);
    Ok(v)
}

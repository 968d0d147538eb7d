//! Expressions in scenario files, parsed and evaluated by the `exmex` crate
//! with this module's operators (below) and number syntax (decimal, with an
//! optional exponent: `1e-3`, `2.5E+4`).
//!
//! An expression that does not use `t` is evaluated once, when the scenario
//! is built. One that uses `t` is compiled once: every other name is
//! replaced by its value and the constant parts are folded, so evaluating it
//! at a time takes the slice `[t]` and, for expressions of up to 32 leaves,
//! allocates nothing (exmex keeps its operand stack inline up to that size).

use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::fmt::Write as _;
use std::rc::Rc;

use exmex::prelude::*;
use exmex::{BinOp, MakeOperators, MatchLiteral, Operator};

use super::parsed::{Cached, Parsed};
use super::tape::{self, Sym, SymOperators};

/// The functions accepted in expressions (`pow`, `atan2`, `hypot`, `min`
/// and `max` take two arguments, the others one).
pub const FUNCTIONS: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "ln",
    "log10", "sqrt", "abs", "sign", "floor", "ceil", "round", "min", "max", "pow", "hypot",
];

/// The functions of two arguments.
const BINARY_FUNCTIONS: &[&str] = &["atan2", "hypot", "min", "max", "pow"];

/// Names that cannot be parameters: the constant `pi`, the time `t` and the
/// function names.
pub(crate) fn is_reserved(name: &str) -> bool {
    name == "pi" || name == "t" || FUNCTIONS.contains(&name)
}

/// The operators and functions of scenario expressions: `f64`'s (the
/// platform's libm for the transcendental functions).
#[derive(Clone, Debug)]
pub(crate) struct Operators;

fn bin(
    repr: &'static str,
    prio: i64,
    commutative: bool,
    f: fn(f64, f64) -> f64,
) -> Operator<'static, f64> {
    Operator::make_bin(
        repr,
        BinOp {
            apply: f,
            prio,
            is_commutative: commutative,
        },
    )
}

impl MakeOperators<f64> for Operators {
    fn make<'a>() -> Vec<Operator<'a, f64>> {
        vec![
            bin("^", 4, false, f64::powf),
            bin("*", 2, true, |a, b| a * b),
            bin("/", 3, false, |a, b| a / b),
            Operator::make_bin_unary(
                "+",
                BinOp {
                    apply: |a, b| a + b,
                    prio: 0,
                    is_commutative: true,
                },
                |a| a,
            ),
            Operator::make_bin_unary(
                "-",
                BinOp {
                    apply: |a, b| a - b,
                    prio: 1,
                    is_commutative: false,
                },
                |a| -a,
            ),
            bin("pow", 0, false, f64::powf),
            bin("atan2", 0, false, f64::atan2),
            bin("hypot", 0, false, f64::hypot),
            bin("min", 0, true, f64::min),
            bin("max", 0, true, f64::max),
            Operator::make_unary("sin", f64::sin),
            Operator::make_unary("cos", f64::cos),
            Operator::make_unary("tan", f64::tan),
            Operator::make_unary("asin", f64::asin),
            Operator::make_unary("acos", f64::acos),
            Operator::make_unary("atan", f64::atan),
            Operator::make_unary("sinh", f64::sinh),
            Operator::make_unary("cosh", f64::cosh),
            Operator::make_unary("tanh", f64::tanh),
            Operator::make_unary("exp", f64::exp),
            Operator::make_unary("ln", f64::ln),
            Operator::make_unary("log10", f64::log10),
            Operator::make_unary("sqrt", f64::sqrt),
            Operator::make_unary("abs", f64::abs),
            Operator::make_unary("sign", tape::sign),
            Operator::make_unary("floor", f64::floor),
            Operator::make_unary("ceil", f64::ceil),
            Operator::make_unary("round", f64::round),
            Operator::make_constant("pi", PI),
        ]
    }
}

/// Numbers: digits with an optional fraction and exponent.
#[derive(Clone, Debug)]
pub(crate) struct Literals;

impl MatchLiteral for Literals {
    fn is_literal(text: &str) -> Option<&str> {
        number_prefix(text)
    }
}

fn number_prefix(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let int_end = digits(0);
    let mut end = int_end;
    let mut frac_digits = 0;
    if end < b.len() && b[end] == b'.' && !(end + 1 < b.len() && b[end + 1] == b'.') {
        let f = digits(end + 1);
        frac_digits = f - end - 1;
        end = f;
    }
    if int_end == 0 && frac_digits == 0 {
        return None;
    }
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let mut k = end + 1;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        let e = digits(k);
        if e > k {
            end = e;
        }
    }
    Some(&text[..end])
}

/// A compiled expression.
pub(crate) type Ex = FlatEx<f64, Operators, Literals>;

/// What is wrong with an expression (the caller adds where it is).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fault {
    /// It does not parse.
    Syntax(String),
    /// A name that is not in scope.
    UnknownName(String),
    /// `t` where the value must be constant.
    TimeNotAllowed,
    /// The value is NaN or infinite.
    NotFinite(f64),
    /// The value must be an integer.
    NotInteger(f64),
}

/// Parses an expression, checking its function names.
pub(crate) fn parse(text: &str) -> Result<Ex, Fault> {
    if text.trim().is_empty() {
        return Err(Fault::Syntax("the expression is empty".into()));
    }
    check_tokens(text)?;
    Ex::parse(text).map_err(|e| Fault::Syntax(e.to_string()))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'s> {
    Number,
    Name(&'s str),
    Open,
    Close,
    Comma,
    Op(u8),
}

fn tokens(text: &str) -> Vec<Token<'_>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token::Name(&text[start..i]));
            continue;
        }
        if c.is_ascii_digit() || c == b'.' {
            i += number_prefix(&text[i..]).map_or(1, |s| s.len().max(1));
            out.push(Token::Number);
            continue;
        }
        match c {
            b'(' => out.push(Token::Open),
            b')' => out.push(Token::Close),
            b',' => out.push(Token::Comma),
            c if c.is_ascii_whitespace() => {}
            c => out.push(Token::Op(c)),
        }
        i += 1;
    }
    out
}

/// Index after the operand starting at `i` (a number, a name, a function
/// call or a parenthesised group), skipping leading signs.
fn operand_end(t: &[Token<'_>], mut i: usize) -> usize {
    while matches!(t.get(i), Some(Token::Op(b'-' | b'+'))) {
        i += 1;
    }
    let group_end = |mut k: usize| {
        let mut depth = 0usize;
        while k < t.len() {
            match t[k] {
                Token::Open => depth += 1,
                Token::Close => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return k + 1;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        k
    };
    match t.get(i) {
        Some(Token::Number) => i + 1,
        Some(Token::Name(_)) if t.get(i + 1) == Some(&Token::Open) => group_end(i + 1),
        Some(Token::Name(_)) => i + 1,
        Some(Token::Open) => group_end(i),
        _ => i,
    }
}

/// Rejects `name(` where `name` is no function (with a clearer message than
/// the parser's), and the forms whose reading differs from the usual
/// mathematical one: `-a^b` (read as `(-a)^b`) and `a^b^c` (read as
/// `(a^b)^c`).
fn check_tokens(text: &str) -> Result<(), Fault> {
    let t = tokens(text);
    for (k, tok) in t.iter().enumerate() {
        match *tok {
            Token::Name(name)
                if t.get(k + 1) == Some(&Token::Open) && !FUNCTIONS.contains(&name) =>
            {
                return Err(Fault::Syntax(format!(
                    "unknown function `{name}` (functions: {})",
                    FUNCTIONS.join(", ")
                )));
            }
            Token::Op(b'-' | b'+')
                if matches!(
                    k.checked_sub(1).map(|p| t[p]),
                    None | Some(Token::Op(_) | Token::Open | Token::Comma)
                ) && !matches!(k.checked_sub(1).map(|p| t[p]), Some(Token::Op(b'^'))) =>
            {
                let end = operand_end(&t, k + 1);
                if t.get(end) == Some(&Token::Op(b'^')) {
                    return Err(Fault::Syntax(
                        "a sign before a power is ambiguous: write -(a^b) or (-a)^b".into(),
                    ));
                }
            }
            Token::Name(name)
                if BINARY_FUNCTIONS.contains(&name) && t.get(k + 1) == Some(&Token::Open) =>
            {
                let end = operand_end(&t, k);
                let nested = t[k + 1..end].windows(2).any(
                    |w| matches!(w, [Token::Name(n), Token::Open] if BINARY_FUNCTIONS.contains(n)),
                );
                let mut depth = 0usize;
                let mut after_comma = false;
                for tok in &t[k + 1..end] {
                    match tok {
                        Token::Open => depth += 1,
                        Token::Close => depth = depth.saturating_sub(1),
                        Token::Comma if depth == 1 => after_comma = true,
                        Token::Name(n) if after_comma && nested && BINARY_FUNCTIONS.contains(n) => {
                            return Err(Fault::Syntax(format!(
                                "the second argument of `{name}` cannot hold another two-argument \
                                 function (`{n}`): swap the arguments or use a parameter"
                            )));
                        }
                        _ => {}
                    }
                }
            }
            Token::Op(b'^') => {
                let end = operand_end(&t, k + 1);
                if t.get(end) == Some(&Token::Op(b'^')) {
                    return Err(Fault::Syntax(
                        "chained powers are ambiguous: write (a^b)^c or a^(b^c)".into(),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// An expression over [`Sym`], whose evaluation records a tape.
pub(crate) type SymEx = FlatEx<Sym, SymOperators, Literals>;

/// The names an expression may use besides `pi`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'a> {
    /// The resolved parameters.
    pub params: &'a BTreeMap<String, f64>,
    /// The index of a repeated entry, and its value.
    pub index: Option<(&'a str, i64)>,
    /// Whether `t` is allowed.
    pub time: bool,
    /// Where expressions already parsed are kept (none: parse each time).
    pub parsed: Option<&'a Parsed<'a>>,
}

impl<'a> Scope<'a> {
    /// Parameters only, constant values.
    pub fn constant(params: &'a BTreeMap<String, f64>) -> Self {
        Scope {
            params,
            index: None,
            time: false,
            parsed: None,
        }
    }

    /// The same scope, keeping parsed expressions in `parsed`.
    pub fn with_parsed(self, parsed: &'a Parsed<'a>) -> Self {
        Scope {
            parsed: Some(parsed),
            ..self
        }
    }

    /// [`parse`] of `text` and its value if known, through the cache if
    /// there is one.
    fn parse(&self, text: &str) -> Cached {
        match self.parsed {
            Some(p) => p.get(text),
            None => Cached {
                ex: parse(text).map(Rc::new),
                constant: None,
            },
        }
    }

    /// `text` over [`Sym`], through the cache if there is one.
    fn sym_parse(&self, text: &str) -> Option<Rc<SymEx>> {
        match self.parsed {
            Some(p) => p.sym(text),
            None => sym_parse(text).map(Rc::new),
        }
    }

    /// The same scope, with `t` allowed or not.
    pub fn with_time(self, time: bool) -> Self {
        Scope { time, ..self }
    }

    fn value(&self, name: &str) -> Result<Option<f64>, Fault> {
        if name == "t" {
            return if self.time {
                Ok(None)
            } else {
                Err(Fault::TimeNotAllowed)
            };
        }
        if let Some((n, v)) = self.index {
            if n == name {
                return Ok(Some(v as f64));
            }
        }
        match self.params.get(name) {
            Some(&v) => Ok(Some(v)),
            None => Err(Fault::UnknownName(name.to_string())),
        }
    }

    /// The names known in this scope, for messages.
    pub fn known(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        if let Some((n, _)) = self.index {
            names.push(n);
        }
        if self.time {
            names.push("t");
        }
        names.extend(self.params.keys().map(|s| s.as_str()));
        names.push("pi");
        list(&names)
    }

    /// Evaluates an expression whose value must not depend on time.
    pub fn constant_value(&self, text: &str) -> Result<f64, Fault> {
        match self.with_time(false).compile(text)? {
            Value::Constant(v) => Ok(v),
            Value::Timed(_) => Err(Fault::TimeNotAllowed),
        }
    }

    /// Evaluates an expression whose value must be an integer.
    pub fn integer(&self, text: &str) -> Result<i64, Fault> {
        let v = self.constant_value(text)?;
        if v.fract() == 0.0 && v.abs() <= 9.0e15 {
            Ok(v as i64)
        } else {
            Err(Fault::NotInteger(v))
        }
    }

    /// Compiles an expression: a constant when it does not use `t`, else a
    /// function of time with every other name replaced by its value.
    pub fn compile(&self, text: &str) -> Result<Value, Fault> {
        let cached = self.parse(text);
        if let Some(v) = cached.constant {
            return Ok(Value::Constant(v));
        }
        let ex = cached.ex?;
        // The names' values, on the stack for the usual few names: a
        // repeated entry compiles its expressions once per instance.
        let mut small = [0.0; MAX_VARIABLES];
        let mut large = Vec::new();
        let count = ex.var_names().len();
        let values: &mut [f64] = if count <= MAX_VARIABLES {
            &mut small[..count]
        } else {
            large.resize(count, 0.0);
            &mut large
        };
        let mut timed = false;
        for (slot, name) in values.iter_mut().zip(ex.var_names()) {
            match self.value(name)? {
                Some(v) => *slot = v,
                None => timed = true,
            }
        }
        let values: &[f64] = values;
        if !timed {
            let v = ex.eval(values).map_err(|e| Fault::Syntax(e.to_string()))?;
            if !v.is_finite() {
                return Err(Fault::NotFinite(v));
            }
            let index = self.index.map(|(n, _)| n);
            if let (Some(p), false) = (
                self.parsed,
                ex.var_names().iter().any(|n| Some(n.as_str()) == index),
            ) {
                p.set_constant(text, v);
            }
            return Ok(Value::Constant(v));
        }
        let names: Vec<String> = ex.var_names().to_vec();
        let mut sub = |name: &str| {
            names
                .iter()
                .position(|n| n == name && n != "t")
                .map(|k| Ex::from_num(values[k]))
        };
        let ex = Rc::unwrap_or_clone(ex)
            .subs(&mut sub)
            .map_err(|e| Fault::Syntax(e.to_string()))?;
        debug_assert_eq!(ex.var_names(), ["t"]);
        let sym = self
            .sym_parse(text)
            .and_then(|sym| record(Rc::unwrap_or_clone(sym), &names, values));
        Ok(Value::Timed(TimeExpr {
            ex: Box::new(ex),
            sym,
        }))
    }
}

/// The most variables an expression of [`Scope::compile_vars`] may use
/// (they are gathered on the stack for each evaluation).
pub(crate) const MAX_VARIABLES: usize = 32;

/// An expression of named variables (for an input map: `t`, the state and
/// the input), the parameters replaced by their values.
#[derive(Debug, Clone)]
pub(crate) struct VarExpr {
    ex: Box<Ex>,
    /// For each variable of the expression, in the order exmex takes
    /// them, its index in the caller's list of variables.
    slots: Vec<usize>,
}

impl VarExpr {
    /// The value for the variables' values `value(k)` (k indexing the list
    /// given to [`Scope::compile_vars`]); NaN when it cannot be evaluated.
    #[inline]
    pub fn eval(&self, value: impl Fn(usize) -> f64) -> f64 {
        let mut buf = [0.0; MAX_VARIABLES];
        for (b, &k) in buf.iter_mut().zip(&self.slots) {
            *b = value(k);
        }
        self.ex.eval(&buf[..self.slots.len()]).unwrap_or(f64::NAN)
    }
}

impl Scope<'_> {
    /// Compiles an expression of the variables `vars` and the parameters
    /// (replaced by their values). A variable may not also be a parameter
    /// the expression uses; `t` is a variable only if `vars` lists it.
    pub fn compile_vars(&self, text: &str, vars: &[String]) -> Result<VarExpr, Fault> {
        let ex = self.parse(text).ex?;
        let names: Vec<String> = ex.var_names().to_vec();
        let mut constants = Vec::with_capacity(names.len());
        for name in &names {
            if vars.contains(name) {
                if self.params.contains_key(name) {
                    return Err(Fault::Syntax(format!(
                        "`{name}` is both a parameter and a variable here; rename the parameter"
                    )));
                }
                constants.push(None);
            } else {
                constants.push(Some(self.with_time(false).value(name)?.unwrap_or(0.0)));
            }
        }
        let mut sub = |name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .and_then(|k| constants[k])
                .map(Ex::from_num)
        };
        let ex = Rc::unwrap_or_clone(ex)
            .subs(&mut sub)
            .map_err(|e| Fault::Syntax(e.to_string()))?;
        let slots: Vec<usize> = ex
            .var_names()
            .iter()
            .filter_map(|n| vars.iter().position(|v| v == n))
            .collect();
        debug_assert_eq!(slots.len(), ex.var_names().len());
        if slots.len() > MAX_VARIABLES {
            return Err(Fault::Syntax(format!(
                "more than {MAX_VARIABLES} different variables in one expression"
            )));
        }
        Ok(VarExpr {
            ex: Box::new(ex),
            slots,
        })
    }
}

/// `text` parsed over [`Sym`] (see `tape`), or `None` when it is too long
/// for a tape (exmex's recursion over long expressions is deep too: they
/// are left to exmex).
pub(crate) fn sym_parse(text: &str) -> Option<SymEx> {
    let leaves = tokens(text)
        .iter()
        .filter(|t| matches!(t, Token::Number | Token::Name(_)))
        .count();
    if leaves > tape::REGISTERS {
        return None;
    }
    SymEx::parse(text).ok()
}

/// The operations exmex performs to evaluate an expression at t, recorded
/// by evaluating its parse over [`Sym`] ([`sym_parse`]), with the names
/// other than `t` replaced by their values as in [`Scope::compile`].
/// `None` if exmex treats it differently than over `f64` (it does not, but
/// then the expression is simply evaluated by exmex).
fn record(ex: SymEx, names: &[String], values: &[f64]) -> Option<Sym> {
    if ex.var_names() != names {
        return None;
    }
    let mut sub = |name: &str| {
        names
            .iter()
            .position(|n| n == name && n != "t")
            .map(|k| SymEx::from_num(Sym::Num(values[k])))
    };
    let ex = ex.subs(&mut sub).ok()?;
    if ex.var_names() != ["t"] {
        return None;
    }
    ex.eval(&[Sym::Time]).ok()
}

/// A compiled value: constant, or a function of time.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// Known when the scenario is built.
    Constant(f64),
    /// Depends on `t`.
    Timed(TimeExpr),
}

/// An expression of `t` alone.
#[derive(Debug, Clone)]
pub(crate) struct TimeExpr {
    /// Boxed: exmex keeps its nodes inline, which makes an expression large.
    ex: Box<Ex>,
    /// The operations of its evaluation, for a tape (see `tape`).
    pub sym: Option<Sym>,
}

impl TimeExpr {
    /// The value at time `t` (NaN if the expression cannot be evaluated,
    /// which the simulation then reports as a non-finite state).
    pub fn eval(&self, t: f64) -> f64 {
        self.ex.eval(std::slice::from_ref(&t)).unwrap_or(f64::NAN)
    }
}

/// Evaluates the `{expr}` parts of a name template as integers.
pub(crate) fn render(template: &str, scope: &Scope<'_>) -> Result<String, Fault> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return Err(Fault::Syntax("`}` without a matching `{`".into()));
        }
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| Fault::Syntax("`{` without a matching `}`".into()))?;
        let inner = &after[..close];
        if inner.contains('{') {
            return Err(Fault::Syntax("nested `{`".into()));
        }
        // `{i}`, the index alone (the usual name of a repeated entry),
        // needs no expression.
        let v = match scope.index {
            Some((name, i)) if inner.trim() == name => i,
            _ => scope.integer(inner)?,
        };
        write!(out, "{v}").expect("writing to a String does not fail");
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A comma-separated list of names, shortened past 20.
pub(crate) fn list(names: &[&str]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    if names.len() <= 20 {
        names.join(", ")
    } else {
        format!("{}, … ({} in all)", names[..20].join(", "), names.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> BTreeMap<String, f64> {
        [("mass", 2.0), ("radius", 0.1), ("e", 0.5), ("omega", 50.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    #[test]
    fn numbers_with_exponents() {
        assert_eq!(number_prefix("1e-3*t"), Some("1e-3"));
        assert_eq!(number_prefix("2.5E+4"), Some("2.5E+4"));
        assert_eq!(number_prefix(".5"), Some(".5"));
        assert_eq!(number_prefix("3."), Some("3."));
        assert_eq!(number_prefix("2e"), Some("2"));
        assert_eq!(number_prefix("0 .. 3"), Some("0"));
        assert_eq!(number_prefix("1..3"), Some("1"));
        assert_eq!(number_prefix("x"), None);
        assert_eq!(number_prefix("."), None);
    }

    #[test]
    fn constants_fold_with_parameters() {
        let p = params();
        let s = Scope::constant(&p);
        assert_eq!(
            s.constant_value("2/5*mass*radius^2").unwrap(),
            0.4 * 2.0 * 0.1 * 0.1
        );
        assert_eq!(s.constant_value("-mass*9.81").unwrap(), -2.0 * 9.81);
        assert_eq!(s.constant_value("pow(2, 10)").unwrap(), 1024.0);
        assert_eq!(s.constant_value("-(2^2)").unwrap(), -4.0);
        assert_eq!(s.constant_value("(-2)^2").unwrap(), 4.0);
        assert_eq!(s.constant_value("2^-1").unwrap(), 0.5);
        assert_eq!(s.constant_value("3 - 2^2").unwrap(), -1.0);
        assert_eq!(s.constant_value("sin(1)^2").unwrap(), 1f64.sin().powi(2));
        assert_eq!(s.constant_value("8/2/2").unwrap(), 2.0);
        assert_eq!(s.constant_value("1 - 2 - 3").unwrap(), -4.0);
        assert_eq!(s.constant_value("e").unwrap(), 0.5, "a parameter named e");
        assert_eq!(s.constant_value("cos(pi)").unwrap(), -1.0);
        assert_eq!(s.constant_value("1e-3").unwrap(), 1e-3);
        assert_eq!(s.constant_value("sqrt(abs(-16))").unwrap(), 4.0);
        assert_eq!(s.constant_value("max(min(5, 3), 1)").unwrap(), 3.0);
        assert_eq!(s.constant_value("pow(2, sin(0))").unwrap(), 1.0);
    }

    #[test]
    fn faults() {
        let p = params();
        let s = Scope::constant(&p);
        assert_eq!(
            s.constant_value("0/0")
                .map_err(|f| matches!(f, Fault::NotFinite(_))),
            Err(true)
        );
        assert_eq!(
            s.constant_value("sqrt(-1)")
                .map_err(|f| matches!(f, Fault::NotFinite(_))),
            Err(true)
        );
        assert_eq!(
            s.constant_value("mas*2"),
            Err(Fault::UnknownName("mas".into()))
        );
        assert_eq!(s.constant_value("sin(t)"), Err(Fault::TimeNotAllowed));
        assert!(matches!(s.constant_value("2*"), Err(Fault::Syntax(_))));
        match s.constant_value("max(1, min(5, 3))") {
            Err(Fault::Syntax(m)) => assert!(m.contains("second argument of `max`"), "{m}"),
            other => panic!("{other:?}"),
        }
        for ambiguous in [
            "-2^2",
            "-mass^2",
            "3*-radius^2",
            "-sin(1)^2",
            "(-(2)^2)",
            "2^3^2",
            "2^-1^2",
        ] {
            assert!(
                matches!(s.constant_value(ambiguous), Err(Fault::Syntax(ref m)) if m.contains("ambiguous")),
                "{ambiguous}"
            );
        }
        assert!(matches!(s.constant_value(""), Err(Fault::Syntax(_))));
        match s.constant_value("foo(2)") {
            Err(Fault::Syntax(m)) => assert!(m.contains("unknown function `foo`"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.integer("2.5"), Err(Fault::NotInteger(2.5)));
        assert_eq!(s.integer("10/2"), Ok(5));
    }

    #[test]
    fn time_functions_substitute_parameters() {
        let p = params();
        let s = Scope::constant(&p).with_time(true);
        let Value::Timed(f) = s.compile("sin(omega*t) + mass").unwrap() else {
            panic!("depends on t")
        };
        for t in [0.0, 0.013, 0.5] {
            assert_eq!(f.eval(t), (50.0 * t).sin() + 2.0);
        }
        let Value::Timed(f) = s.compile("-radius*t^2").unwrap() else {
            panic!("depends on t")
        };
        assert_eq!(f.eval(3.0), -0.1 * 9.0);
        assert!(matches!(s.compile("mass*2").unwrap(), Value::Constant(v) if v == 4.0));
    }

    #[test]
    fn templates() {
        let p = params();
        let s = Scope {
            params: &p,
            index: Some(("i", 3)),
            time: false,
            parsed: None,
        };
        assert_eq!(render("bead{i}", &s).unwrap(), "bead3");
        assert_eq!(render("c{i-1}_{i*mass}", &s).unwrap(), "c2_6");
        assert_eq!(render("plain", &s).unwrap(), "plain");
        assert!(render("b{i", &s).is_err());
        assert!(render("b}i", &s).is_err());
        assert_eq!(render("b{i/2}", &s), Err(Fault::NotInteger(1.5)));
    }
}

//! Time-dependent expressions compiled to a straight-line program (a
//! *tape*), evaluated at every time step without exmex's per-call set-up.
//!
//! The tape is recorded by exmex itself: the expression is parsed, its
//! parameters substituted and its constants folded exactly as for `f64`,
//! over the value type [`Sym`], whose operators record the operation they
//! stand for instead of computing it (and compute it when both operands are
//! numbers, as exmex's folding does for `f64`). Evaluating the parsed
//! expression at `t` = [`Sym::Time`] then yields the graph of the operations
//! exmex performs when it evaluates the expression at a number t, in the
//! same order, with the same functions (`f64`'s): the tape gives the same
//! values to the last bit. Identical subexpressions of the components of a vector
//! or matrix are computed once (`sin(50*t)` and `-sin(50*t)` share the sine).
//!
//! A tape is evaluated on a register array on the stack: register 0 holds t,
//! the next ones the constants, then one register per operation.

use std::collections::HashMap;
use std::f64::consts::PI;
use std::str::FromStr;
use std::sync::Arc;

use exmex::{BinOp, MakeOperators, Operator};

/// The operations of scenario expressions (see `expr::Operators`, whose
/// functions these are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Atan2,
    Hypot,
    Min,
    Max,
    Neg,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Exp,
    Ln,
    Log10,
    Sqrt,
    Abs,
    Sign,
    Floor,
    Ceil,
    Round,
}

/// `sign`: 0 at 0, else ±1.
pub(crate) fn sign(a: f64) -> f64 {
    if a == 0.0 {
        0.0
    } else {
        a.signum()
    }
}

impl Op {
    /// The value of the operation on `a` (and `b`; unary operations ignore
    /// it): the functions of `expr::Operators`.
    #[inline(always)]
    fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
            Op::Pow => a.powf(b),
            Op::Atan2 => a.atan2(b),
            Op::Hypot => a.hypot(b),
            Op::Min => a.min(b),
            Op::Max => a.max(b),
            Op::Neg => -a,
            Op::Sin => a.sin(),
            Op::Cos => a.cos(),
            Op::Tan => a.tan(),
            Op::Asin => a.asin(),
            Op::Acos => a.acos(),
            Op::Atan => a.atan(),
            Op::Sinh => a.sinh(),
            Op::Cosh => a.cosh(),
            Op::Tanh => a.tanh(),
            Op::Exp => a.exp(),
            Op::Ln => a.ln(),
            Op::Log10 => a.log10(),
            Op::Sqrt => a.sqrt(),
            Op::Abs => a.abs(),
            Op::Sign => sign(a),
            Op::Floor => a.floor(),
            Op::Ceil => a.ceil(),
            Op::Round => a.round(),
        }
    }

    fn is_binary(self) -> bool {
        matches!(
            self,
            Op::Add
                | Op::Sub
                | Op::Mul
                | Op::Div
                | Op::Pow
                | Op::Atan2
                | Op::Hypot
                | Op::Min
                | Op::Max
        )
    }
}

/// A value of an expression recorded symbolically: a number, the time, or
/// an operation on other values.
#[derive(Debug, Clone)]
pub(crate) enum Sym {
    /// A number (folded when every operand is one).
    Num(f64),
    /// The time t.
    Time,
    /// An operation (one operand for unary ones: the second is ignored).
    Node(Arc<(Op, Sym, Sym)>),
}

impl Default for Sym {
    fn default() -> Self {
        Sym::Num(0.0)
    }
}

impl FromStr for Sym {
    type Err = std::num::ParseFloatError;
    /// Literals are read as `f64` reads them.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        f64::from_str(s).map(Sym::Num)
    }
}

impl Sym {
    fn unary(op: Op, a: Sym) -> Sym {
        match a {
            Sym::Num(x) => Sym::Num(op.apply(x, 0.0)),
            a => Sym::Node(Arc::new((op, a, Sym::Num(0.0)))),
        }
    }

    fn binary(op: Op, a: Sym, b: Sym) -> Sym {
        match (&a, &b) {
            (Sym::Num(x), Sym::Num(y)) => Sym::Num(op.apply(*x, *y)),
            _ => Sym::Node(Arc::new((op, a, b))),
        }
    }
}

/// The operators of `expr::Operators` over [`Sym`]: the same names,
/// priorities, commutativity and arities, in the same order (a test checks
/// it), so that exmex parses and folds an expression the same way for both.
#[derive(Clone, Debug)]
pub(crate) struct SymOperators;

fn bin(
    repr: &'static str,
    prio: i64,
    commutative: bool,
    f: fn(Sym, Sym) -> Sym,
) -> Operator<'static, Sym> {
    Operator::make_bin(
        repr,
        BinOp {
            apply: f,
            prio,
            is_commutative: commutative,
        },
    )
}

impl MakeOperators<Sym> for SymOperators {
    fn make<'a>() -> Vec<Operator<'a, Sym>> {
        vec![
            bin("^", 4, false, |a, b| Sym::binary(Op::Pow, a, b)),
            bin("*", 2, true, |a, b| Sym::binary(Op::Mul, a, b)),
            bin("/", 3, false, |a, b| Sym::binary(Op::Div, a, b)),
            Operator::make_bin_unary(
                "+",
                BinOp {
                    apply: |a, b| Sym::binary(Op::Add, a, b),
                    prio: 0,
                    is_commutative: true,
                },
                |a| a,
            ),
            Operator::make_bin_unary(
                "-",
                BinOp {
                    apply: |a, b| Sym::binary(Op::Sub, a, b),
                    prio: 1,
                    is_commutative: false,
                },
                |a| Sym::unary(Op::Neg, a),
            ),
            bin("pow", 0, false, |a, b| Sym::binary(Op::Pow, a, b)),
            bin("atan2", 0, false, |a, b| Sym::binary(Op::Atan2, a, b)),
            bin("hypot", 0, false, |a, b| Sym::binary(Op::Hypot, a, b)),
            bin("min", 0, true, |a, b| Sym::binary(Op::Min, a, b)),
            bin("max", 0, true, |a, b| Sym::binary(Op::Max, a, b)),
            Operator::make_unary("sin", |a| Sym::unary(Op::Sin, a)),
            Operator::make_unary("cos", |a| Sym::unary(Op::Cos, a)),
            Operator::make_unary("tan", |a| Sym::unary(Op::Tan, a)),
            Operator::make_unary("asin", |a| Sym::unary(Op::Asin, a)),
            Operator::make_unary("acos", |a| Sym::unary(Op::Acos, a)),
            Operator::make_unary("atan", |a| Sym::unary(Op::Atan, a)),
            Operator::make_unary("sinh", |a| Sym::unary(Op::Sinh, a)),
            Operator::make_unary("cosh", |a| Sym::unary(Op::Cosh, a)),
            Operator::make_unary("tanh", |a| Sym::unary(Op::Tanh, a)),
            Operator::make_unary("exp", |a| Sym::unary(Op::Exp, a)),
            Operator::make_unary("ln", |a| Sym::unary(Op::Ln, a)),
            Operator::make_unary("log10", |a| Sym::unary(Op::Log10, a)),
            Operator::make_unary("sqrt", |a| Sym::unary(Op::Sqrt, a)),
            Operator::make_unary("abs", |a| Sym::unary(Op::Abs, a)),
            Operator::make_unary("sign", |a| Sym::unary(Op::Sign, a)),
            Operator::make_unary("floor", |a| Sym::unary(Op::Floor, a)),
            Operator::make_unary("ceil", |a| Sym::unary(Op::Ceil, a)),
            Operator::make_unary("round", |a| Sym::unary(Op::Round, a)),
            Operator::make_constant("pi", Sym::Num(PI)),
        ]
    }
}

/// Registers of a tape: at most this many (t, constants and operations).
pub(crate) const REGISTERS: usize = 64;

/// Tapes of at most this many registers run on a register file of this
/// size (copied from its initial values in a few vector moves).
const SMALL: usize = 16;

/// One operation of a tape: `op` on registers `a` (and `b`), written to
/// register `dst`.
#[derive(Debug, Clone, Copy)]
struct Instr {
    op: Op,
    a: u8,
    b: u8,
    dst: u8,
}

/// A straight-line program computing several expressions of t at once.
#[derive(Debug, Clone)]
pub(crate) struct Tape {
    /// Initial registers: t (set at each evaluation), then the constants,
    /// padded with zeros (`small` holds them when they fit).
    init: Vec<f64>,
    small: Option<[f64; SMALL]>,
    code: Vec<Instr>,
    /// The register of each output.
    outputs: Vec<u8>,
}

/// Builds a tape, sharing identical subexpressions.
#[derive(Default)]
struct Recorder {
    consts: Vec<f64>,
    code: Vec<(Op, Slot, Slot)>,
    seen: HashMap<(Op, Slot, Slot), usize>,
    nodes: HashMap<*const (Op, Sym, Sym), Slot>,
}

/// Where a value is: t, a constant, or the result of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Slot {
    Time,
    Const(usize),
    Code(usize),
}

impl Recorder {
    fn constant(&mut self, x: f64) -> Slot {
        let k = match self.consts.iter().position(|c| c.to_bits() == x.to_bits()) {
            Some(k) => k,
            None => {
                self.consts.push(x);
                self.consts.len() - 1
            }
        };
        Slot::Const(k)
    }

    fn slot(&mut self, s: &Sym) -> Slot {
        match s {
            Sym::Num(x) => self.constant(*x),
            Sym::Time => Slot::Time,
            Sym::Node(node) => {
                let key = Arc::as_ptr(node);
                if let Some(&slot) = self.nodes.get(&key) {
                    return slot;
                }
                let (op, a, b) = &**node;
                let sa = self.slot(a);
                let sb = if op.is_binary() {
                    self.slot(b)
                } else {
                    Slot::Time
                };
                let instr = (*op, sa, sb);
                let k = match self.seen.get(&instr) {
                    Some(&k) => k,
                    None => {
                        self.code.push(instr);
                        self.seen.insert(instr, self.code.len() - 1);
                        self.code.len() - 1
                    }
                };
                self.nodes.insert(key, Slot::Code(k));
                Slot::Code(k)
            }
        }
    }
}

impl Tape {
    /// The tape of several recorded expressions, or `None` when it needs
    /// more than [`REGISTERS`] registers.
    pub fn new(values: &[Sym]) -> Option<Tape> {
        let mut rec = Recorder::default();
        let outs: Vec<Slot> = values.iter().map(|v| rec.slot(v)).collect();
        let first = 1 + rec.consts.len();
        let used = first + rec.code.len();
        if used > REGISTERS {
            return None;
        }
        let reg = |s: Slot| -> u8 {
            (match s {
                Slot::Time => 0,
                Slot::Const(k) => 1 + k,
                Slot::Code(k) => first + k,
            }) as u8
        };
        let mut init = vec![0.0; if used <= SMALL { SMALL } else { REGISTERS }];
        init[1..first].copy_from_slice(&rec.consts);
        Some(Tape {
            small: init.as_slice().try_into().ok(),
            init,
            code: rec
                .code
                .iter()
                .enumerate()
                .map(|(k, &(op, a, b))| Instr {
                    op,
                    a: reg(a),
                    b: reg(b),
                    dst: (first + k) as u8,
                })
                .collect(),
            outputs: outs.into_iter().map(reg).collect(),
        })
    }

    /// `out[k]` ← output k at time t (`out` has one entry per expression).
    #[inline(always)]
    pub fn eval(&self, t: f64, out: &mut [f64]) {
        match &self.small {
            Some(init) => self.run(*init, t, out),
            None => {
                let init: [f64; REGISTERS] = self.init[..].try_into().expect("registers");
                self.run(init, t, out)
            }
        }
    }

    #[inline(always)]
    fn run<const R: usize>(&self, mut r: [f64; R], t: f64, out: &mut [f64]) {
        r[0] = t;
        // R is a power of two: the masks keep every index in bounds.
        let mask = R - 1;
        for ins in &self.code {
            let (a, b) = (r[ins.a as usize & mask], r[ins.b as usize & mask]);
            r[ins.dst as usize & mask] = ins.op.apply(a, b);
        }
        for (o, &reg) in out.iter_mut().zip(&self.outputs) {
            *o = r[reg as usize & mask];
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use exmex::MakeOperators;

    use super::*;
    use crate::expr::{Operators, Scope, Value};

    #[test]
    fn the_operator_tables_agree() {
        let f = <Operators as MakeOperators<f64>>::make();
        let s = <SymOperators as MakeOperators<Sym>>::make();
        assert_eq!(f.len(), s.len());
        for (a, b) in f.iter().zip(&s) {
            assert_eq!(a.repr(), b.repr());
            assert_eq!(a.has_bin(), b.has_bin(), "{}", a.repr());
            assert_eq!(a.has_unary(), b.has_unary(), "{}", a.repr());
            assert_eq!(
                a.constant().is_some(),
                b.constant().is_some(),
                "{}",
                a.repr()
            );
            if let (Ok(x), Ok(y)) = (a.bin(), b.bin()) {
                assert_eq!(x.prio, y.prio, "{}", a.repr());
                assert_eq!(x.is_commutative, y.is_commutative, "{}", a.repr());
            }
        }
    }

    fn compile(text: &str, params: &BTreeMap<String, f64>) -> crate::expr::TimeExpr {
        match Scope::constant(params)
            .with_time(true)
            .compile(text)
            .unwrap()
        {
            Value::Timed(e) => e,
            Value::Constant(_) => panic!("{text} does not depend on t"),
        }
    }

    /// The tape gives exmex's values to the last bit, for expressions that
    /// exercise every operator, priorities, signs, folding of parameters
    /// and constants, and nesting.
    #[test]
    fn tapes_equal_exmex_to_the_bit() {
        let params: BTreeMap<String, f64> = [("w", 50.0), ("a", 0.3), ("b", -1.7), ("e", 0.5)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let texts = [
            "sin(50*t)",
            "-sin(50*t)",
            "sin(w*t) + a",
            "a*t*b/3",
            "t*2*3",
            "2*3*t",
            "t/3*7",
            "1 - t - 2 + t*t",
            "a - b + t - e",
            "t^2/2 - (a*t)^3",
            "(-t)^2 + 2^-t",
            "pow(t, 1.5) + atan2(t, a) + min(t, 0.5) + max(a, t)",
            "cos(t)*tan(t/9) - asin(t/100) + acos(t/200) - atan(t)",
            "sinh(t/10) + cosh(t/10) - tanh(t) + exp(-t) + ln(1 + t) + log10(2 + t)",
            "sqrt(abs(t - 1)) * sign(t - 1) + floor(3*t) - ceil(t) + round(t*2.5)",
            "-(t^2) + -a*t + +t",
            "2*pi*t + pi",
            "1e-3*t + 2.5E+1*sin(pi*t)",
            "max(min(t, 1), 0.25) * -cos(w*t + pi/2)",
            "a*b*t*e*w/t/t*t",
            "sin(sin(sin(t)))",
            "-(-(-t))",
        ];
        let ts = [0.0, 1e-4, 0.0123, 0.5, 1.0, 3.7, 10.0, 123.456, -2.5];
        for text in texts {
            let e = compile(text, &params);
            let sym = e
                .sym
                .clone()
                .unwrap_or_else(|| panic!("{text} was not recorded"));
            let tape = Tape::new(&[sym]).unwrap_or_else(|| panic!("{text}: no tape"));
            for t in ts {
                let mut out = [0.0];
                tape.eval(t, &mut out);
                let x = e.eval(t);
                assert!(
                    out[0].to_bits() == x.to_bits() || (out[0].is_nan() && x.is_nan()),
                    "{text} at t = {t}: tape {} exmex {x}",
                    out[0]
                );
            }
        }
    }

    /// Components share their common subexpressions: b(t) = (sin 50t,
    /// −sin 50t, 2) takes one product, one sine and one negation.
    #[test]
    fn components_share_subexpressions() {
        let params = BTreeMap::new();
        let syms = ["sin(50*t)", "-sin(50*t)"]
            .map(|text| compile(text, &params).sym.unwrap())
            .to_vec();
        let mut all = syms.clone();
        all.push(Sym::Num(2.0));
        let tape = Tape::new(&all).unwrap();
        assert_eq!(tape.code.len(), 3);
        let mut out = [0.0; 3];
        tape.eval(0.01, &mut out);
        assert_eq!(out, [0.5f64.sin(), -0.5f64.sin(), 2.0]);
    }

    #[test]
    fn long_expressions_have_no_tape() {
        // t + 1 + 2 + … + 70: 70 constants and 70 additions.
        let mut sum = Sym::Time;
        for k in 1..=70 {
            sum = Sym::binary(Op::Add, sum, Sym::Num(k as f64));
        }
        assert!(Tape::new(&[sum.clone()]).is_none());
        // 15 registers (the small register file) and 41.
        for n in [7, 20] {
            let mut short = Sym::Time;
            let mut expected = 0.5;
            for k in 1..=n {
                short = Sym::binary(Op::Add, short, Sym::Num(k as f64));
                expected += k as f64;
            }
            let tape = Tape::new(&[short]).unwrap();
            let mut out = [0.0];
            tape.eval(0.5, &mut out);
            assert_eq!(out[0], expected);
        }
    }
}

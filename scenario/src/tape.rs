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
//! A tape is evaluated on an array of [`REGISTERS`] registers on the stack:
//! register 0 holds t, the next ones the constants, then one register per
//! operation. A negation at the root of an output costs no operation: the
//! output flips the sign bit of its register (−x is x with its sign bit
//! flipped, in IEEE 754 as in Rust).

use std::collections::HashMap;
use std::f64::consts::PI;
use std::str::FromStr;
use std::sync::Arc;

use exmex::{BinOp, MakeOperators, Operator};
use nonsmooth::modelling::functions::TimeFn;

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

/// One operation of a tape: `op` on registers `a` (and `b`), written to
/// register `dst`. Every index is below [`REGISTERS`] (checked when the
/// tape is built).
#[derive(Debug, Clone, Copy)]
struct Instr {
    op: Op,
    a: u8,
    b: u8,
    dst: u8,
}

/// One output of a tape: the bits of register `reg` with `sign` (0 or the
/// sign bit) flipped. An output −e reads e's register with its sign bit
/// flipped, which is exactly IEEE 754 negation: the tape has no operation
/// for it.
#[derive(Debug, Clone, Copy)]
struct Output {
    reg: u8,
    sign: u64,
}

/// The sign bit of an `f64`.
const SIGN: u64 = 1 << 63;

/// A straight-line program computing several expressions of t at once.
#[derive(Debug, Clone)]
pub(crate) struct Tape {
    /// The constants, registers 1, 2, ….
    consts: Box<[f64]>,
    code: Box<[Instr]>,
    outputs: Box<[Output]>,
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

    /// The slot of an output and whether it is negated: negations at the
    /// root of an output are left to the output (−(−e) is e, bit for bit).
    fn output(&mut self, mut s: &Sym) -> (Slot, bool) {
        let mut negated = false;
        while let Sym::Node(node) = s {
            match &**node {
                (Op::Neg, a, _) => {
                    negated = !negated;
                    s = a;
                }
                _ => break,
            }
        }
        (self.slot(s), negated)
    }
}

impl Tape {
    /// The tape of several recorded expressions, or `None` when it needs
    /// more than [`REGISTERS`] registers.
    pub fn new(values: &[Sym]) -> Option<Tape> {
        let mut rec = Recorder::default();
        let outs: Vec<(Slot, bool)> = values.iter().map(|v| rec.output(v)).collect();
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
        Some(Tape {
            consts: rec.consts.into(),
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
            outputs: outs
                .into_iter()
                .map(|(s, negated)| Output {
                    reg: reg(s),
                    sign: if negated { SIGN } else { 0 },
                })
                .collect(),
        })
    }

    /// `out[k]` ← output k at time t (`out` has one entry per expression).
    pub fn eval(&self, t: f64, out: &mut [f64]) {
        let mut r = [0.0; REGISTERS];
        r[0] = t;
        r[1..=self.consts.len()].copy_from_slice(&self.consts);
        for ins in self.code.iter() {
            r[ins.dst as usize] = ins.op.apply(r[ins.a as usize], r[ins.b as usize]);
        }
        for (o, put) in out.iter_mut().zip(self.outputs.iter()) {
            *o = f64::from_bits(r[put.reg as usize].to_bits() ^ put.sign);
        }
    }

    /// The tape as a function `out ← values(t)`.
    pub fn into_fn(self) -> TimeFn {
        Arc::new(move |t, out: &mut [f64]| self.eval(t, out))
    }
}

#[cfg(test)]
mod tests;

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
//! the next ones the constants, then one register per operation; the array
//! is the smallest of 4, 8, 16 or 64 registers that holds them, every index
//! checked when the tape is built. A negation at the root of an output costs
//! no operation: the output flips the sign bit of its register (−x is x with
//! its sign bit flipped, in IEEE 754 as in Rust).

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
/// register `dst`. Every index is below the size of the tape's register
/// file (checked when the tape is built).
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

/// The initial registers of a tape (t, set at each evaluation, then the
/// constants, padded with zeros), in the smallest register file that holds
/// them: a small file is copied in a few moves at each evaluation.
#[derive(Debug, Clone)]
enum Registers {
    R4([f64; 4]),
    R8([f64; 8]),
    R16([f64; 16]),
    R64(Box<[f64; REGISTERS]>),
}

/// A straight-line program computing several expressions of t at once.
#[derive(Debug, Clone)]
pub(crate) struct Tape {
    init: Registers,
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
        let mut init = [0.0; REGISTERS];
        init[1..first].copy_from_slice(&rec.consts);
        let init = match used {
            0..=4 => Registers::R4(init[..4].try_into().ok()?),
            5..=8 => Registers::R8(init[..8].try_into().ok()?),
            9..=16 => Registers::R16(init[..16].try_into().ok()?),
            _ => Registers::R64(Box::new(init)),
        };
        Some(Tape {
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
        match &self.init {
            Registers::R4(init) => Program::new(*init, &*self.code).write(t, &self.outputs, out),
            Registers::R8(init) => Program::new(*init, &*self.code).write(t, &self.outputs, out),
            Registers::R16(init) => Program::new(*init, &*self.code).write(t, &self.outputs, out),
            Registers::R64(init) => Program::new(**init, &*self.code).write(t, &self.outputs, out),
        }
    }

    /// The tape as a function `out ← values(t)`, specialised at build time
    /// to its register file and, for up to four outputs, to their number:
    /// an evaluation dispatches on the operations alone.
    pub fn into_fn(self) -> TimeFn {
        let Tape {
            init,
            code,
            outputs,
        } = self;
        match init {
            Registers::R4(init) => sized(Program::new(init, code), outputs),
            Registers::R8(init) => sized(Program::new(init, code), outputs),
            Registers::R16(init) => sized(Program::new(init, code), outputs),
            Registers::R64(init) => {
                let p = Program::new(*init, code);
                Arc::new(move |t, out: &mut [f64]| p.write(t, &outputs, out))
            }
        }
    }
}

/// A tape's operations on a register file of `R` registers (a power of
/// two above every index of the operations).
struct Program<const R: usize, C> {
    init: [f64; R],
    code: C,
}

impl<const R: usize, C: std::ops::Deref<Target = [Instr]>> Program<R, C> {
    fn new(init: [f64; R], code: C) -> Self {
        Program { init, code }
    }

    /// The registers after the operations, from r₀ = t and the constants.
    #[inline(always)]
    fn registers(&self, t: f64) -> [f64; R] {
        let mut r = self.init;
        r[0] = t;
        // The masks change no index (every index is below R, a power of
        // two) and spare the bounds checks.
        let mask = R - 1;
        for ins in self.code.iter() {
            let (a, b) = (r[ins.a as usize & mask], r[ins.b as usize & mask]);
            r[ins.dst as usize & mask] = ins.op.apply(a, b);
        }
        r
    }

    /// `out[k]` ← output k at time t.
    #[inline(always)]
    fn write(&self, t: f64, outputs: &[Output], out: &mut [f64]) {
        let r = self.registers(t);
        for (o, put) in out.iter_mut().zip(outputs) {
            *o = put.read(&r);
        }
    }
}

impl Output {
    /// The output's value among the registers `r` (a file of a power of
    /// two registers above its index).
    #[inline(always)]
    fn read<const R: usize>(self, r: &[f64; R]) -> f64 {
        f64::from_bits(r[self.reg as usize & (R - 1)].to_bits() ^ self.sign)
    }
}

/// The function of a program on a small register file, specialised to the
/// number of outputs up to four (their reads unrolled).
fn sized<const R: usize>(p: Program<R, Box<[Instr]>>, outputs: Box<[Output]>) -> TimeFn {
    match *outputs {
        [a] => fixed(p, [a]),
        [a, b] => fixed(p, [a, b]),
        [a, b, c] => fixed(p, [a, b, c]),
        [a, b, c, d] => fixed(p, [a, b, c, d]),
        _ => Arc::new(move |t, out: &mut [f64]| p.write(t, &outputs, out)),
    }
}

fn fixed<const R: usize, const N: usize>(
    p: Program<R, Box<[Instr]>>,
    outputs: [Output; N],
) -> TimeFn {
    Arc::new(move |t, out: &mut [f64]| {
        let r = p.registers(t);
        for (o, put) in out.iter_mut().zip(outputs) {
            *o = put.read(&r);
        }
    })
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
    /// −sin 50t, 2) takes one product and one sine, the negation being
    /// the second output's sign.
    #[test]
    fn components_share_subexpressions() {
        let params = BTreeMap::new();
        let syms = ["sin(50*t)", "-sin(50*t)"]
            .map(|text| compile(text, &params).sym.unwrap())
            .to_vec();
        let mut all = syms.clone();
        all.push(Sym::Num(2.0));
        let tape = Tape::new(&all).unwrap();
        assert_eq!(tape.code.len(), 2);
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

    /// A small xorshift generator: the random tests are reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    const UNARY: [Op; 19] = [
        Op::Neg,
        Op::Sin,
        Op::Cos,
        Op::Tan,
        Op::Asin,
        Op::Acos,
        Op::Atan,
        Op::Sinh,
        Op::Cosh,
        Op::Tanh,
        Op::Exp,
        Op::Ln,
        Op::Log10,
        Op::Sqrt,
        Op::Abs,
        Op::Sign,
        Op::Floor,
        Op::Ceil,
        Op::Round,
    ];

    const BINARY: [Op; 9] = [
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::Div,
        Op::Pow,
        Op::Atan2,
        Op::Hypot,
        Op::Min,
        Op::Max,
    ];

    /// The value of a recorded expression at t by plain recursion over its
    /// graph (a shared node is computed once per use), with the functions
    /// of `f64` named here, apart from the tape's.
    fn by_recursion(s: &Sym, t: f64) -> f64 {
        match s {
            Sym::Num(x) => *x,
            Sym::Time => t,
            Sym::Node(node) => {
                let (op, a, b) = &**node;
                let x = by_recursion(a, t);
                let y = || by_recursion(b, t);
                match op {
                    Op::Add => x + y(),
                    Op::Sub => x - y(),
                    Op::Mul => x * y(),
                    Op::Div => x / y(),
                    Op::Pow => x.powf(y()),
                    Op::Atan2 => x.atan2(y()),
                    Op::Hypot => x.hypot(y()),
                    Op::Min => x.min(y()),
                    Op::Max => x.max(y()),
                    Op::Neg => -x,
                    Op::Sin => x.sin(),
                    Op::Cos => x.cos(),
                    Op::Tan => x.tan(),
                    Op::Asin => x.asin(),
                    Op::Acos => x.acos(),
                    Op::Atan => x.atan(),
                    Op::Sinh => x.sinh(),
                    Op::Cosh => x.cosh(),
                    Op::Tanh => x.tanh(),
                    Op::Exp => x.exp(),
                    Op::Ln => x.ln(),
                    Op::Log10 => x.log10(),
                    Op::Sqrt => x.sqrt(),
                    Op::Abs => x.abs(),
                    Op::Sign => {
                        if x > 0.0 {
                            1.0
                        } else if x < 0.0 {
                            -1.0
                        } else if x == 0.0 {
                            0.0
                        } else {
                            f64::NAN
                        }
                    }
                    Op::Floor => x.floor(),
                    Op::Ceil => x.ceil(),
                    Op::Round => x.round(),
                }
            }
        }
    }

    /// A random graph of `n` nodes over t and a few constants: operands
    /// are drawn among the nodes built so far (shared subtrees), and some
    /// nodes are rebuilt from the same operands (equal but distinct).
    fn random_graph(rng: &mut Rng, n: usize) -> Vec<Sym> {
        let leaves = [-2.5, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 50.0, PI];
        let mut pool = vec![Sym::Time, Sym::Time];
        while pool.len() < n {
            let pick = |rng: &mut Rng, pool: &[Sym]| {
                if rng.below(4) == 0 {
                    Sym::Num(leaves[rng.below(leaves.len())])
                } else {
                    pool[rng.below(pool.len())].clone()
                }
            };
            let node = match rng.below(3) {
                0 => Sym::unary(UNARY[rng.below(UNARY.len())], pick(rng, &pool)),
                1 => {
                    let k = rng.below(pool.len());
                    match &pool[k] {
                        Sym::Node(node) => {
                            let (op, a, b) = (**node).clone();
                            if op.is_binary() {
                                Sym::binary(op, a, b)
                            } else {
                                Sym::unary(op, a)
                            }
                        }
                        other => other.clone(),
                    }
                }
                _ => {
                    let a = pick(rng, &pool);
                    let b = pick(rng, &pool);
                    Sym::binary(BINARY[rng.below(BINARY.len())], a, b)
                }
            };
            pool.push(node);
        }
        pool
    }

    /// Equal bits, or both NaN: Rust leaves the sign and payload of a
    /// NaN result unspecified (libm's `ln(-1)` gives −NaN, `signum` +NaN).
    fn same_bits(x: f64, y: f64) -> bool {
        x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
    }

    /// Tapes of random graphs (every operation, shared and repeated
    /// subtrees, negated outputs, −(−e), constants and t as outputs) give
    /// the values of the plain recursion to the last bit.
    #[test]
    fn random_tapes_equal_the_recursion_to_the_bit() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let ts = [
            0.0, -0.0, 1e-4, 0.0123, 0.3, 0.5, 1.0, 2.75, 10.0, -3.2, 1e3,
        ];
        let mut tapes = 0;
        let mut sizes = std::collections::HashSet::new();
        let mut counts = std::collections::BTreeSet::new();
        for _ in 0..400 {
            let n = 3 + rng.below(40);
            let pool = random_graph(&mut rng, n);
            let mut outputs: Vec<Sym> = if rng.below(4) == 0 {
                pool.clone()
            } else {
                (0..1 + rng.below(6))
                    .map(|_| pool[rng.below(pool.len())].clone())
                    .collect()
            };
            let k = rng.below(outputs.len());
            outputs[k] = Sym::unary(Op::Neg, outputs[k].clone());
            if rng.below(3) == 0 {
                let last = outputs.len() - 1;
                outputs[last] = Sym::unary(Op::Neg, Sym::unary(Op::Neg, outputs[last].clone()));
            }
            if rng.below(2) == 0 {
                outputs.push(Sym::Num(leaves_sample(&mut rng)));
            }
            counts.insert(outputs.len().min(5));
            let Some(tape) = Tape::new(&outputs) else {
                continue;
            };
            tapes += 1;
            sizes.insert(std::mem::discriminant(&tape.init));
            let f = tape.clone().into_fn();
            let mut out = vec![0.0; outputs.len()];
            let mut by_fn = vec![0.0; outputs.len()];
            for t in ts {
                tape.eval(t, &mut out);
                f(t, &mut by_fn);
                for (k, ((s, &x), &z)) in outputs.iter().zip(&out).zip(&by_fn).enumerate() {
                    assert!(
                        same_bits(x, z),
                        "output {k} at t = {t}: eval {x:e}, fn {z:e}"
                    );
                    let y = by_recursion(s, t);
                    assert!(
                        same_bits(x, y),
                        "output {k} at t = {t}: tape {x:e} ({:#x}), recursion {y:e} ({:#x}) {s:?}",
                        x.to_bits(),
                        y.to_bits()
                    );
                }
            }
        }
        assert!(tapes > 300, "{tapes} tapes");
        assert_eq!(sizes.len(), 4, "every register file size is exercised");
        assert_eq!(counts.len(), 5, "1 to 4 outputs and more are exercised");
    }

    fn leaves_sample(rng: &mut Rng) -> f64 {
        [0.0, -0.0, 2.0, -7.5][rng.below(4)]
    }

    /// A random expression text over t, the parameters and every function
    /// and operator of the grammar (docs/scenarios.md).
    fn random_text(rng: &mut Rng, depth: usize, shared: &[String]) -> String {
        const LEAVES: [&str; 9] = ["t", "t", "w", "a", "b", "2", "0.5", "1e-2", "pi"];
        const UN: [&str; 18] = [
            "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "ln",
            "log10", "sqrt", "abs", "sign", "floor", "ceil", "round",
        ];
        const FN2: [&str; 5] = ["pow", "atan2", "hypot", "min", "max"];
        const OPS: [&str; 5] = ["+", "-", "*", "/", "^"];
        if depth == 0 || rng.below(5) == 0 {
            return LEAVES[rng.below(LEAVES.len())].to_string();
        }
        if !shared.is_empty() && rng.below(4) == 0 {
            return format!("({})", shared[rng.below(shared.len())]);
        }
        let sub = |rng: &mut Rng| random_text(rng, depth - 1, shared);
        match rng.below(4) {
            0 => format!("{}({})", UN[rng.below(UN.len())], sub(rng)),
            1 => format!("{}({}, {})", FN2[rng.below(FN2.len())], sub(rng), sub(rng)),
            2 => format!("-({})", sub(rng)),
            _ => format!("{} {} {}", sub(rng), OPS[rng.below(OPS.len())], sub(rng)),
        }
    }

    /// Vectors of random expression texts sharing subexpressions, compiled
    /// as a scenario compiles them: the tape of all components gives
    /// exmex's own evaluation of each text to the last bit.
    #[test]
    fn random_texts_equal_exmex_to_the_bit() {
        let params: BTreeMap<String, f64> = [("w", 50.0), ("a", 0.3), ("b", -1.7)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let ts = [0.0, 1e-4, 0.0123, 0.5, 1.0, 3.7, -2.5, 123.456];
        let (mut checked, mut refused) = (0, 0);
        for _ in 0..150 {
            let shared: Vec<String> = (0..2).map(|_| random_text(&mut rng, 2, &[])).collect();
            let texts: Vec<String> = (0..1 + rng.below(4))
                .map(|_| match rng.below(3) {
                    0 => format!("-({} + t)", random_text(&mut rng, 3, &shared)),
                    _ => format!("{} + t", random_text(&mut rng, 3, &shared)),
                })
                .collect();
            // Texts the grammar refuses (exmex's limits on nested
            // two-argument functions) are left out.
            let compiled: Option<Vec<_>> = texts
                .iter()
                .map(
                    |text| match Scope::constant(&params).with_time(true).compile(text) {
                        Ok(Value::Timed(e)) => Some(e),
                        Ok(Value::Constant(_)) => panic!("{text} depends on t"),
                        Err(_) => None,
                    },
                )
                .collect();
            let Some(exprs) = compiled else {
                refused += 1;
                continue;
            };
            let syms: Option<Vec<Sym>> = exprs.iter().map(|e| e.sym.clone()).collect();
            let syms = syms.unwrap_or_else(|| panic!("{texts:?} were not recorded"));
            let Some(tape) = Tape::new(&syms) else {
                continue;
            };
            checked += 1;
            let f = tape.into_fn();
            let mut out = vec![0.0; texts.len()];
            for t in ts {
                f(t, &mut out);
                for ((text, e), &x) in texts.iter().zip(&exprs).zip(&out) {
                    let y = e.eval(t);
                    assert!(
                        same_bits(x, y),
                        "{text} at t = {t}: tape {x:e}, exmex {y:e}"
                    );
                }
            }
        }
        assert!(checked > 100, "{checked} vectors, {refused} refused");
    }
}

//! Tests of the tapes: exmex's operator tables mirrored, tapes equal to
//! exmex and to a plain recursion to the last bit, shared subexpressions.

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
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "ln", "log10",
        "sqrt", "abs", "sign", "floor", "ceil", "round",
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

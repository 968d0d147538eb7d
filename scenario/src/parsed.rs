//! The expressions of a build, parsed once (see [`Parsed`]), and the
//! parses a batch of builds shares ([`BuildCache`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::expr::{parse, sym_parse, Ex, Fault, SymEx};

/// Parses kept across the builds of a batch: a sweep builds the same
/// scenario once per point with other parameter values, and the texts of
/// its expressions do not change from point to point.
///
/// A parse depends on the text alone (names are looked up when an
/// expression is evaluated, with the parameters of the build at hand), so
/// a build through the cache evaluates every expression from the same
/// parsed form a fresh build makes: the same values, bit for bit. Only the
/// parses are kept; values (which depend on the parameters) are per build.
///
/// Not `Send`: one cache per thread (a batch runs its points in turn).
///
/// ```
/// use nonsmooth_scenario::{BuildCache, Scenario};
///
/// let text = "name = \"fall\"\n[parameters]\ng = 9.81\n[simulation]\nt_end = 0.1\nstep = 0.01\n\
///             [[systems]]\nname = \"body\"\ntype = \"lagrangian_linear\"\nq0 = [1]\n\
///             mass = [[1]]\nfext = [\"-g\"]\n";
/// let laws = std::sync::Arc::new(nonsmooth::control::NoLaws);
/// let cache = BuildCache::default();
/// let mut s = Scenario::from_str(text, "fall.toml").unwrap();
/// for g in [9.81, 1.62] {
///     s.set_parameter("g", g).unwrap();
///     let cached = s.build_cached(laws.clone(), &cache).unwrap();
///     let fresh = s.build().unwrap();
///     assert_eq!(cached.parameters, fresh.parameters);
/// }
/// assert!(cache.texts() > 0);
/// ```
#[derive(Debug, Default)]
pub struct BuildCache {
    /// [`parse`] of each text seen.
    exprs: RefCell<HashMap<String, Result<Rc<Ex>, Fault>>>,
    /// The same texts over `tape::Sym`, for tapes (`None`: no tape).
    syms: RefCell<HashMap<String, Option<Rc<SymEx>>>>,
}

impl BuildCache {
    /// How many expression texts the cache holds.
    pub fn texts(&self) -> usize {
        self.exprs.borrow().len()
    }

    fn parse(&self, text: &str) -> Result<Rc<Ex>, Fault> {
        if let Some(r) = self.exprs.borrow().get(text) {
            return r.clone();
        }
        let r = parse(text).map(Rc::new);
        self.exprs.borrow_mut().insert(text.to_string(), r.clone());
        r
    }

    fn sym(&self, text: &str) -> Option<Rc<SymEx>> {
        if let Some(r) = self.syms.borrow().get(text) {
            return r.clone();
        }
        let r = sym_parse(text).map(Rc::new);
        self.syms.borrow_mut().insert(text.to_string(), r.clone());
        r
    }
}

/// The expressions of one build, parsed once by text: the entries a
/// `repeat` creates share their texts (`q0 = ["i*d"]` is the same text for
/// every `i`), and parsing with exmex costs microseconds where evaluating
/// costs tens of nanoseconds. The parsed form does not depend on the scope
/// (names are only looked up when evaluating), so a cached expression
/// evaluates bit for bit as a freshly parsed one. The value of an
/// expression of parameters alone (no `t`, no repeat index) is kept too:
/// the parameters do not change during a build, and an index cannot be
/// named as a parameter. The parses may come from a batch's
/// [`BuildCache`]; the values never outlive the build.
#[derive(Debug)]
pub(crate) struct Parsed<'c> {
    /// Where the parses are kept (the build's own, or the batch's).
    texts: Texts<'c>,
    /// The value of each text of parameters alone evaluated so far.
    constants: RefCell<HashMap<String, f64>>,
}

/// The parses of a build: its own, or borrowed from a batch.
#[derive(Debug)]
enum Texts<'c> {
    Own(BuildCache),
    Batch(&'c BuildCache),
}

/// One text of [`Parsed`].
#[derive(Debug, Clone)]
pub(crate) struct Cached {
    /// [`parse`] of the text.
    pub ex: Result<Rc<Ex>, Fault>,
    /// Its value, when it depends on the parameters alone.
    pub constant: Option<f64>,
}

impl Default for Parsed<'_> {
    fn default() -> Self {
        Parsed {
            texts: Texts::Own(BuildCache::default()),
            constants: RefCell::default(),
        }
    }
}

impl<'c> Parsed<'c> {
    /// A build's expressions, parsed through a batch's cache (none: its
    /// own).
    pub(crate) fn with(cache: Option<&'c BuildCache>) -> Self {
        match cache {
            Some(c) => Parsed {
                texts: Texts::Batch(c),
                constants: RefCell::default(),
            },
            None => Parsed::default(),
        }
    }

    fn cache(&self) -> &BuildCache {
        match &self.texts {
            Texts::Own(c) => c,
            Texts::Batch(c) => c,
        }
    }

    /// [`parse`] of `text` and its value if known, from the cache when it
    /// was parsed before.
    pub(crate) fn get(&self, text: &str) -> Cached {
        Cached {
            constant: self.constants.borrow().get(text).copied(),
            ex: self.cache().parse(text),
        }
    }

    /// Keeps the value of `text`, an expression of parameters alone.
    pub(crate) fn set_constant(&self, text: &str, value: f64) {
        self.constants.borrow_mut().insert(text.to_string(), value);
    }

    /// [`sym_parse`] of `text`, from the cache when it was parsed before.
    pub(crate) fn sym(&self, text: &str) -> Option<Rc<SymEx>> {
        self.cache().sym(text)
    }
}

//! The expressions of a build, parsed once (see [`Parsed`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::expr::{parse, sym_parse, Ex, Fault, SymEx};

/// The expressions of one build, parsed once by text: the entries a
/// `repeat` creates share their texts (`q0 = ["i*d"]` is the same text for
/// every `i`), and parsing with exmex costs microseconds where evaluating
/// costs tens of nanoseconds. The parsed form does not depend on the scope
/// (names are only looked up when evaluating), so a cached expression
/// evaluates bit for bit as a freshly parsed one. The value of an
/// expression of parameters alone (no `t`, no repeat index) is kept too:
/// the parameters do not change during a build, and an index cannot be
/// named as a parameter.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// [`parse`] of each text seen, and its value when it uses parameters
    /// only.
    exprs: RefCell<HashMap<String, Cached>>,
    /// The same texts over `tape::Sym`, for tapes (`None`: no tape).
    syms: RefCell<HashMap<String, Option<Rc<SymEx>>>>,
}

/// One text of [`Parsed`].
#[derive(Debug, Clone)]
pub(crate) struct Cached {
    /// [`parse`] of the text.
    pub ex: Result<Rc<Ex>, Fault>,
    /// Its value, when it depends on the parameters alone.
    pub constant: Option<f64>,
}

impl Parsed {
    /// [`parse`] of `text` and its value if known, from the cache when it
    /// was parsed before.
    pub(crate) fn get(&self, text: &str) -> Cached {
        if let Some(c) = self.exprs.borrow().get(text) {
            return c.clone();
        }
        let c = Cached {
            ex: parse(text).map(Rc::new),
            constant: None,
        };
        self.exprs.borrow_mut().insert(text.to_string(), c.clone());
        c
    }

    /// Keeps the value of `text`, an expression of parameters alone.
    pub(crate) fn set_constant(&self, text: &str, value: f64) {
        if let Some(c) = self.exprs.borrow_mut().get_mut(text) {
            c.constant = Some(value);
        }
    }

    /// [`sym_parse`] of `text`, from the cache when it was parsed before.
    pub(crate) fn sym(&self, text: &str) -> Option<Rc<SymEx>> {
        if let Some(r) = self.syms.borrow().get(text) {
            return r.clone();
        }
        let r = sym_parse(text).map(Rc::new);
        self.syms.borrow_mut().insert(text.to_string(), r.clone());
        r
    }
}

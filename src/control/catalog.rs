//! Control laws by name: how scenario files (and other front ends) create
//! controllers and observers without knowing their types. A crate of laws
//! implements [`LawCatalog`]; the parameters of one law arrive as
//! [`LawParams`], which reports keys the law did not use.

use std::cell::Cell;

use nalgebra::DMatrix;

use super::error::ControlError;
use super::law::{Controller, Observer};

/// One parameter value of a law.
#[derive(Debug, Clone, PartialEq)]
pub enum LawValue {
    /// A number.
    Scalar(f64),
    /// A vector.
    Vector(Vec<f64>),
    /// A matrix (rows).
    Matrix(DMatrix<f64>),
    /// A word (e.g. a variant name).
    Text(String),
}

impl LawValue {
    fn kind(&self) -> &'static str {
        match self {
            LawValue::Scalar(_) => "a number",
            LawValue::Vector(_) => "a vector",
            LawValue::Matrix(_) => "a matrix",
            LawValue::Text(_) => "a word",
        }
    }
}

/// The parameters of one law, by key. Reading a key marks it used; a front
/// end then reports the keys no law read ([`LawParams::unused`]).
#[derive(Debug, Clone)]
pub struct LawParams {
    object: String,
    entries: Vec<(String, LawValue)>,
    used: Vec<Cell<bool>>,
}

impl LawParams {
    /// Parameters of the object `object` (for messages).
    pub fn new(object: &str, entries: Vec<(String, LawValue)>) -> Self {
        let used = entries.iter().map(|_| Cell::new(false)).collect();
        LawParams {
            object: object.to_string(),
            entries,
            used,
        }
    }

    /// The object's name.
    pub fn object(&self) -> &str {
        &self.object
    }

    fn get(&self, key: &str) -> Option<&LawValue> {
        let k = self.entries.iter().position(|(n, _)| n == key)?;
        self.used[k].set(true);
        Some(&self.entries[k].1)
    }

    fn wrong(&self, key: &str, want: &str, got: &LawValue) -> ControlError {
        ControlError::BadReference(format!(
            "{}: `{key}` must be {want}, got {}",
            self.object,
            got.kind()
        ))
    }

    fn missing(&self, key: &str, what: &str) -> ControlError {
        ControlError::BadReference(format!("{}: the law needs `{key}` ({what})", self.object))
    }

    /// A number, if given. Non-finite values are refused.
    pub fn scalar(&self, key: &str) -> Result<Option<f64>, ControlError> {
        match self.get(key) {
            None => Ok(None),
            Some(LawValue::Scalar(x)) if x.is_finite() => Ok(Some(*x)),
            Some(LawValue::Scalar(x)) => Err(ControlError::InvalidValue {
                object: self.object.clone(),
                what: key.to_string(),
                value: *x,
                reason: "must be finite".into(),
            }),
            Some(v) => Err(self.wrong(key, "a number", v)),
        }
    }

    /// A number that must be given; `what` describes it in the message.
    pub fn require_scalar(&self, key: &str, what: &str) -> Result<f64, ControlError> {
        self.scalar(key)?.ok_or_else(|| self.missing(key, what))
    }

    /// A vector (a number counts as a vector of length 1), if given.
    pub fn vector(&self, key: &str) -> Result<Option<Vec<f64>>, ControlError> {
        let v = match self.get(key) {
            None => return Ok(None),
            Some(LawValue::Scalar(x)) => vec![*x],
            Some(LawValue::Vector(v)) => v.clone(),
            Some(LawValue::Matrix(m)) if m.nrows() == 1 || m.ncols() == 1 => {
                m.iter().copied().collect()
            }
            Some(v) => return Err(self.wrong(key, "a vector", v)),
        };
        self.finite(key, &v)?;
        Ok(Some(v))
    }

    /// A vector that must be given.
    pub fn require_vector(&self, key: &str, what: &str) -> Result<Vec<f64>, ControlError> {
        self.vector(key)?.ok_or_else(|| self.missing(key, what))
    }

    /// A matrix (a number is 1 × 1, a vector one row), if given.
    pub fn matrix(&self, key: &str) -> Result<Option<DMatrix<f64>>, ControlError> {
        let m = match self.get(key) {
            None => return Ok(None),
            Some(LawValue::Scalar(x)) => DMatrix::from_element(1, 1, *x),
            Some(LawValue::Vector(v)) => DMatrix::from_row_slice(1, v.len(), v),
            Some(LawValue::Matrix(m)) => m.clone(),
            Some(v) => return Err(self.wrong(key, "a matrix", v)),
        };
        self.finite(key, m.as_slice())?;
        Ok(Some(m))
    }

    /// A matrix that must be given.
    pub fn require_matrix(&self, key: &str, what: &str) -> Result<DMatrix<f64>, ControlError> {
        self.matrix(key)?.ok_or_else(|| self.missing(key, what))
    }

    /// A word, if given.
    pub fn text(&self, key: &str) -> Result<Option<&str>, ControlError> {
        match self.get(key) {
            None => Ok(None),
            Some(LawValue::Text(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.wrong(key, "a word", v)),
        }
    }

    /// A yes/no flag given as a number (0 or 1) or the words true/false.
    pub fn flag(&self, key: &str) -> Result<Option<bool>, ControlError> {
        match self.get(key) {
            None => Ok(None),
            Some(LawValue::Scalar(x)) if *x == 0.0 || *x == 1.0 => Ok(Some(*x == 1.0)),
            Some(LawValue::Text(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(v) => Err(self.wrong(key, "true, false, 0 or 1", v)),
        }
    }

    fn finite(&self, key: &str, v: &[f64]) -> Result<(), ControlError> {
        match v.iter().find(|x| !x.is_finite()) {
            None => Ok(()),
            Some(x) => Err(ControlError::InvalidValue {
                object: self.object.clone(),
                what: key.to_string(),
                value: *x,
                reason: "must be finite".into(),
            }),
        }
    }

    /// Keys given but never read, in the order given.
    pub fn unused(&self) -> Vec<&str> {
        self.entries
            .iter()
            .zip(&self.used)
            .filter(|(_, u)| !u.get())
            .map(|((k, _), _)| k.as_str())
            .collect()
    }
}

/// A set of control laws and observers, created by name.
pub trait LawCatalog: Send + Sync {
    /// The controller laws it knows, e.g. `["pid", "smc_implicit", …]`.
    fn controller_laws(&self) -> Vec<&'static str>;
    /// The observer laws it knows.
    fn observer_laws(&self) -> Vec<&'static str>;
    /// Creates a controller of law `law` from `params`.
    fn controller(
        &self,
        law: &str,
        params: &LawParams,
    ) -> Result<Box<dyn Controller>, ControlError>;
    /// Creates an observer of law `law` from `params`.
    fn observer(&self, law: &str, params: &LawParams) -> Result<Box<dyn Observer>, ControlError>;
}

/// A catalog with no laws (scenarios without control need none).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLaws;

impl LawCatalog for NoLaws {
    fn controller_laws(&self) -> Vec<&'static str> {
        Vec::new()
    }
    fn observer_laws(&self) -> Vec<&'static str> {
        Vec::new()
    }
    fn controller(&self, law: &str, p: &LawParams) -> Result<Box<dyn Controller>, ControlError> {
        Err(ControlError::BadReference(format!(
            "{}: no controller law `{law}` is available here (laws come from the nonsmooth-controllers crate)",
            p.object()
        )))
    }
    fn observer(&self, law: &str, p: &LawParams) -> Result<Box<dyn Observer>, ControlError> {
        Err(ControlError::BadReference(format!(
            "{}: no observer law `{law}` is available here (laws come from the nonsmooth-controllers crate)",
            p.object()
        )))
    }
}

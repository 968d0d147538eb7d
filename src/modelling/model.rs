//! The model: dynamical systems and the interactions linking them, built
//! once by [`ModelBuilder`] (which checks every dimension) and immutable
//! afterwards. A simulation holds the state apart from it.

use std::collections::HashMap;

use super::dynamical_system::DynamicalSystem;
use super::error::{check_size, ModelError, Result};
use super::law::NonsmoothLaw;
use super::relation::Relation;

/// Handle of a dynamical system in a [`Model`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SystemId(pub usize);

/// Handle of an interaction in a [`Model`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InteractionId(pub usize);

/// A named dynamical system.
#[derive(Debug, Clone)]
pub struct System {
    /// Its name (letters, digits, `_`), used in output columns.
    pub name: String,
    /// The dynamics.
    pub ds: DynamicalSystem,
}

/// A named interaction: a relation and a nonsmooth law on one or two systems.
#[derive(Debug, Clone)]
pub struct Interaction {
    /// Its name (letters, digits, `_`), used in output columns.
    pub name: String,
    /// The one or two systems it links; their states are concatenated in this order.
    pub systems: Vec<SystemId>,
    /// How y depends on the state and λ acts on it.
    pub relation: Relation,
    /// The set-valued law between y and λ.
    pub law: NonsmoothLaw,
}

impl Interaction {
    /// m, the size of y and λ.
    pub fn dim(&self) -> usize {
        self.law.size()
    }
}

/// An immutable nonsmooth dynamical system: systems, interactions and the
/// graph linking them.
#[derive(Debug, Clone)]
pub struct Model {
    systems: Vec<System>,
    interactions: Vec<Interaction>,
    by_system: Vec<Vec<InteractionId>>,
}

impl Model {
    /// The systems, indexed by [`SystemId`].
    pub fn systems(&self) -> &[System] {
        &self.systems
    }

    /// The interactions, indexed by [`InteractionId`].
    pub fn interactions(&self) -> &[Interaction] {
        &self.interactions
    }

    /// One system.
    pub fn system(&self, id: SystemId) -> &System {
        &self.systems[id.0]
    }

    /// One interaction.
    pub fn interaction(&self, id: InteractionId) -> &Interaction {
        &self.interactions[id.0]
    }

    /// The interactions that involve a system.
    pub fn interactions_of(&self, id: SystemId) -> &[InteractionId] {
        &self.by_system[id.0]
    }

    /// Looks a system up by name.
    pub fn system_id(&self, name: &str) -> Option<SystemId> {
        self.systems
            .iter()
            .position(|s| s.name == name)
            .map(SystemId)
    }

    /// Looks an interaction up by name.
    pub fn interaction_id(&self, name: &str) -> Option<InteractionId> {
        self.interactions
            .iter()
            .position(|s| s.name == name)
            .map(InteractionId)
    }

    /// True when every system is Lagrangian (false for an empty model).
    pub fn is_lagrangian(&self) -> bool {
        !self.systems.is_empty() && self.systems.iter().all(|s| s.ds.is_lagrangian())
    }
}

/// Builds a [`Model`], checking each system and interaction as it is added.
#[derive(Debug, Default)]
pub struct ModelBuilder {
    systems: Vec<System>,
    interactions: Vec<Interaction>,
    names: HashMap<String, ()>,
}

impl ModelBuilder {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    fn claim_name(&mut self, name: &str) -> Result<()> {
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(ModelError::InvalidName(name.to_string()));
        }
        if self.names.insert(name.to_string(), ()).is_some() {
            return Err(ModelError::DuplicateName(name.to_string()));
        }
        Ok(())
    }

    /// Adds a dynamical system after checking its dimensions and values.
    pub fn add_system(&mut self, name: &str, ds: impl Into<DynamicalSystem>) -> Result<SystemId> {
        let ds = ds.into();
        ds.validate(name)?;
        self.claim_name(name)?;
        self.systems.push(System {
            name: name.to_string(),
            ds,
        });
        Ok(SystemId(self.systems.len() - 1))
    }

    /// Adds an interaction on one or two systems, after checking that the
    /// relation's shapes match the systems and the law, and that the law
    /// suits the relation (impact laws need a Lagrangian relation; relay
    /// laws a first-order one).
    pub fn add_interaction(
        &mut self,
        name: &str,
        systems: &[SystemId],
        relation: impl Into<Relation>,
        law: NonsmoothLaw,
    ) -> Result<InteractionId> {
        let relation = relation.into();
        let incompatible = |reason: String| ModelError::Incompatible {
            interaction: name.to_string(),
            reason,
        };
        if systems.is_empty() || systems.len() > 2 {
            return Err(incompatible(format!(
                "links {} systems; it must link one or two",
                systems.len()
            )));
        }
        if systems.len() == 2 && systems[0] == systems[1] {
            return Err(incompatible("links a system to itself twice".into()));
        }
        let mut n = 0;
        for &s in systems {
            let sys = self
                .systems
                .get(s.0)
                .ok_or_else(|| ModelError::UnknownSystem {
                    interaction: name.to_string(),
                    system: format!("#{}", s.0),
                })?;
            if sys.ds.is_lagrangian() != relation.is_lagrangian() {
                return Err(incompatible(format!(
                    "a {} relation cannot act on the {} system '{}'",
                    if relation.is_lagrangian() {
                        "Lagrangian"
                    } else {
                        "first-order"
                    },
                    sys.ds.kind_name(),
                    sys.name
                )));
            }
            n += sys.ds.dim();
        }
        relation.validate(name, n)?;
        law.validate(name)?;
        check_size(name, "nonsmooth law", law.size(), relation.output_dim())?;
        match (&law, relation.is_lagrangian()) {
            (NonsmoothLaw::NewtonImpact { .. }, false) => {
                return Err(incompatible(
                    "a Newton impact law needs a Lagrangian relation".into(),
                ))
            }
            (NonsmoothLaw::Relay { .. }, true) => {
                return Err(incompatible(
                    "a relay law needs a first-order relation".into(),
                ))
            }
            _ => {}
        }
        self.claim_name(name)?;
        self.interactions.push(Interaction {
            name: name.to_string(),
            systems: systems.to_vec(),
            relation,
            law,
        });
        Ok(InteractionId(self.interactions.len() - 1))
    }

    /// Finishes the model.
    pub fn build(self) -> Model {
        let mut by_system = vec![Vec::new(); self.systems.len()];
        for (i, inter) in self.interactions.iter().enumerate() {
            for s in &inter.systems {
                by_system[s.0].push(InteractionId(i));
            }
        }
        Model {
            systems: self.systems,
            interactions: self.interactions,
            by_system,
        }
    }
}

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
    /// The interactions of system `s` are
    /// `by_system[by_system_start[s]..by_system_start[s + 1]]`, in
    /// increasing order (one list for the whole graph, not one per system).
    by_system: Vec<InteractionId>,
    by_system_start: Vec<usize>,
    /// Every name, for look-ups in constant time (models of many
    /// repeated systems are looked up by name once per output column,
    /// sensor or FMU variable).
    names: HashMap<String, Named>,
}

/// What a name of a model names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    System(SystemId),
    Interaction(InteractionId),
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
        &self.by_system[self.by_system_start[id.0]..self.by_system_start[id.0 + 1]]
    }

    /// Looks a system up by name.
    pub fn system_id(&self, name: &str) -> Option<SystemId> {
        match self.names.get(name)? {
            Named::System(id) => Some(*id),
            Named::Interaction(_) => None,
        }
    }

    /// Looks an interaction up by name.
    pub fn interaction_id(&self, name: &str) -> Option<InteractionId> {
        match self.names.get(name)? {
            Named::Interaction(id) => Some(*id),
            Named::System(_) => None,
        }
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
    names: HashMap<String, Named>,
}

impl ModelBuilder {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks that `name` is valid and not yet taken.
    fn check_name(&self, name: &str) -> Result<()> {
        let valid = !name.is_empty()
            && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(ModelError::InvalidName(name.to_string()));
        }
        if self.names.contains_key(name) {
            return Err(ModelError::DuplicateName(name.to_string()));
        }
        Ok(())
    }

    /// Adds a dynamical system after checking its dimensions and values.
    pub fn add_system(&mut self, name: &str, ds: impl Into<DynamicalSystem>) -> Result<SystemId> {
        let ds = ds.into();
        ds.validate(name)?;
        self.check_name(name)?;
        let id = SystemId(self.systems.len());
        self.names.insert(name.to_string(), Named::System(id));
        self.systems.push(System {
            name: name.to_string(),
            ds,
        });
        Ok(id)
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
            (NonsmoothLaw::NewtonImpactFriction { .. }, false) => {
                return Err(incompatible(
                    "a Newton impact–friction law needs a Lagrangian relation".into(),
                ))
            }
            (NonsmoothLaw::Relay { .. }, true) => {
                return Err(incompatible(
                    "a relay law needs a first-order relation".into(),
                ))
            }
            _ => {}
        }
        self.check_name(name)?;
        let id = InteractionId(self.interactions.len());
        self.names.insert(name.to_string(), Named::Interaction(id));
        self.interactions.push(Interaction {
            name: name.to_string(),
            systems: systems.to_vec(),
            relation,
            law,
        });
        Ok(id)
    }

    /// Finishes the model.
    pub fn build(self) -> Model {
        // Counts per system, their prefix sums, then each list filled in
        // interaction order.
        let mut start = vec![0usize; self.systems.len() + 1];
        for inter in &self.interactions {
            for s in &inter.systems {
                start[s.0 + 1] += 1;
            }
        }
        for k in 0..self.systems.len() {
            start[k + 1] += start[k];
        }
        let mut next = start.clone();
        let mut by_system = vec![InteractionId(0); start[self.systems.len()]];
        for (i, inter) in self.interactions.iter().enumerate() {
            for s in &inter.systems {
                by_system[next[s.0]] = InteractionId(i);
                next[s.0] += 1;
            }
        }
        Model {
            systems: self.systems,
            interactions: self.interactions,
            by_system,
            by_system_start: start,
            names: self.names,
        }
    }
}

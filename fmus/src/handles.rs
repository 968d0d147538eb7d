//! The FMU-state handles an instance has handed to its host and not yet
//! seen freed, kept by address so that a handle of another instance, a
//! freed one or a made-up pointer is refused before it is dereferenced.
//! Shared by the FMI 2.0 ([`crate::component`]) and FMI 3.0
//! ([`crate::fmi3`]) instances.

use std::collections::HashSet;

/// The addresses of the live state handles of one instance.
#[derive(Debug, Default)]
pub struct StateHandles(HashSet<usize>);

impl StateHandles {
    /// Remembers a handle given to the host.
    pub fn register(&mut self, address: usize) {
        self.0.insert(address);
    }

    /// True when `address` is a live handle of this instance.
    pub fn owns(&self, address: usize) -> bool {
        self.0.contains(&address)
    }

    /// Forgets a handle freed by the host; false when it was not one.
    pub fn unregister(&mut self, address: usize) -> bool {
        self.0.remove(&address)
    }

    /// Every handle not freed by the host (freed with the instance).
    pub fn take_all(&mut self) -> Vec<usize> {
        self.0.drain().collect()
    }
}

//! The FMU states of an instance: saved into values the instance owns and
//! hands to its host as handles (their addresses), so that a handle of
//! another instance, a freed one or a made-up pointer is refused by lookup,
//! never dereferenced, and every state not freed by the host is dropped with
//! the instance. The C layers only turn pointers into handles and back.

use std::collections::HashMap;

use super::{Call, Instance, Status};
use crate::runner::Runner;

/// The saved states an instance handed to its host, by handle.
pub struct StateHandles<S>(HashMap<usize, Box<S>>);

impl<S> Default for StateHandles<S> {
    fn default() -> Self {
        StateHandles(HashMap::new())
    }
}

impl<S> StateHandles<S> {
    /// Keeps `state` and returns its handle (the address of the box, stable
    /// while it lives; never 0).
    fn insert(&mut self, state: S) -> usize {
        let b = Box::new(state);
        let handle = &*b as *const S as usize;
        self.0.insert(handle, b);
        handle
    }
}

impl<R: Runner> Instance<R> {
    /// fmi2GetFMUstate / fmi3GetFMUState: `slot` 0 (a NULL `*state`) saves
    /// into a new state and returns its handle; a handle of this instance is
    /// overwritten (its storage reused); anything else is refused.
    pub fn get_fmu_state(&mut self, slot: usize) -> Result<usize, Status> {
        let f = self.name(Call::GetFmuState);
        if slot == 0 {
            let s = self
                .get_state(None)?
                .ok_or_else(|| self.error(f, "no state was produced"))?;
            return Ok(self.states.insert(s));
        }
        let Some(mut saved) = self.states.0.remove(&slot) else {
            return Err(self.error(f, "*FMUstate is neither NULL nor a state of this instance"));
        };
        let result = self.get_state(Some(&mut *saved));
        self.states.0.insert(slot, saved);
        result.map(|_| slot)
    }

    /// fmi2SetFMUstate / fmi3SetFMUState of a handle.
    pub fn set_fmu_state(&mut self, handle: usize) -> Status {
        let f = self.name(Call::SetFmuState);
        let Some(saved) = self.states.0.remove(&handle) else {
            return self.error(
                f,
                "FMUstate is not a state of this instance (freed, or from another one)",
            );
        };
        let status = self.set_state(&saved);
        self.states.0.insert(handle, saved);
        status
    }

    /// fmi2FreeFMUstate / fmi3FreeFMUState (handle 0: nothing to free).
    pub fn free_fmu_state(&mut self, handle: usize) -> Status {
        if handle == 0 || self.states.0.remove(&handle).is_some() {
            return Status::Ok;
        }
        self.error(
            self.name(Call::FreeFmuState),
            "FMUstate is not a state of this instance (freed already, or from another one)",
        )
    }

    /// The bytes of a state of this instance, or the error of `call`.
    fn state_bytes(&self, call: Call, handle: usize) -> Result<Vec<u8>, Status> {
        match self.states.0.get(&handle) {
            Some(s) => Ok(self.runner.serialize_state(s)),
            None => Err(self.error(self.name(call), "FMUstate is not a state of this instance")),
        }
    }

    /// fmi2SerializedFMUstateSize / fmi3SerializedFMUStateSize.
    pub fn serialized_state_size(&self, handle: usize) -> Result<usize, Status> {
        self.state_bytes(Call::SerializedSize, handle)
            .map(|b| b.len())
    }

    /// fmi2SerializeFMUstate / fmi3SerializeFMUState into `out`.
    pub fn serialize_fmu_state(&self, handle: usize, out: &mut [u8]) -> Status {
        let data = match self.state_bytes(Call::Serialize, handle) {
            Ok(d) => d,
            Err(s) => return s,
        };
        let Some(out) = out.get_mut(..data.len()) else {
            return self.error(
                self.name(Call::Serialize),
                &format!(
                    "size {} is too small: the state takes {} bytes ({})",
                    out.len(),
                    data.len(),
                    self.name(Call::SerializedSize)
                ),
            );
        };
        out.copy_from_slice(&data);
        Status::Ok
    }

    /// fmi2DeSerializeFMUstate / fmi3DeserializeFMUState: into the state
    /// `slot` when it is a handle of this instance, else into a new one;
    /// returns the handle.
    pub fn deserialize_fmu_state(&mut self, bytes: &[u8], slot: usize) -> Result<usize, Status> {
        let s = self
            .runner
            .deserialize_state(bytes)
            .map_err(|e| self.error(self.name(Call::Deserialize), &e.to_string()))?;
        match self.states.0.get_mut(&slot) {
            Some(saved) => {
                **saved = s;
                Ok(slot)
            }
            None => Ok(self.states.insert(s)),
        }
    }
}

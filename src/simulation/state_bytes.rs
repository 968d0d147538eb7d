//! The byte frame of saved states: a 4-byte magic, a format version
//! (u32, little-endian), then the state's fields in
//! [postcard](https://docs.rs/postcard)'s compact serde format (integers
//! as varints, `f64` as its 8 IEEE-754 bytes, little-endian, so every bit
//! of a number is kept).
//!
//! Reading refuses bytes with another magic or version, truncated bytes and
//! bytes left after the state, each as a [`StateError::Corrupt`], never a
//! panic (postcard checks every length and tag against what is left).

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::StateError;

/// Appends `magic`, `version` and `value` in postcard's format to `out`.
pub(crate) fn write<T: Serialize>(magic: &[u8; 4], version: u32, value: &T, out: &mut Vec<u8>) {
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    let buf = std::mem::take(out);
    // Writing into a vector cannot fail: no length limit, and every field
    // of a state is a type postcard writes.
    *out = postcard::to_extend(value, buf).expect("postcard writes every state field");
}

/// Reads what [`write`] wrote with the same `magic` and `version`; `what`
/// names the state in the error messages.
pub(crate) fn read<T: DeserializeOwned>(
    magic: &[u8; 4],
    version: u32,
    what: &str,
    bytes: &[u8],
) -> Result<T, StateError> {
    let bad = |m: String| StateError::Corrupt(m);
    if bytes.len() < 8 {
        return Err(bad(format!(
            "truncated: {} bytes, shorter than the header",
            bytes.len()
        )));
    }
    if &bytes[..4] != magic {
        return Err(bad(format!("no {} header", String::from_utf8_lossy(magic))));
    }
    let found = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if found != version {
        return Err(bad(format!(
            "{what} format version {found}, this program reads {version}"
        )));
    }
    let (value, rest) =
        postcard::take_from_bytes::<T>(&bytes[8..]).map_err(|e| bad(format!("{what}: {e}")))?;
    if !rest.is_empty() {
        return Err(bad(format!(
            "{} bytes after the end of the {what}",
            rest.len()
        )));
    }
    Ok(value)
}

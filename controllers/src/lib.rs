//! Controllers acting through the core control interfaces (filled by the control toolbox work).

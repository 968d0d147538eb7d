//! FMI 2.0 co-simulation export (filled by the FMI export work).

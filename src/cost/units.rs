//! The units every price is quoted in.

/// Seconds in the 30-day month used for projections.
pub const MONTH_SECONDS: f64 = 30.0 * 24.0 * 3600.0;
/// Bytes in a GiB, the unit AWS bills as "GB".
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

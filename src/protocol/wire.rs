//! Kafka's primitive wire types, read from untrusted bytes.
//!
//! Every read checks the bytes remaining before it consumes or allocates: a length taken from the
//! wire is compared with what is left of the frame first, and every allocation is charged to
//! the message's `decode_budget` before it is made, so no input can make the decoder allocate
//! more than a small multiple of the frame it came in. Nothing here panics on input.
//!
//! Errors carry the path of the field that failed; `Message::decode` adds the message name and
//! version on the way out.

use super::decode_budget;
use super::spliced::{self, Records};
use bytes::{Buf, BufMut, Bytes, BytesMut};

#[cfg(test)]
pub use super::sample::{Sample, SampleRng};

/// What went wrong at the innermost failing field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("needs {needed} bytes, {remaining} remain")]
    Truncated { needed: usize, remaining: usize },
    #[error("length {length} is larger than the {remaining} bytes remaining")]
    LengthTooLarge { length: u64, remaining: usize },
    #[error("negative length {0}")]
    NegativeLength(i64),
    #[error("null where the version does not allow one")]
    UnexpectedNull,
    #[error("varint longer than {0} bytes")]
    VarintTooLong(usize),
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    #[error("unsupported version")]
    UnsupportedVersion,
    #[error(
        "decoding would allocate {bytes} more bytes; the message's budget has {available} left"
    )]
    DecodeBudgetExceeded { bytes: usize, available: usize },
}

impl From<decode_budget::BudgetExceeded> for WireError {
    fn from(e: decode_budget::BudgetExceeded) -> WireError {
        WireError::DecodeBudgetExceeded {
            bytes: e.bytes,
            available: e.available,
        }
    }
}

impl WireError {
    /// This error, at the named field.
    pub fn at(self, field: &'static str) -> FieldError {
        FieldError {
            path: vec![field],
            kind: self,
        }
    }
}

/// A decoding failure with the path of fields leading to it, innermost last after `finish`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Field names from the innermost outwards, as the error bubbles up.
    path: Vec<&'static str>,
    pub kind: WireError,
}

impl From<WireError> for FieldError {
    fn from(kind: WireError) -> Self {
        FieldError {
            path: Vec::new(),
            kind,
        }
    }
}

/// The error every `decode` returns: which message, version and field failed, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot decode {message} v{version} at {field}: {kind}")]
pub struct DecodeError {
    pub message: &'static str,
    pub version: i16,
    /// Dotted path such as `Topics.Partitions.Records`, or `-` for the message itself.
    pub field: String,
    pub kind: WireError,
}

impl FieldError {
    pub fn finish(self, message: &'static str, version: i16) -> DecodeError {
        let field = if self.path.is_empty() {
            "-".to_string()
        } else {
            let mut path = self.path;
            path.reverse();
            path.join(".")
        };
        DecodeError {
            message,
            version,
            field,
            kind: self.kind,
        }
    }
}

/// Adds the name of the field being read to an error.
pub trait Context<T> {
    fn ctx(self, field: &'static str) -> Result<T, FieldError>;
}

impl<T, E: Into<FieldError>> Context<T> for Result<T, E> {
    fn ctx(self, field: &'static str) -> Result<T, FieldError> {
        self.map_err(|e| {
            let mut e = e.into();
            e.path.push(field);
            e
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("{message} does not support version {version}")]
    UnsupportedVersion { message: &'static str, version: i16 },
    #[error("field {field} holds a non-default value that version {version} cannot carry")]
    UnsupportedField { field: &'static str, version: i16 },
    #[error("field {field} is null in a version where it cannot be")]
    NullNotAllowed { field: &'static str },
    #[error("a length of {0} does not fit the wire format")]
    TooLong(usize),
}

/// A tagged field this code does not know; kept so re-encoding loses nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawTaggedField {
    pub tag: u32,
    pub data: Bytes,
}

/// A struct of a message: reads and writes itself at a version.
pub trait Struct: Sized {
    fn read(buf: &mut Bytes, version: i16) -> Result<Self, FieldError>;
    fn write(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError>;
}

/// A top-level message (request, response, header or data record).
pub trait Message: Struct + Default {
    const NAME: &'static str;
    const VALID_VERSIONS: (i16, i16);
    const FLEXIBLE_MIN: Option<i16>;

    fn decode(buf: &mut Bytes, version: i16) -> Result<Self, DecodeError> {
        if !(Self::VALID_VERSIONS.0..=Self::VALID_VERSIONS.1).contains(&version) {
            return Err(FieldError::from(WireError::UnsupportedVersion).finish(Self::NAME, version));
        }
        decode_budget::within_budget(buf.remaining(), || Self::read(buf, version))
            .map_err(|e| e.finish(Self::NAME, version))
    }

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        if !(Self::VALID_VERSIONS.0..=Self::VALID_VERSIONS.1).contains(&version) {
            return Err(EncodeError::UnsupportedVersion {
                message: Self::NAME,
                version,
            });
        }
        self.write(buf, version)
    }

    fn is_flexible(version: i16) -> bool {
        Self::FLEXIBLE_MIN.is_some_and(|min| version >= min)
    }

    /// Sets the response's `throttle_time_ms`, for a message that has one at its top level
    /// (most responses); a no-op for any other.
    fn set_throttle_time_ms(&mut self, _ms: i32) {}
}

fn need(buf: &Bytes, n: usize) -> Result<(), WireError> {
    if buf.remaining() < n {
        return Err(WireError::Truncated {
            needed: n,
            remaining: buf.remaining(),
        });
    }
    Ok(())
}

macro_rules! fixed {
    ($read:ident, $write:ident, $ty:ty, $get:ident, $put:ident) => {
        pub fn $read(buf: &mut Bytes) -> Result<$ty, WireError> {
            need(buf, std::mem::size_of::<$ty>())?;
            Ok(buf.$get())
        }
        pub fn $write(buf: &mut BytesMut, v: $ty) -> Result<(), EncodeError> {
            buf.$put(v);
            Ok(())
        }
    };
}

fixed!(read_i8, write_i8, i8, get_i8, put_i8);
fixed!(read_i16, write_i16, i16, get_i16, put_i16);
fixed!(read_u16, write_u16, u16, get_u16, put_u16);
fixed!(read_i32, write_i32, i32, get_i32, put_i32);
fixed!(read_u32, write_u32, u32, get_u32, put_u32);
fixed!(read_i64, write_i64, i64, get_i64, put_i64);
fixed!(read_f64, write_f64, f64, get_f64, put_f64);

pub fn read_bool(buf: &mut Bytes) -> Result<bool, WireError> {
    Ok(read_i8(buf)? != 0)
}

pub fn write_bool(buf: &mut BytesMut, v: bool) -> Result<(), EncodeError> {
    buf.put_u8(u8::from(v));
    Ok(())
}

pub fn read_uuid(buf: &mut Bytes) -> Result<uuid::Uuid, WireError> {
    need(buf, 16)?;
    let mut raw = [0u8; 16];
    buf.copy_to_slice(&mut raw);
    Ok(uuid::Uuid::from_bytes(raw))
}

pub fn write_uuid(buf: &mut BytesMut, v: &uuid::Uuid) -> Result<(), EncodeError> {
    buf.put_slice(v.as_bytes());
    Ok(())
}

/// An unsigned LEB128 varint of at most 5 bytes (a u32).
pub fn read_uvarint(buf: &mut Bytes) -> Result<u32, WireError> {
    let mut value: u32 = 0;
    for i in 0..5 {
        need(buf, 1)?;
        let byte = buf.get_u8();
        // The fifth byte may carry only the top 4 bits of a u32.
        if i == 4 && byte > 0x0f {
            return Err(WireError::VarintTooLong(5));
        }
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(WireError::VarintTooLong(5))
}

pub fn write_uvarint(buf: &mut BytesMut, mut v: u32) {
    while v >= 0x80 {
        buf.put_u8((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    buf.put_u8(v as u8);
}

/// An unsigned LEB128 varint of at most 10 bytes (a u64).
pub fn read_uvarlong(buf: &mut Bytes) -> Result<u64, WireError> {
    let mut value: u64 = 0;
    for i in 0..10 {
        need(buf, 1)?;
        let byte = buf.get_u8();
        if i == 9 && byte > 0x01 {
            return Err(WireError::VarintTooLong(10));
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(WireError::VarintTooLong(10))
}

/// A zigzag-encoded signed varint (record fields).
pub fn read_varint(buf: &mut Bytes) -> Result<i32, WireError> {
    let raw = read_uvarint(buf)?;
    Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
}

/// A zigzag-encoded signed varlong (record fields).
pub fn read_varlong(buf: &mut Bytes) -> Result<i64, WireError> {
    let raw = read_uvarlong(buf)?;
    Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
}

pub fn write_varint(buf: &mut BytesMut, v: i32) {
    write_uvarint(buf, ((v << 1) ^ (v >> 31)) as u32);
}

pub fn write_varlong(buf: &mut BytesMut, v: i64) {
    let mut raw = ((v << 1) ^ (v >> 63)) as u64;
    while raw >= 0x80 {
        buf.put_u8((raw as u8 & 0x7f) | 0x80);
        raw >>= 7;
    }
    buf.put_u8(raw as u8);
}

/// Reads a length that may be null (-1): compact lengths are uvarint N+1, classic ones are
/// int16 (strings) or int32 (bytes, arrays). Checks it against the bytes remaining.
fn read_length(buf: &mut Bytes, compact: bool, wide: bool) -> Result<Option<usize>, WireError> {
    let length: i64 = if compact {
        i64::from(read_uvarint(buf)?) - 1
    } else if wide {
        i64::from(read_i32(buf)?)
    } else {
        i64::from(read_i16(buf)?)
    };
    if length == -1 {
        return Ok(None);
    }
    if length < 0 {
        return Err(WireError::NegativeLength(length));
    }
    // `length` is non-negative and at most u32::MAX here.
    let length = length as u64;
    if length > buf.remaining() as u64 {
        return Err(WireError::LengthTooLarge {
            length,
            remaining: buf.remaining(),
        });
    }
    Ok(Some(length as usize))
}

fn write_length(
    buf: &mut BytesMut,
    compact: bool,
    wide: bool,
    length: Option<usize>,
) -> Result<(), EncodeError> {
    match (compact, length) {
        (true, None) => write_uvarint(buf, 0),
        (true, Some(n)) => {
            let n1 = u32::try_from(n)
                .ok()
                .and_then(|n| n.checked_add(1))
                .ok_or(EncodeError::TooLong(n))?;
            write_uvarint(buf, n1);
        }
        (false, None) if wide => buf.put_i32(-1),
        (false, None) => buf.put_i16(-1),
        (false, Some(n)) if wide => {
            buf.put_i32(i32::try_from(n).map_err(|_| EncodeError::TooLong(n))?)
        }
        (false, Some(n)) => buf.put_i16(i16::try_from(n).map_err(|_| EncodeError::TooLong(n))?),
    }
    Ok(())
}

pub fn read_nullable_string(buf: &mut Bytes, compact: bool) -> Result<Option<String>, WireError> {
    let Some(length) = read_length(buf, compact, false)? else {
        return Ok(None);
    };
    decode_budget::charge(length)?;
    let raw = buf.split_to(length);
    String::from_utf8(raw.to_vec())
        .map(Some)
        .map_err(|_| WireError::InvalidUtf8)
}

pub fn read_string(buf: &mut Bytes, compact: bool) -> Result<String, WireError> {
    read_nullable_string(buf, compact)?.ok_or(WireError::UnexpectedNull)
}

pub fn write_nullable_string(
    buf: &mut BytesMut,
    compact: bool,
    v: Option<&str>,
) -> Result<(), EncodeError> {
    write_length(buf, compact, false, v.map(str::len))?;
    if let Some(s) = v {
        buf.put_slice(s.as_bytes());
    }
    Ok(())
}

pub fn write_string(buf: &mut BytesMut, compact: bool, v: &str) -> Result<(), EncodeError> {
    write_nullable_string(buf, compact, Some(v))
}

/// Bytes and records: a zero-copy slice of the frame.
pub fn read_nullable_bytes(buf: &mut Bytes, compact: bool) -> Result<Option<Bytes>, WireError> {
    Ok(read_length(buf, compact, true)?.map(|length| buf.split_to(length)))
}

pub fn read_bytes(buf: &mut Bytes, compact: bool) -> Result<Bytes, WireError> {
    read_nullable_bytes(buf, compact)?.ok_or(WireError::UnexpectedNull)
}

pub fn write_nullable_bytes(
    buf: &mut BytesMut,
    compact: bool,
    v: Option<&[u8]>,
) -> Result<(), EncodeError> {
    write_length(buf, compact, true, v.map(<[u8]>::len))?;
    if let Some(b) = v {
        buf.put_slice(b);
    }
    Ok(())
}

pub fn write_bytes(buf: &mut BytesMut, compact: bool, v: &[u8]) -> Result<(), EncodeError> {
    write_nullable_bytes(buf, compact, Some(v))
}

pub fn read_nullable_records(buf: &mut Bytes, compact: bool) -> Result<Option<Records>, WireError> {
    Ok(read_nullable_bytes(buf, compact)?.map(Records::from))
}

pub fn read_records(buf: &mut Bytes, compact: bool) -> Result<Records, WireError> {
    read_bytes(buf, compact).map(Records::from)
}

/// Record fields are written like bytes, their long parts spliced into a response frame
/// being captured rather than copied (see `spliced`).
pub fn write_nullable_records(
    buf: &mut BytesMut,
    compact: bool,
    v: Option<&Records>,
) -> Result<(), EncodeError> {
    write_length(buf, compact, true, v.map(Records::len))?;
    if let Some(records) = v {
        spliced::put(buf, records);
    }
    Ok(())
}

pub fn write_records(buf: &mut BytesMut, compact: bool, v: &Records) -> Result<(), EncodeError> {
    write_nullable_records(buf, compact, Some(v))
}

/// Reads an array whose every element takes at least one byte, so a count larger than the
/// bytes remaining is rejected before anything is allocated (as Kafka's own decoder does);
/// the elements' memory is charged to the decode budget, then reserved exactly.
pub fn read_nullable_array<T, E: Into<FieldError>>(
    buf: &mut Bytes,
    compact: bool,
    mut read: impl FnMut(&mut Bytes) -> Result<T, E>,
) -> Result<Option<Vec<T>>, FieldError> {
    let Some(count) = read_length(buf, compact, true)? else {
        return Ok(None);
    };
    decode_budget::charge_elements::<T>(count).map_err(WireError::from)?;
    let mut items = Vec::with_capacity(count);
    for index in 0..count {
        let item = read(buf).map_err(Into::into).map_err(|mut e| {
            e.path
                .push(ELEMENT_LABELS[index.min(ELEMENT_LABELS.len() - 1)]);
            e
        })?;
        items.push(item);
    }
    Ok(Some(items))
}

/// Array positions in error paths; static so that errors need no formatting on the hot path.
const ELEMENT_LABELS: [&str; 5] = ["[0]", "[1]", "[2]", "[3]", "[4+]"];

pub fn read_array<T, E: Into<FieldError>>(
    buf: &mut Bytes,
    compact: bool,
    read: impl FnMut(&mut Bytes) -> Result<T, E>,
) -> Result<Vec<T>, FieldError> {
    read_nullable_array(buf, compact, read)?.ok_or_else(|| WireError::UnexpectedNull.into())
}

pub fn write_nullable_array<T>(
    buf: &mut BytesMut,
    compact: bool,
    v: Option<&[T]>,
    mut write: impl FnMut(&mut BytesMut, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    write_length(buf, compact, true, v.map(<[T]>::len))?;
    for item in v.unwrap_or_default() {
        write(buf, item)?;
    }
    Ok(())
}

pub fn write_array<T>(
    buf: &mut BytesMut,
    compact: bool,
    v: &[T],
    write: impl FnMut(&mut BytesMut, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    write_nullable_array(buf, compact, Some(v), write)
}

/// Nullable structs carry a one-byte marker: -1 for null, 1 for present.
pub fn read_nullable_struct<T: Struct>(
    buf: &mut Bytes,
    version: i16,
) -> Result<Option<T>, FieldError> {
    if read_i8(buf)? < 0 {
        return Ok(None);
    }
    T::read(buf, version).map(Some)
}

pub fn write_nullable_struct<T: Struct>(
    buf: &mut BytesMut,
    version: i16,
    v: Option<&T>,
) -> Result<(), EncodeError> {
    match v {
        None => buf.put_i8(-1),
        Some(s) => {
            buf.put_i8(1);
            s.write(buf, version)?;
        }
    }
    Ok(())
}

/// Reads the tagged-field section of a flexible struct: a count, then (tag, size, data) each.
pub fn read_tagged_fields(buf: &mut Bytes) -> Result<Vec<RawTaggedField>, FieldError> {
    let count = read_uvarint(buf).ctx("_tagged_fields")? as usize;
    if count > buf.remaining() {
        return Err(FieldError::from(WireError::LengthTooLarge {
            length: count as u64,
            remaining: buf.remaining(),
        }))
        .ctx("_tagged_fields");
    }
    // This vector, and the struct's own list of unknown fields they are moved to (which grows
    // by doubling: up to three times its length while it reallocates).
    decode_budget::charge_elements::<RawTaggedField>(count.saturating_mul(4))
        .map_err(WireError::from)
        .ctx("_tagged_fields")?;
    let mut fields = Vec::with_capacity(count);
    for _ in 0..count {
        let tag = read_uvarint(buf).ctx("_tagged_fields")?;
        let size = read_uvarint(buf).ctx("_tagged_fields")? as usize;
        if size > buf.remaining() {
            return Err(FieldError::from(WireError::LengthTooLarge {
                length: size as u64,
                remaining: buf.remaining(),
            }))
            .ctx("_tagged_fields");
        }
        fields.push(RawTaggedField {
            tag,
            data: buf.split_to(size),
        });
    }
    Ok(fields)
}

/// Collects a struct's tagged fields, known and unknown, and writes them in tag order.
pub struct TaggedFieldsWriter<'a> {
    unknown: &'a [RawTaggedField],
    known: Vec<(u32, BytesMut)>,
}

impl<'a> TaggedFieldsWriter<'a> {
    pub fn new(unknown: &'a [RawTaggedField]) -> Self {
        TaggedFieldsWriter {
            unknown,
            known: Vec::new(),
        }
    }

    pub fn add(
        &mut self,
        tag: u32,
        write: impl FnOnce(&mut BytesMut) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        let mut data = BytesMut::new();
        write(&mut data)?;
        self.known.push((tag, data));
        Ok(())
    }

    pub fn finish(self, buf: &mut BytesMut) -> Result<(), EncodeError> {
        let mut all: Vec<(u32, &[u8])> = self
            .known
            .iter()
            .map(|(tag, data)| (*tag, &data[..]))
            .chain(self.unknown.iter().map(|f| (f.tag, &f.data[..])))
            .collect();
        all.sort_by_key(|(tag, _)| *tag);
        let count = u32::try_from(all.len()).map_err(|_| EncodeError::TooLong(all.len()))?;
        write_uvarint(buf, count);
        for (tag, data) in all {
            write_uvarint(buf, tag);
            write_uvarint(
                buf,
                u32::try_from(data.len()).map_err(|_| EncodeError::TooLong(data.len()))?,
            );
            buf.put_slice(data);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uvarint_round_trips_and_rejects_overlong() {
        for v in [0u32, 1, 127, 128, 16_383, 16_384, u32::MAX] {
            let mut out = BytesMut::new();
            write_uvarint(&mut out, v);
            assert_eq!(read_uvarint(&mut out.freeze()), Ok(v));
        }
        let mut overlong = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert_eq!(
            read_uvarint(&mut overlong),
            Err(WireError::VarintTooLong(5))
        );
        let mut truncated = Bytes::from_static(&[0x80]);
        assert!(matches!(
            read_uvarint(&mut truncated),
            Err(WireError::Truncated { .. })
        ));
    }

    #[test]
    fn zigzag_round_trips() {
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -300] {
            let mut out = BytesMut::new();
            write_varlong(&mut out, v);
            assert_eq!(read_varlong(&mut out.freeze()), Ok(v));
        }
        for v in [0i32, -1, 1, i32::MIN, i32::MAX] {
            let mut out = BytesMut::new();
            write_varint(&mut out, v);
            assert_eq!(read_varint(&mut out.freeze()), Ok(v));
        }
    }

    #[test]
    fn lengths_beyond_the_frame_are_rejected_before_allocating() {
        let mut huge_array = Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff]);
        let err = read_array(&mut huge_array, false, read_i32).unwrap_err();
        assert!(matches!(err.kind, WireError::LengthTooLarge { .. }));
        let mut negative = Bytes::from_static(&[0xff, 0xfe, b'a']);
        assert_eq!(
            read_string(&mut negative, false),
            Err(WireError::NegativeLength(-2))
        );
        let mut null = Bytes::from_static(&[0xff, 0xff]);
        assert_eq!(
            read_string(&mut null, false),
            Err(WireError::UnexpectedNull)
        );
    }
}

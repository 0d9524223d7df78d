//! The parsed form of one Kafka message definition: only what the code needs.

use serde_json::Value;

/// An inclusive version range; `None` where the spec says "none".
pub type Versions = Option<(i16, i16)>;

pub struct Message {
    pub name: String,
    pub kind: MessageKind,
    pub api_key: Option<i16>,
    pub valid: (i16, i16),
    pub flexible: Versions,
    pub latest_unstable: bool,
    /// Every struct of the message, the top-level one first.
    pub structs: Vec<Struct>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    Request,
    Response,
    Header,
    Data,
}

pub struct Struct {
    pub name: String,
    pub fields: Vec<Field>,
}

pub struct Field {
    pub name: String,
    pub ty: Type,
    pub versions: Versions,
    pub nullable: Versions,
    pub tag: Option<u32>,
    pub tagged: Versions,
    pub default: Option<String>,
    pub ignorable: bool,
    /// Field-level override of the message's flexible versions (RequestHeader.ClientId).
    pub flexible: Option<Versions>,
}

#[derive(Clone, PartialEq)]
pub enum Type {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    String,
    Uuid,
    Bytes,
    Records,
    Struct(String),
    Array(Box<Type>),
}

impl Message {
    /// Parses one definition; `None` for an API Kafka has removed (validVersions "none").
    pub fn parse(text: &str) -> Result<Option<Message>, String> {
        let json: Value = serde_json::from_str(&strip_comments(text)).map_err(|e| e.to_string())?;
        let name = str_field(&json, "name")?;
        let kind = match str_field(&json, "type")?.as_str() {
            "request" => MessageKind::Request,
            "response" => MessageKind::Response,
            "header" => MessageKind::Header,
            "data" => MessageKind::Data,
            other => return Err(format!("unknown message type {other}")),
        };
        let Some(valid) = parse_versions(&str_field(&json, "validVersions")?)? else {
            return Ok(None);
        };
        let flexible = match json.get("flexibleVersions").and_then(Value::as_str) {
            Some(s) => parse_versions(s)?,
            None => None,
        };
        let api_key = json
            .get("apiKey")
            .and_then(Value::as_i64)
            .map(|k| i16::try_from(k).map_err(|_| "apiKey out of range"))
            .transpose()?;
        let latest_unstable = json
            .get("latestVersionUnstable")
            .and_then(Value::as_bool)
            .unwrap_or(false);

        let mut structs = Vec::new();
        let empty = Vec::new();
        let top_fields = json
            .get("fields")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        let fields = parse_fields(top_fields, &mut structs)?;
        structs.insert(
            0,
            Struct {
                name: name.clone(),
                fields,
            },
        );
        if let Some(common) = json.get("commonStructs").and_then(Value::as_array) {
            for s in common {
                let struct_name = str_field(s, "name")?;
                let fields = s.get("fields").and_then(Value::as_array).unwrap_or(&empty);
                let fields = parse_fields(fields, &mut structs)?;
                structs.push(Struct {
                    name: struct_name,
                    fields,
                });
            }
        }
        Ok(Some(Message {
            name,
            kind,
            api_key,
            valid,
            flexible,
            latest_unstable,
            structs,
        }))
    }

    pub fn find_struct(&self, name: &str) -> Option<&Struct> {
        self.structs.iter().find(|s| s.name == name)
    }
}

fn parse_fields(fields: &[Value], structs: &mut Vec<Struct>) -> Result<Vec<Field>, String> {
    let mut out = Vec::new();
    for f in fields {
        let name = str_field(f, "name")?;
        let type_text = str_field(f, "type")?;
        let ty = parse_type(&type_text)?;
        if let Some(children) = f.get("fields").and_then(Value::as_array) {
            let struct_name = match &ty {
                Type::Struct(n) => n.clone(),
                Type::Array(inner) => match inner.as_ref() {
                    Type::Struct(n) => n.clone(),
                    _ => return Err(format!("{name}: fields on a non-struct array")),
                },
                _ => return Err(format!("{name}: fields on a primitive")),
            };
            let child_fields = parse_fields(children, structs)?;
            structs.push(Struct {
                name: struct_name,
                fields: child_fields,
            });
        }
        let versions = parse_versions(&str_field(f, "versions")?)?;
        let nullable = match f.get("nullableVersions").and_then(Value::as_str) {
            Some(s) => parse_versions(s)?,
            None => None,
        };
        let tag = f
            .get("tag")
            .and_then(Value::as_u64)
            .map(|t| u32::try_from(t).map_err(|_| "tag out of range"))
            .transpose()?;
        let tagged = match f.get("taggedVersions").and_then(Value::as_str) {
            Some(s) => parse_versions(s)?,
            None => None,
        };
        let default = f.get("default").map(|d| match d {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let ignorable = f.get("ignorable").and_then(Value::as_bool).unwrap_or(false);
        let flexible = f
            .get("flexibleVersions")
            .and_then(Value::as_str)
            .map(parse_versions)
            .transpose()?;
        out.push(Field {
            name,
            ty,
            versions,
            nullable,
            tag,
            tagged,
            default,
            ignorable,
            flexible,
        });
    }
    Ok(out)
}

fn parse_type(text: &str) -> Result<Type, String> {
    if let Some(inner) = text.strip_prefix("[]") {
        return Ok(Type::Array(Box::new(parse_type(inner)?)));
    }
    Ok(match text {
        "bool" => Type::Bool,
        "int8" => Type::Int8,
        "int16" => Type::Int16,
        "uint16" => Type::Uint16,
        "int32" => Type::Int32,
        "uint32" => Type::Uint32,
        "int64" => Type::Int64,
        "float64" => Type::Float64,
        "string" => Type::String,
        "uuid" => Type::Uuid,
        "bytes" => Type::Bytes,
        "records" => Type::Records,
        s if s.starts_with(|c: char| c.is_ascii_uppercase()) => Type::Struct(s.to_string()),
        other => return Err(format!("unknown type {other}")),
    })
}

/// Parses "none", "3", "3+" or "0-2".
pub fn parse_versions(text: &str) -> Result<Versions, String> {
    let text = text.trim();
    if text == "none" {
        return Ok(None);
    }
    let num = |s: &str| {
        s.trim()
            .parse::<i16>()
            .map_err(|_| format!("bad version range {text}"))
    };
    if let Some(lo) = text.strip_suffix('+') {
        return Ok(Some((num(lo)?, i16::MAX)));
    }
    if let Some((lo, hi)) = text.split_once('-') {
        return Ok(Some((num(lo)?, num(hi)?)));
    }
    let v = num(text)?;
    Ok(Some((v, v)))
}

fn str_field(v: &Value, key: &str) -> Result<String, String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("missing string field {key}"))
}

/// Removes `//` comments that stand outside JSON strings.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let mut cut = line.len();
        let bytes = line.as_bytes();
        for i in 0..bytes.len() {
            let c = bytes[i];
            if in_string {
                if escaped {
                    escaped = false;
                } else if c == b'\\' {
                    escaped = true;
                } else if c == b'"' {
                    in_string = false;
                }
            } else if c == b'"' {
                in_string = true;
            } else if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
                cut = i;
                break;
            }
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

/// `ThrottleTimeMs` → `throttle_time_ms`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = if i > 0 { Some(chars[i - 1]) } else { None };
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_ascii_uppercase() => next.is_some_and(|n| n.is_ascii_lowercase()),
                _ => false,
            };
            if boundary {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

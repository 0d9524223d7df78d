//! Renders Kafka's `getErrorResponse` for every request, the answer a request gets when it
//! fails whole with one error, into each request's own file.
//!
//! A response with a top-level `ErrorCode` in every version is answered mechanically: that
//! code, and the JSON defaults elsewhere. The others echo what the request names (each topic,
//! partition, group or resource with the error), as `shapes::SHAPES` describes; a request
//! with neither gets no answer, so serving it does not compile until it has a shape.

use crate::model::{Field, Message, MessageKind, Struct, Type, Versions, snake_case};
use crate::render::{cond, covers, field_ident, intersect};
use crate::shapes::{Echo, SHAPES, Shape};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A request's error answer, for its own file: the imports it needs and its `ErrorResponse`
/// (and `ItemErrors`) impls.
#[derive(Default)]
pub struct ErrorAnswer {
    pub uses: String,
    pub impls: String,
}

/// Each answered request's error answer, by request name; and the test macros listing them,
/// for the index (`mod.rs`).
pub fn render(messages: &[Message]) -> (BTreeMap<String, ErrorAnswer>, String) {
    for shape in SHAPES {
        assert!(
            messages
                .iter()
                .any(|m| m.name == format!("{}Request", shape.api)),
            "shapes: no request {}Request",
            shape.api
        );
    }
    let mut impls = BTreeMap::new();
    let (mut answered, mut itemized) = (Vec::new(), Vec::new());
    for request in messages.iter().filter(|m| m.kind == MessageKind::Request) {
        let base = request.name.trim_end_matches("Request");
        let response = messages
            .iter()
            .find(|m| m.kind == MessageKind::Response && m.api_key == request.api_key)
            .unwrap_or_else(|| panic!("{} has no response", request.name));
        let shape = SHAPES.iter().find(|s| s.api == base);
        let mechanical = Shape {
            api: "",
            top: &[],
            items: &[],
            distinct: None,
        };
        let shape = match shape {
            Some(shape) => shape,
            None if top_error_always(response) => &mechanical,
            None => continue,
        };
        let api = Api {
            request,
            response,
            shape,
        };
        let mut answer = ErrorAnswer::default();
        api.render(&mut answer.uses, &mut answer.impls)
            .unwrap_or_else(|e| panic!("shapes: {base}: {e}"));
        impls.insert(request.name.clone(), answer);
        answered.push(request.name.as_str());
        if !shape.items.is_empty() {
            itemized.push(request.name.as_str());
        }
    }
    let mut lists = String::new();
    for (name, doc, list) in [
        ("with_error_responses", "has an error answer", &answered),
        ("with_item_errors", "answers item by item", &itemized),
    ] {
        writeln!(
            lists,
            "\n/// Calls `$callback!(Request, ...)` with every request that {doc} (tests).\n#[cfg(test)]\nmacro_rules! {name} {{\n    ($callback:ident) => {{\n        $callback!({});\n    }};\n}}\n#[cfg(test)]\npub(crate) use {name};",
            list.join(", ")
        )
        .ok();
    }
    (impls, lists)
}

/// True when the response has a top-level `ErrorCode` in every valid version.
fn top_error_always(response: &Message) -> bool {
    response.structs[0].fields.iter().any(|f| {
        f.name == "ErrorCode"
            && f.tag.is_none()
            && f.versions
                .is_some_and(|(lo, hi)| lo <= response.valid.0 && hi >= response.valid.1)
    })
}

struct Api<'a> {
    request: &'a Message,
    response: &'a Message,
    shape: &'a Shape,
}

impl Api<'_> {
    /// Appends the impls to `out` and the imports they need to `uses`.
    fn render(&self, uses: &mut String, out: &mut String) -> Result<(), String> {
        let request = &self.request.name;
        let module = snake_case(&self.response.name);
        let response = &format!("{module}::{}", self.response.name);
        let top = &self.response.structs[0];
        let traits = if self.shape.items.is_empty() {
            "ErrorResponse"
        } else {
            "{ErrorResponse, ItemErrors}"
        };
        writeln!(
            uses,
            "use crate::protocol::messages::{module};\nuse crate::protocol::ErrorCode;\nuse crate::protocol::error_response::{traits};"
        )
        .ok();
        writeln!(
            out,
            "\n/// Kafka's `getErrorResponse`: the answer when the request fails whole with one error."
        )
        .ok();
        writeln!(out, "impl ErrorResponse for {request} {{").ok();
        writeln!(out, "    type Response = {response};\n").ok();
        writeln!(
            out,
            "    fn error_response_with(&self, version: i16, error: ErrorCode, message: Option<&str>) -> {response} {{"
        )
        .ok();
        writeln!(out, "        let mut response = {response}::default();").ok();
        if let Some(field) = top.fields.iter().find(|f| f.name == "ErrorCode") {
            self.assign(out, field, "response", "error.code()")?;
            self.assign_message(out, top, "response")?;
        }
        for (name, value) in self.shape.top {
            let field = find_field(top, name)?;
            self.assign(out, field, "response", value)?;
        }
        let request_top = &self.request.structs[0];
        let mut items = String::new();
        for echo in self.shape.items {
            let mut code = String::new();
            self.echo(&mut code, echo, request_top, top, "self", "response")?;
            let whole = cond(Some(echo.whole), self.response.valid);
            writeln!(out, "        {}", guarded(&whole, &code)).ok();
            items.push_str(&code);
        }
        if let Some((array, key)) = self.shape.distinct {
            let array = field_ident(&find_field(top, array)?.name);
            let key = field_ident(key);
            let distinct = format!(
                "response.{array}.sort_by(|a, b| a.{key}.cmp(&b.{key})); response.{array}.dedup_by(|a, b| a.{key} == b.{key});\n"
            );
            out.push_str(&distinct);
            items.push_str(&distinct);
        }
        writeln!(out, "        response\n    }}\n}}\n").ok();
        if self.shape.items.is_empty() {
            return Ok(());
        }

        writeln!(out, "impl ItemErrors for {request} {{").ok();
        writeln!(
            out,
            "    fn item_errors_with(&self, version: i16, error: ErrorCode, message: Option<&str>) -> {response} {{"
        )
        .ok();
        writeln!(out, "        let mut response = {response}::default();").ok();
        out.push_str(&items);
        writeln!(out, "        response\n    }}\n").ok();
        writeln!(
            out,
            "    fn append_items(response: &mut {response}, more: {response}) {{"
        )
        .ok();
        let mut appended: Vec<&str> = Vec::new();
        for echo in self.shape.items {
            if appended.contains(&echo.to) {
                continue;
            }
            appended.push(echo.to);
            let field = find_field(top, echo.to)?;
            let ident = field_ident(&field.name);
            if field.nullable.is_some() {
                writeln!(
                    out,
                    "        if let Some(more) = more.{ident} {{ response.{ident}.get_or_insert_with(Vec::new).extend(more); }}"
                )
                .ok();
            } else {
                writeln!(out, "        response.{ident}.extend(more.{ident});").ok();
            }
        }
        writeln!(out, "    }}\n}}\n").ok();
        Ok(())
    }

    /// Appends to `target`'s array `echo.to` one element per element of `source`'s `echo.from`.
    fn echo(
        &self,
        out: &mut String,
        echo: &Echo,
        from_struct: &Struct,
        to_struct: &Struct,
        source: &str,
        target: &str,
    ) -> Result<(), String> {
        let from = find_field(from_struct, echo.from)?;
        let to = find_field(to_struct, echo.to)?;
        let Type::Array(from_elem) = &from.ty else {
            return Err(format!("{} is not an array", echo.from));
        };
        let Type::Array(to_elem) = &to.ty else {
            return Err(format!("{} is not an array", echo.to));
        };
        let Type::Struct(to_name) = to_elem.as_ref() else {
            return Err(format!("{} is not an array of structs", echo.to));
        };
        let to_elem_struct = self
            .response
            .find_struct(to_name)
            .ok_or_else(|| format!("no struct {to_name}"))?;
        let from_elem_struct = match from_elem.as_ref() {
            Type::Struct(name) => Some(
                self.request
                    .find_struct(name)
                    .ok_or_else(|| format!("no struct {name}"))?,
            ),
            _ => None,
        };
        let iter = if from.nullable.is_some() {
            format!("{source}.{}.iter().flatten()", field_ident(&from.name))
        } else {
            format!("{source}.{}.iter()", field_ident(&from.name))
        };
        let depth = source.matches("item").count() + 1;
        let item = format!("item{depth}");
        let elem = format!("out{depth}");
        let valid = self.response.valid;
        let mut body = String::new();
        let module = snake_case(&self.response.name);
        writeln!(body, "let mut {elem} = {module}::{to_name}::default();").ok();
        for (to_field, from_field) in echo.copy {
            let to_field = find_field(to_elem_struct, to_field)?;
            let value = match (*from_field, from_elem_struct) {
                ("", _) => {
                    if **from_elem != to_field.ty {
                        return Err(format!(
                            "{} and {} differ in type",
                            echo.from, to_field.name
                        ));
                    }
                    wrap(to_field, &format!("{item}.clone()"), false, valid)
                }
                (name, Some(s)) => {
                    let from_field = find_field(s, name)?;
                    if from_field.ty != to_field.ty {
                        return Err(format!("{name} and {} differ in type", to_field.name));
                    }
                    wrap(
                        to_field,
                        &format!("{item}.{}.clone()", field_ident(&from_field.name)),
                        from_field.nullable.is_some(),
                        valid,
                    )
                }
                (name, None) => return Err(format!("{name}: {} holds no structs", echo.from)),
            };
            self.assign(&mut body, to_field, &elem, &value)?;
        }
        if let Some(error) = echo.error {
            let field = find_field(to_elem_struct, error)?;
            self.assign(&mut body, field, &elem, "error.code()")?;
            self.assign_message(&mut body, to_elem_struct, &elem)?;
        }
        for (name, value) in echo.set {
            let field = find_field(to_elem_struct, name)?;
            self.assign(&mut body, field, &elem, value)?;
        }
        for child in echo.children {
            let from_child_struct =
                from_elem_struct.ok_or_else(|| format!("{} holds no structs", echo.from))?;
            self.echo(
                &mut body,
                child,
                from_child_struct,
                to_elem_struct,
                &item,
                &elem,
            )?;
        }
        writeln!(body, "{elem}").ok();
        let to_ident = field_ident(&to.name);
        let collect = format!("{iter}.map(|{item}| {{ {body} }})");
        let push = if to.nullable.is_some() {
            format!("{target}.{to_ident}.get_or_insert_with(Vec::new).extend({collect});")
        } else {
            format!("{target}.{to_ident}.extend({collect});")
        };
        let present = cond(presence(to), self.response.valid);
        writeln!(out, "{}", guarded(&present, &push)).ok();
        Ok(())
    }

    /// `target.ErrorMessage = message`, where the struct has one beside its error code.
    fn assign_message(&self, out: &mut String, s: &Struct, target: &str) -> Result<(), String> {
        let Some(field) = s.fields.iter().find(|f| f.name == "ErrorMessage") else {
            return Ok(());
        };
        let value = wrap(
            field,
            "message.map(str::to_string)",
            true,
            self.response.valid,
        );
        self.assign(out, field, target, &value)
    }

    /// `target.field = value`, in the versions that carry the field (a field a version lacks
    /// must keep its default, or the encoding fails).
    fn assign(
        &self,
        out: &mut String,
        field: &Field,
        target: &str,
        value: &str,
    ) -> Result<(), String> {
        let present = cond(presence(field), self.response.valid);
        if present == "false" {
            return Err(format!("{} is in no version", field.name));
        }
        let assignment = format!("{target}.{} = {value};", field_ident(&field.name));
        writeln!(out, "{}", guarded(&present, &assignment)).ok();
        Ok(())
    }
}

/// `code`, run only when `condition` (a Rust expression over `version`) holds.
fn guarded(condition: &str, code: &str) -> String {
    if condition == "true" {
        code.to_string()
    } else {
        format!("if {condition} {{ {code} }}")
    }
}

/// The versions in which a field is on the wire.
fn presence(f: &Field) -> Versions {
    if f.tag.is_some() {
        intersect(f.versions, f.tagged)
    } else {
        f.versions
    }
}

/// A copied value as the target field holds it: null only in versions where the target may be
/// null (elsewhere ""), as Kafka answers a topic named only by its id.
fn wrap(to: &Field, value: &str, from_nullable: bool, valid: (i16, i16)) -> String {
    match (from_nullable, to.nullable.is_some()) {
        (false, true) => format!("Some({value})"),
        (true, false) => format!("{value}.unwrap_or_default()"),
        (true, true) if !covers(to.nullable, intersect(presence(to), Some(valid))) => format!(
            "if {} {{ {value} }} else {{ Some({value}.unwrap_or_default()) }}",
            cond(to.nullable, valid)
        ),
        _ => value.to_string(),
    }
}

fn find_field<'s>(s: &'s Struct, name: &str) -> Result<&'s Field, String> {
    s.fields
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| format!("{} has no field {name} (fields: {})", s.name, names(s)))
}

fn names(s: &Struct) -> String {
    s.fields
        .iter()
        .map(|f| snake_case(&f.name))
        .collect::<Vec<_>>()
        .join(", ")
}

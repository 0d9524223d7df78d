//! What the admin subcommands print: tables with a title, as aligned text or as JSON (one
//! array of objects per table; an object of arrays by title when a command prints several).

use serde_json::{Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Table,
    Json,
}

pub struct Table {
    pub title: &'static str,
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<Value>>,
}

impl Table {
    pub fn new(title: &'static str, columns: &[&'static str]) -> Table {
        Table {
            title,
            columns: columns.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<Value>) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push(cells);
    }

    /// The rows as JSON objects keyed by column names (lower case, spaces as underscores).
    fn to_json(&self) -> Value {
        let keys: Vec<String> = self
            .columns
            .iter()
            .map(|c| c.to_ascii_lowercase().replace([' ', '-'], "_"))
            .collect();
        Value::Array(
            self.rows
                .iter()
                .map(|row| {
                    let object: Map<String, Value> =
                        keys.iter().cloned().zip(row.iter().cloned()).collect();
                    Value::Object(object)
                })
                .collect(),
        )
    }

    /// Aligned columns under upper-case headers, as Kafka's tools print them.
    fn to_text(&self) -> String {
        let cell = |v: &Value| match v {
            Value::String(s) => s.clone(),
            Value::Null => "-".to_string(),
            other => other.to_string(),
        };
        let header: Vec<String> = self.columns.iter().map(|c| c.to_uppercase()).collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(cell).collect())
            .collect();
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].chars().count())
                    .chain([header[i].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            padded.join("  ").trim_end().to_string()
        };
        let mut text = line(&header);
        for r in &rows {
            text.push('\n');
            text.push_str(&line(r));
        }
        text
    }
}

/// Prints `tables` in `output`'s format.
pub fn print(output: Output, tables: &[Table]) {
    match output {
        Output::Json => {
            let value = match tables {
                [one] => one.to_json(),
                many => Value::Object(
                    many.iter()
                        .map(|t| (t.title.to_string(), t.to_json()))
                        .collect(),
                ),
            };
            println!("{value:#}");
        }
        Output::Table => {
            let titled = tables.len() > 1;
            for (i, t) in tables.iter().enumerate() {
                if i > 0 {
                    println!();
                }
                if titled {
                    println!("{}:", t.title);
                }
                println!("{}", t.to_text());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Table {
        let mut t = Table::new("topics", &["name", "partitions", "log start"]);
        t.row(vec![json!("orders"), json!(12), Value::Null]);
        t.row(vec![json!("a"), json!(1), json!(0)]);
        t
    }

    #[test]
    fn text_aligns_columns_under_headers() {
        assert_eq!(
            sample().to_text(),
            "NAME    PARTITIONS  LOG START\norders  12          -\na       1           0"
        );
    }

    #[test]
    fn json_keys_are_the_column_names() {
        assert_eq!(
            sample().to_json(),
            json!([
                {"name": "orders", "partitions": 12, "log_start": null},
                {"name": "a", "partitions": 1, "log_start": 0},
            ])
        );
    }
}

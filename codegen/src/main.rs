//! Generates `src/protocol/messages/` from Apache Kafka's JSON message definitions.
//!
//! Usage: `cargo run -p floe-codegen -- <kafka-messages dir> <output dir>`
//!
//! Only names, types, versions, tags and defaults are carried into the generated code; the
//! specs' prose stays out of the repository. The output is committed so that the project builds
//! without the specs; CI regenerates it when the specs are present and fails on a difference.

mod model;
mod render;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: floe-codegen <kafka-messages dir> <output dir>");
        return ExitCode::from(2);
    }
    match run(Path::new(&args[1]), Path::new(&args[2])) {
        Ok(count) => {
            println!("generated {count} messages into {}", args[2]);
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("floe-codegen: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(spec_dir: &Path, out_dir: &Path) -> Result<usize, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(spec_dir)
        .map_err(|e| format!("cannot read {}: {e}", spec_dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();

    let mut messages = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let message =
            model::Message::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(message) = message {
            messages.push(message);
        }
    }
    messages.sort_by(|a, b| a.name.cmp(&b.name));

    if out_dir.exists() {
        std::fs::remove_dir_all(out_dir)
            .map_err(|e| format!("cannot clear {}: {e}", out_dir.display()))?;
    }
    std::fs::create_dir_all(out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;

    let mut written = Vec::new();
    for message in &messages {
        let file = out_dir.join(format!("{}.rs", model::snake_case(&message.name)));
        std::fs::write(&file, render::message_file(message))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        written.push(file);
    }
    for (name, contents) in render::index_files(&messages) {
        let file = out_dir.join(name);
        std::fs::write(&file, contents)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        written.push(file);
    }

    let status = Command::new("rustfmt")
        .args(["--edition", "2024"])
        .args(&written)
        .status()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    if !status.success() {
        return Err("rustfmt failed on the generated code".into());
    }
    Ok(messages.len())
}

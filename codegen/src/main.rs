//! Generates `src/protocol/messages/` from Apache Kafka's JSON message definitions.
//!
//! Usage: `cargo run -p floe-codegen -- <kafka-messages dir> <output dir>`
//!
//! Only names, types, versions, tags and defaults are carried into the generated code; the
//! specs' prose stays out of the repository. The output is committed so that the project builds
//! without the specs; CI regenerates it when the specs are present and fails on a difference.

mod error_responses;
mod model;
mod render;
mod shapes;

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

    // Generated and formatted beside the output first, then copied over only where a file
    // changed: unchanged files keep their modification times, so regenerating (as the test
    // command does every run) does not make cargo rebuild the crate.
    let scratch = out_dir.with_extension("generating");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)
            .map_err(|e| format!("cannot clear {}: {e}", scratch.display()))?;
    }
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;

    let (error_responses, answered) = error_responses::render(&messages);
    let mut written = Vec::new();
    for message in &messages {
        let name = format!("{}.rs", model::snake_case(&message.name));
        let mut contents = render::message_file(message);
        if let Some(answer) = error_responses.get(&message.name) {
            contents =
                contents.replacen(render::USES, &format!("{}{}", render::USES, answer.uses), 1);
            contents.push_str(&answer.impls);
        }
        written.push((name, contents));
    }
    let index = render::index_files(&messages, &answered);
    written.extend(
        index
            .into_iter()
            .map(|(name, contents)| (name.to_string(), contents)),
    );
    for (name, contents) in &written {
        let file = scratch.join(name);
        std::fs::write(&file, contents)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    }

    let status = Command::new("rustfmt")
        .args(["--edition", "2024"])
        .args(written.iter().map(|(name, _)| scratch.join(name)))
        .status()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    if !status.success() {
        return Err("rustfmt failed on the generated code".into());
    }
    sync_dir(&scratch, out_dir)?;
    std::fs::remove_dir_all(&scratch)
        .map_err(|e| format!("cannot remove {}: {e}", scratch.display()))?;
    Ok(messages.len())
}

/// Makes `to` hold exactly the files of `from`, writing only those whose contents differ.
fn sync_dir(from: &Path, to: &Path) -> Result<(), String> {
    let names = |dir: &Path| -> Result<Vec<std::ffi::OsString>, String> {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        Ok(entries
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect())
    };
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let wanted = names(from)?;
    for name in names(to)? {
        if !wanted.contains(&name) {
            let stale = to.join(&name);
            std::fs::remove_file(&stale)
                .map_err(|e| format!("cannot remove {}: {e}", stale.display()))?;
        }
    }
    for name in wanted {
        let (source, target) = (from.join(&name), to.join(&name));
        let contents =
            std::fs::read(&source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
        if std::fs::read(&target).ok().as_ref() != Some(&contents) {
            std::fs::write(&target, contents)
                .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
        }
    }
    Ok(())
}

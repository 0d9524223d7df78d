//! The `floe` command line beyond `serve`: one file per subcommand.

pub mod bench;

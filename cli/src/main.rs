//! `raycast`: render scenes to PNG and answer JSON-lines ray queries.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exact, fast ray casting: renders scenes and answers JSON-lines queries.
#[derive(Parser)]
#[command(name = "raycast", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Render the built-in showcase scene (the default when no command is given).
    Demo {
        /// Where to write the PNG.
        #[arg(short, long, default_value = "raycast-demo.png")]
        output: PathBuf,
    },
    /// Answer JSON-lines queries from FILE (or stdin), one result per line.
    Query {
        /// The queries; standard input when absent.
        file: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Demo { output: PathBuf::from("raycast-demo.png") }) {
        Command::Demo { output } => {
            eprintln!("demo not yet written: {}", output.display());
            ExitCode::SUCCESS
        }
        Command::Query { file } => {
            eprintln!("query not yet written: {file:?}");
            ExitCode::FAILURE
        }
    }
}

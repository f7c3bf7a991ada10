//! `raycast`: render scenes to PNG and answer JSON-lines ray queries.

mod demo;
mod query;
mod render;

use clap::{Parser, Subcommand};
use std::io::{BufReader, IsTerminal};
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
        /// Image width in pixels.
        #[arg(long, default_value_t = 1280)]
        width: u32,
        /// Image height in pixels.
        #[arg(long, default_value_t = 720)]
        height: u32,
    },
    /// Answer JSON-lines queries from FILE (or stdin), one result per line.
    Query {
        /// The queries; standard input when absent.
        file: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default = Command::Demo { output: PathBuf::from("raycast-demo.png"), width: 1280, height: 720 };
    match cli.command.unwrap_or(default) {
        Command::Demo { output, width, height } => match demo::run(&output, width.max(1), height.max(1)) {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("raycast demo: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Query { file } => run_query(file),
    }
}

/// `raycast query [FILE]`: exit status 0 when every line succeeded, 1 otherwise.
fn run_query(file: Option<PathBuf>) -> ExitCode {
    let stdout = std::io::stdout().lock();
    let result = match &file {
        Some(path) => match std::fs::File::open(path) {
            Ok(f) => query::run(BufReader::new(f), std::io::BufWriter::new(stdout), false),
            Err(e) => {
                eprintln!("raycast query: cannot open {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        },
        None => {
            let stdin = std::io::stdin();
            // Interactive use answers each line at once; piped input is buffered.
            let interactive = stdin.is_terminal();
            query::run(stdin.lock(), std::io::BufWriter::new(stdout), interactive)
        }
    };
    match result {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("raycast query: {e}");
            ExitCode::FAILURE
        }
    }
}

//! `raycast`: render scenes to PNG and answer JSON-lines ray queries.

mod demo;
mod query;
mod render;
mod scene_file;

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
        /// Worker threads (default: every core).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Render a JSON scene file to PNG (the format: `docs/scene-format.md`).
    Render {
        /// The scene file.
        scene: PathBuf,
        /// Where to write the PNG.
        #[arg(short, long, default_value = "raycast-render.png")]
        output: PathBuf,
        /// Image width in pixels (default: the scene's, else 960).
        #[arg(long)]
        width: Option<u32>,
        /// Image height in pixels (default: the scene's, else 540).
        #[arg(long)]
        height: Option<u32>,
        /// Worker threads (default: every core).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Answer JSON-lines queries from FILE (or stdin), one result per line.
    Query {
        /// The queries; standard input when absent.
        file: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default =
        Command::Demo { output: PathBuf::from("raycast-demo.png"), width: 1280, height: 720, threads: None };
    match cli.command.unwrap_or(default) {
        Command::Demo { output, width, height, threads } => {
            match demo::run(&output, width.max(1), height.max(1), threads.unwrap_or_else(cores)) {
                Ok(line) => {
                    println!("{line}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("raycast demo: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Render { scene, output, width, height, threads } => {
            match run_render(&scene, &output, width, height, threads.unwrap_or_else(cores)) {
                Ok(line) => {
                    println!("{line}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("raycast render: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Query { file } => run_query(file),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `raycast render`: a progress bar on a terminal, none when piped.
fn run_render(
    scene: &std::path::Path,
    output: &std::path::Path,
    width: Option<u32>,
    height: Option<u32>,
    threads: usize,
) -> Result<String, String> {
    let loaded = scene_file::load(scene)?;
    let size = (width.unwrap_or(loaded.size.0).max(1), height.unwrap_or(loaded.size.1).max(1));
    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(u64::from(size.1));
        if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} rows {elapsed}") {
            bar.set_style(style);
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let image = loaded.render(size, threads.max(1), &|rows| bar.inc(rows));
    bar.finish_and_clear();
    render::write_png(&image, output)?;
    Ok(render::summary(&image, output))
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

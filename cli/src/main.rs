//! The `nonsmooth` command-line tool. See `nonsmooth --help`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}

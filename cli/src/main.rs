//! The `nonsmooth` command-line tool. See `nonsmooth --help`.

// Doc comments here are the command's help text, where `[parameters]` and
// `[[plots]]` name scenario tables, not Rust items.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
